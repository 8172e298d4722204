// The embedded folder `corpus migrate` copies from (D33), opened read-only (nothing written into
// the folder: no SQLite side file, no native library copy) and checked before
// anything is written to the target: no service running on it, its schema this version's, every
// user's data key opened by the master key the nodes will use, and every chunk's text kept.
import { constants, Database } from "bun:sqlite";
import { existsSync, readdirSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { UserKeys } from "../crypto/user-keys";
import { MIGRATIONS } from "../migrations";
import { DATABASE_FILE, loadSqliteVecFromScratch } from "../store/database";
import { appliedMigrations } from "../store/migrations";
import { MIGRATE_MESSAGES, MigrateError } from "./errors";

/** The processes other than this one holding `file` open (Linux: /proc); those this user may not look into are not seen. */
export function processesHolding(file: string): number[] {
  let target: string;
  try {
    target = realpathSync(file);
  } catch {
    return [];
  }
  const found: number[] = [];
  let pids: string[];
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return [];
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) {
          found.push(Number(pid));
          break;
        }
      } catch {
        // closed meanwhile
      }
    }
  }
  return found;
}

const statOrUndefined = (path: string) => statSync(path, { throwIfNoEntry: false });

/** What the folder's data must be to be copied: its identity (when its database was made) and the checks passed. */
export interface OpenedSource {
  db: Database;
  /** The database's creation time (meta created_at): the same folder in a resumed copy. */
  identity: string;
  /** The users' data keys, opened from the folder's rows with the master key. */
  keys: UserKeys;
  /** Users whose data keys the master key opened. */
  users: number;
}

/** Opens `dataDir`'s database read-only for the copy; refuses what cannot be copied whole, saying what to do. */
export function openSource(dataDir: string, masterKey: Buffer): OpenedSource {
  const file = join(dataDir, DATABASE_FILE);
  const holders = processesHolding(file);
  if (holders.length) throw new MigrateError(MIGRATE_MESSAGES.serviceRunning(dataDir, holders));
  if (!existsSync(file)) throw new MigrateError(MIGRATE_MESSAGES.noDatabase(dataDir));
  // Read as an immutable file: SQLite makes no -wal or -shm file (a read-only connection in WAL
  // mode otherwise would, and leave them), so the folder is not changed. Writes a server left in
  // the WAL (stopped without closing the database) would be unseen that way: refused instead.
  if (statOrUndefined(`${file}-wal`)?.size) throw new MigrateError(MIGRATE_MESSAGES.unclosedWal(dataDir, DATABASE_FILE));
  let db: Database;
  try {
    db = new Database(
      `file:${encodeURI(file).replaceAll("?", "%3F").replaceAll("#", "%23")}?immutable=1`,
      constants.SQLITE_OPEN_READONLY | constants.SQLITE_OPEN_URI,
    );
  } catch {
    throw new MigrateError(MIGRATE_MESSAGES.noDatabase(dataDir));
  }
  try {
    // The vectors' tables (vec0) are read through sqlite-vec, loaded from outside the folder.
    loadSqliteVecFromScratch(db);
    const applied = appliedMigrations(db);
    const known = MIGRATIONS.map((m) => m.id);
    const unknown = applied.filter((id) => !known.includes(id));
    if (unknown.length) throw new MigrateError(MIGRATE_MESSAGES.newerSchema(unknown));
    const pending = known.filter((id) => !applied.includes(id));
    if (pending.length) throw new MigrateError(MIGRATE_MESSAGES.olderSchema(dataDir, pending));
    const keys = new UserKeys(db, masterKey);
    const users = db
      .query<{ user_id: string }, []>("SELECT user_id FROM crypto_user_keys")
      .all()
      .map((r) => r.user_id);
    for (const user of users) {
      try {
        keys.keyFor(user, false);
      } catch {
        throw new MigrateError(MIGRATE_MESSAGES.wrongKey(dataDir));
      }
    }
    const identity = db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'created_at'").get()?.value ?? "";
    return { db, identity, keys, users: users.length };
  } catch (error) {
    db.close();
    throw error;
  }
}
