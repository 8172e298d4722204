// `corpus verify --from FILE` (D30): what restore checks before it writes anything and without a
// key: the trailer and the manifest, every member against its sha256, and a schema this corpus
// knows. The console prunes older backups only once a newer one passes it (console/backups.ts);
// an operator runs it on a copy kept off the server's disk.
import { closeSync, openSync } from "node:fs";
import { resolve } from "node:path";
import { readManifest } from "./container";
import { BACKUP_MESSAGES, BackupError } from "./errors";
import { lstatIfAny, readRange } from "./io";
import { type Manifest, unknownMigrations } from "./manifest";

export interface VerifyReport {
  from: string;
  bytes: number;
  created_at: string;
  corpus_version: string;
  files: Array<{ name: string; bytes: number; sha256: string }>;
  verified: true;
}

/** Checks the open backup `fd` (named `from` in messages): a BackupError says what is wrong. */
export function checkBackup(fd: number, from: string, knownMigrations: string[]): { manifest: Manifest; size: number } {
  const read = readManifest(fd, from);
  const unknown = unknownMigrations(read.manifest, knownMigrations);
  if (unknown.length) throw new BackupError(BACKUP_MESSAGES.newerSchema(from, unknown));
  for (const member of read.manifest.files) {
    if (readRange(fd, member.offset, member.bytes) !== member.sha256)
      throw new BackupError(BACKUP_MESSAGES.damaged(from, `${member.name} does not match its sha256`));
  }
  return read;
}

export function verifyBackup(file: string, knownMigrations: string[]): VerifyReport {
  const from = resolve(file);
  if (!lstatIfAny(from)?.isFile()) throw new BackupError(BACKUP_MESSAGES.noBackup(from));
  const fd = openSync(from, "r");
  try {
    const { manifest, size } = checkBackup(fd, from, knownMigrations);
    return {
      from,
      bytes: size,
      created_at: manifest.created_at,
      corpus_version: manifest.corpus_version,
      files: manifest.files.map((m) => ({ name: m.name, bytes: m.bytes, sha256: m.sha256 })),
      verified: true,
    };
  } finally {
    closeSync(fd);
  }
}
