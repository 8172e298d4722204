// `corpus restore --from FILE --data-dir DIR` (D30): into an empty or absent folder only. Before
// anything is written: the trailer and manifest, every member against its sha256, the schema (a
// newer one is refused), and the master key the server will use against the sealed signing key.
// Then the members are written to a folder of their own inside DIR, synced, the database checked
// (integrity_check, its schema against the manifest, every user's wrapped data key opened with
// the master key) and only then renamed into place. Any refusal leaves DIR as it was.
import { Database } from "bun:sqlite";
import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  renameSync,
  rmdirSync,
  rmSync,
} from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { opensSigningKey, SIGNING_KEY_FILE } from "../auth/signing-key";
import { DecryptError } from "../crypto/aead";
import { existingMasterKey, type MasterKeySource } from "../crypto/master-key";
import { UserKeys } from "../crypto/user-keys";
import { DATABASE_FILE } from "../store/database";
import { appliedMigrations } from "../store/migrations";
import { BACKUP_MESSAGES, BackupError, isNoSpace } from "./errors";
import { createPrivateFile, fsyncFolder, lstatIfAny, readRange, writeAll } from "./io";
import type { Manifest, MemberEntry } from "./manifest";
import { checkBackup } from "./verify";

export interface RestoreOptions {
  from: string;
  dataDir: string;
  /** Where the server will read its master key (CORPUS_MASTER_KEY, CORPUS_MASTER_KEY_FILE, the default file). */
  masterKey: Omit<MasterKeySource, "dataDir">;
  /** The migrations this corpus knows: a backup with others is from a newer schema. */
  knownMigrations: string[];
}

export interface RestoreReport {
  data_dir: string;
  from: string;
  backup_created_at: string;
  backup_corpus_version: string;
  files: Array<{ name: string; bytes: number }>;
  /** Migrations this corpus applies at the next start (the backup is from an older schema). */
  pending_migrations: string[];
  integrity_check: "ok";
  master_key: string;
  seconds: number;
}

export function restoreBackup(options: RestoreOptions): RestoreReport {
  const started = performance.now();
  const from = resolve(options.from);
  const target = resolve(options.dataDir);
  checkTarget(target);
  const key = existingMasterKey({ ...options.masterKey, dataDir: target });
  if (!key) throw new BackupError(BACKUP_MESSAGES.noKey(target));
  if (!lstatIfAny(from)?.isFile()) throw new BackupError(BACKUP_MESSAGES.noBackup(from));
  const fd = openSync(from, "r");
  try {
    const { manifest } = checkBackup(fd, from, options.knownMigrations);
    const signing = manifest.files.find((m) => m.name === SIGNING_KEY_FILE);
    if (signing && !opensSigningKey(readMember(fd, signing), key)) throw new BackupError(BACKUP_MESSAGES.wrongKey(from));
    const userKeys = writeChecked(fd, manifest, target, key, from);
    const opened = [...(signing ? ["the signing key"] : []), `${userKeys} user data key${userKeys === 1 ? "" : "s"}`].join(" and ");
    return {
      data_dir: target,
      from,
      backup_created_at: manifest.created_at,
      backup_corpus_version: manifest.corpus_version,
      files: manifest.files.map((m) => ({ name: m.name, bytes: m.bytes })),
      pending_migrations: options.knownMigrations.filter((id) => !manifest.schema.includes(id)),
      integrity_check: "ok",
      master_key: `opens ${opened}`,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    closeSync(fd);
  }
}

/** Absent, or an empty folder (not a link to one); anything else is refused. */
function checkTarget(target: string): void {
  const entry = lstatIfAny(target);
  if (!entry) return;
  if (!entry.isDirectory()) throw new BackupError(BACKUP_MESSAGES.targetNotFolder(target));
  if (readdirSync(target).length) throw new BackupError(BACKUP_MESSAGES.targetNotEmpty(target));
}

function readMember(fd: number, member: MemberEntry): string {
  const parts: Buffer[] = [];
  readRange(fd, member.offset, member.bytes, (chunk) => parts.push(Buffer.from(chunk)));
  return Buffer.concat(parts).toString("utf8");
}

/** Writes, checks and moves the members into `target`; returns how many user keys were opened. */
function writeChecked(fd: number, manifest: Manifest, target: string, key: Buffer, from: string): number {
  const created = !existsSync(target);
  if (created) mkdirSync(target, { recursive: true, mode: 0o700 });
  const staging = mkdtempSync(join(target, ".restore-"));
  const moved: string[] = [];
  try {
    for (const member of manifest.files) writeMember(fd, member, join(staging, member.name), from);
    const userKeys = checkDatabase(join(staging, DATABASE_FILE), manifest, key, from);
    // Nothing may have appeared in DIR meanwhile but our own staging folder.
    if (readdirSync(target).some((name) => name !== basename(staging))) throw new BackupError(BACKUP_MESSAGES.targetNotEmpty(target));
    for (const member of manifest.files) {
      renameSync(join(staging, member.name), join(target, member.name));
      moved.push(member.name);
    }
    rmSync(staging, { recursive: true, force: true });
    chmodSync(target, 0o700);
    fsyncFolder(target);
    if (created) fsyncFolder(dirname(target));
    return userKeys;
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    for (const name of moved) rmSync(join(target, name), { force: true });
    if (created) removeIfEmpty(target);
    if (isNoSpace(error)) throw new BackupError(BACKUP_MESSAGES.noSpace(target));
    throw error;
  }
}

/** Our own folder, and only once it is empty again (a failure here must not hide the first one). */
function removeIfEmpty(dir: string): void {
  try {
    rmdirSync(dir);
  } catch {
    // left in place: not empty, or already gone
  }
}

/** One member copied out (0600), hashed again as it is written, and synced. */
function writeMember(fd: number, member: MemberEntry, path: string, from: string): void {
  const out = createPrivateFile(path);
  try {
    let at = 0;
    const sum = readRange(fd, member.offset, member.bytes, (chunk) => {
      writeAll(out, chunk, at);
      at += chunk.length;
    });
    if (sum !== member.sha256) throw new BackupError(BACKUP_MESSAGES.damaged(from, `${member.name} changed while it was read`));
    fsyncSync(out);
  } finally {
    closeSync(out);
  }
}

/** integrity_check, the schema the manifest names, and every wrapped user key opened with `key`. */
function checkDatabase(path: string, manifest: Manifest, key: Buffer, from: string): number {
  const db = new Database(path, { readonly: true });
  try {
    const problems = db
      .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
      .all()
      .map((r) => r.integrity_check);
    if (problems.join() !== "ok")
      throw new BackupError(BACKUP_MESSAGES.damaged(from, `integrity_check: ${problems.slice(0, 3).join("; ")}`));
    if (appliedMigrations(db).join("\n") !== manifest.schema.join("\n"))
      throw new BackupError(BACKUP_MESSAGES.damaged(from, "its database's schema differs from its manifest"));
    const hasKeys = db.query("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'crypto_user_keys'").get();
    const users = hasKeys
      ? db
          .query<{ user_id: string }, []>("SELECT user_id FROM crypto_user_keys")
          .all()
          .map((r) => r.user_id)
      : [];
    const keys = new UserKeys(db, key);
    for (const user of users) {
      try {
        keys.keyFor(user, false);
      } catch (error) {
        if (error instanceof DecryptError) throw new BackupError(BACKUP_MESSAGES.wrongKey(from));
        throw error;
      }
    }
    return users.length;
  } finally {
    db.close();
  }
}
