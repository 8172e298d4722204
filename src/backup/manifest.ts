// The manifest of a backup (D30): which corpus wrote it, the schema of its database (the
// migrations applied), when, and where each member lies in the file with its size and sha256.
// Members come from a fixed list: the database and the signing key, never the master key (it is
// backed up apart), never DATA_DIR/native/ (rebuilt from the executable), nothing else.
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { SIGNING_KEY_FILE } from "../auth/signing-key";
import { DATABASE_FILE } from "../store/database";
import { SERVICE_VERSION } from "../version";
import { BACKUP_MESSAGES, BackupError } from "./errors";

export const BACKUP_FORMAT = "corpus-backup";
export const BACKUP_FORMAT_VERSION = 1;
/** What a backup may hold, in this order; the database is required and comes first. */
export const MEMBER_NAMES = [DATABASE_FILE, SIGNING_KEY_FILE] as const;

const Member = Type.Object(
  {
    name: Type.Union(MEMBER_NAMES.map((n) => Type.Literal(n))),
    offset: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0 }),
    sha256: Type.String({ pattern: "^[0-9a-f]{64}$" }),
  },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object({
  format: Type.Literal(BACKUP_FORMAT),
  format_version: Type.Integer({ minimum: 1 }),
  corpus_version: Type.String({ minLength: 1, maxLength: 64 }),
  created_at: Type.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?Z$" }),
  /** The migration ids applied to the database, in order: its schema version. */
  schema: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 10_000 }),
  files: Type.Array(Member, { minItems: 1, maxItems: MEMBER_NAMES.length }),
});

export type Manifest = Static<typeof ManifestSchema>;
export type MemberEntry = Manifest["files"][number];

export function buildManifest(schema: string[], files: MemberEntry[], now: Date): Manifest {
  return {
    format: BACKUP_FORMAT,
    format_version: BACKUP_FORMAT_VERSION,
    corpus_version: SERVICE_VERSION,
    created_at: now.toISOString(),
    schema,
    files,
  };
}

/**
 * The manifest read from `bytes`, checked field by field and against the file's layout: members
 * in the listed order, one after another from byte 0 up to the manifest at `membersEnd`.
 */
export function parseManifest(bytes: Uint8Array, membersEnd: number, file: string): Manifest {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(bytes).toString("utf8"));
  } catch {
    throw new BackupError(BACKUP_MESSAGES.damaged(file, "its manifest is not JSON"));
  }
  const version = (value as { format_version?: unknown } | null)?.format_version;
  if (typeof version === "number" && version > BACKUP_FORMAT_VERSION) {
    throw new BackupError(BACKUP_MESSAGES.newerSchema(file, [`backup format ${version}`]));
  }
  if (!Value.Check(ManifestSchema, value)) {
    const error = Value.Errors(ManifestSchema, value).First();
    throw new BackupError(BACKUP_MESSAGES.damaged(file, `manifest ${error?.path || "/"}: ${error?.message ?? "invalid"}`));
  }
  let offset = 0;
  let order = -1;
  for (const member of value.files) {
    const at = MEMBER_NAMES.indexOf(member.name);
    if (at <= order || member.offset !== offset || (order < 0 && member.name !== DATABASE_FILE)) {
      throw new BackupError(BACKUP_MESSAGES.damaged(file, `manifest lists ${member.name} out of place`));
    }
    order = at;
    offset += member.bytes;
  }
  if (offset !== membersEnd)
    throw new BackupError(BACKUP_MESSAGES.damaged(file, `its members end at byte ${offset}, the manifest begins at ${membersEnd}`));
  return value;
}

/** Migrations of the backup this corpus does not know: a newer schema, which it cannot open. */
export const unknownMigrations = (manifest: Manifest, known: string[]) => manifest.schema.filter((id) => !known.includes(id));
