// The one SQLite database of a data dir (D1): WAL mode, foreign keys, sqlite-vec loaded.
import { Database } from "bun:sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { dropPagesOnCollect } from "../limits/memory";
import { nativeLibraries } from "../native/assets";
import { materialize } from "../native/materialize";
import { ensureDataDir } from "./data-dir";
import { type Migration, migrate } from "./migrations";

export const DATABASE_FILE = "corpus.db";
/** How much of the database file SQLite reads through a memory mapping (address space, not memory). */
export const MMAP_BYTES = 1 << 30;

/** The database file wherever a data dir is, as the process's mappings name it. */
const DATABASE_PAGES = new RegExp(`/${RegExp.escape(DATABASE_FILE)}$`);

/** `dataDir` holds the checked copy of vec0.so the executable loads (src/native/materialize.ts). */
export function loadSqliteVec(db: Database, dataDir: string): void {
  db.loadExtension(materialize(nativeLibraries.sqliteVec, dataDir));
}

/**
 * sqlite-vec for a database opened read-only where nothing may be written (`corpus migrate`'s
 * source folder): the library itself under `bun run`; from the executable, a checked copy in a
 * private temporary folder, removed once loaded (the mapping stays while the process runs).
 */
export function loadSqliteVecFromScratch(db: Database): void {
  const scratch = mkdtempSync(join(tmpdir(), "corpus-native-"));
  try {
    db.loadExtension(materialize(nativeLibraries.sqliteVec, scratch));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * Whether `db` is read through its mapping (MMAP_BYTES) or through read calls into SQLite's own
 * 2 MB cache. While a folder embeds, every question maps its vectors and more again (~50 MB of
 * the file in RSS, Enron maildir: peak 290-298 MB while embedding, 249 read through calls); idle,
 * the mapping makes a question 7 ms faster. SQLite keeps a mapping a statement still reads from
 * until it is done.
 */
export function readThroughMapping(db: Database, mapped: boolean): void {
  db.exec(`PRAGMA mmap_size = ${mapped ? MMAP_BYTES : 0}`);
}

export function openDatabase(dataDir: string, migrations: Migration[]): Database {
  // Created (0700) and checked against other users before anything is written in it.
  ensureDataDir(dataDir);
  const db = new Database(join(dataDir, DATABASE_FILE), { create: true, strict: true });
  db.exec("PRAGMA journal_mode = WAL");
  db.exec("PRAGMA synchronous = NORMAL");
  db.exec("PRAGMA foreign_keys = ON");
  db.exec("PRAGMA busy_timeout = 5000");
  // Pages read from the file's mapping, not copied through read calls into a 2 MB page cache:
  // a question reads a folder's vectors whole (15 MB for the Enron mail), and /v1/query took
  // p50 49 ms instead of 42 (scripts/bench/query.ts). The pages are the file's, shared and
  // reclaimable: they count in RSS, not in the process's own memory, until long work's memory
  // check collects (it drops them from the process; the page cache keeps them).
  readThroughMapping(db, true);
  dropPagesOnCollect(DATABASE_PAGES);
  // Deleted rows are overwritten, not left readable in free pages.
  db.exec("PRAGMA secure_delete = ON");
  loadSqliteVec(db, dataDir);
  migrate(db, migrations);
  return db;
}
