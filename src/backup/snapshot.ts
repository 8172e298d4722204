// `corpus backup --out FILE` (D30): a consistent snapshot of the database taken while the service
// serves, with its manifest, in one file. VACUUM INTO from a read-only connection of our own: in
// WAL mode it reads one snapshot in a read transaction while the server goes on writing, keeps
// memory flat and leaves out freed pages (measured in the README against sqlite3_serialize,
// which holds the whole database in memory). The file is written under a temporary name in
// FILE's folder, synced, then put in place: FILE is the whole backup or nothing.
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, fsyncSync, linkSync, openSync, readFileSync, renameSync, rmSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { SIGNING_KEY_FILE } from "../auth/signing-key";
import { DATABASE_FILE } from "../store/database";
import { appliedMigrations } from "../store/migrations";
import { manifestAndTrailer } from "./container";
import { BACKUP_MESSAGES, BackupError, isNoSpace } from "./errors";
import { createPrivateFile, fsyncFolder, lstatIfAny, readRange, writeAll } from "./io";
import { buildManifest, type Manifest, type MemberEntry } from "./manifest";

/** What link() says where a file system has no hard links. */
const NO_LINKS = new Set(["EPERM", "ENOTSUP", "EOPNOTSUPP", "ENOSYS"]);
/** How long the snapshot waits for a lock (a WAL recovery by the server) before failing. */
const BUSY_TIMEOUT_MS = 10_000;

export interface BackupOptions {
  dataDir: string;
  out: string;
  /** Replace an existing FILE (atomically: the old one stays whole until the new one is). */
  force?: boolean;
  now?: () => Date;
}

export interface BackupReport {
  out: string;
  bytes: number;
  seconds: number;
  manifest: Manifest;
}

export function createBackup(options: BackupOptions): BackupReport {
  const started = performance.now();
  const out = resolve(options.out);
  const database = join(options.dataDir, DATABASE_FILE);
  if (!existsSync(database)) throw new BackupError(BACKUP_MESSAGES.noDatabase(options.dataDir));
  const existing = lstatIfAny(out);
  if (existing?.isDirectory()) throw new BackupError(BACKUP_MESSAGES.outIsFolder(out));
  if (existing && !options.force) throw new BackupError(BACKUP_MESSAGES.outExists(out));
  if (!lstatIfAny(dirname(out))?.isDirectory()) throw new BackupError(BACKUP_MESSAGES.outFolderMissing(dirname(out)));

  const partial = join(dirname(out), `.${basename(out)}.partial-${randomBytes(6).toString("hex")}`);
  let fd: number | undefined;
  try {
    // VACUUM INTO fills an empty file and keeps its mode: created here, 0600, never a link.
    closeSync(createPrivateFile(partial));
    snapshotInto(database, partial);
    const schema = migrationsOf(partial);
    fd = openSync(partial, "r+");
    const size = statSync(partial).size;
    const files: MemberEntry[] = [{ name: DATABASE_FILE, offset: 0, bytes: size, sha256: readRange(fd, 0, size) }];
    let end = size;
    const signingKey = join(options.dataDir, SIGNING_KEY_FILE);
    if (existsSync(signingKey)) {
      const bytes = readFileSync(signingKey);
      writeAll(fd, bytes, end);
      files.push({ name: SIGNING_KEY_FILE, offset: end, bytes: bytes.length, sha256: readRange(fd, end, bytes.length) });
      end += bytes.length;
    }
    const manifest = buildManifest(schema, files, (options.now ?? (() => new Date()))());
    const tail = manifestAndTrailer(manifest);
    writeAll(fd, tail, end);
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    putInPlace(partial, out, options.force === true);
    return { out, bytes: end + tail.length, seconds: (performance.now() - started) / 1000, manifest };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    // With the rollback journal VACUUM INTO keeps beside its target while it writes.
    for (const suffix of ["", "-journal"]) rmSync(`${partial}${suffix}`, { force: true });
    if (isNoSpace(error)) throw new BackupError(BACKUP_MESSAGES.noSpace(dirname(out)));
    throw error;
  }
}

/** One consistent snapshot of the live database; the connection is read-only, so the backup never writes it. */
function snapshotInto(database: string, target: string): void {
  const db = new Database(database, { readonly: true });
  try {
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.query("VACUUM INTO ?").run(target);
  } finally {
    db.close();
  }
}

/** The snapshot's schema version: the migrations applied to it, read from the copy itself. */
function migrationsOf(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return appliedMigrations(db);
  } finally {
    db.close();
  }
}

/** Renames the synced file to `out`; without --force a link refuses an `out` made meanwhile. */
function putInPlace(partial: string, out: string, force: boolean): void {
  if (force) renameSync(partial, out);
  else {
    let linked = false;
    try {
      linkSync(partial, out);
      linked = true;
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "EEXIST") throw new BackupError(BACKUP_MESSAGES.outExists(out));
      if (!NO_LINKS.has(code ?? "")) throw error;
    }
    if (linked) unlinkSync(partial);
    else {
      // A file system without hard links: checked again, then renamed (a narrow window, not none).
      if (existsSync(out)) throw new BackupError(BACKUP_MESSAGES.outExists(out));
      renameSync(partial, out);
    }
  }
  fsyncFolder(dirname(out));
}
