import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { existsSync, realpathSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectMemory } from "../../src/limits/memory";
import { ensureDataDir } from "../../src/store/data-dir";
import { DATABASE_FILE, openDatabase } from "../../src/store/database";
import { appliedMigrations, type Migration, migrate, storeMigrations } from "../../src/store/migrations";
import { tempDir } from "../helpers";
import { residentKb } from "../support/held-memory";

describe("store: the data dir's database (D1, D3)", () => {
  test("creates the data dir 0700 and tightens an existing one", () => {
    const dir = join(tempDir(), "nested", "data");
    ensureDataDir(dir);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const loose = tempDir();
    require("node:fs").chmodSync(loose, 0o755);
    ensureDataDir(loose);
    expect(statSync(loose).mode & 0o777).toBe(0o700);
  });

  test("refuses a data dir that is a file", () => {
    const file = join(tempDir(), "f");
    writeFileSync(file, "x");
    expect(() => ensureDataDir(file)).toThrow("is not a folder");
  });

  test("opens in WAL mode with foreign keys and sqlite-vec loaded", () => {
    const dir = tempDir();
    const db = openDatabase(dir, storeMigrations);
    expect(db.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()!.journal_mode).toBe("wal");
    expect(db.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()!.foreign_keys).toBe(1);
    expect(db.query<{ v: string }, []>("SELECT vec_version() AS v").get()!.v).toBe("v0.1.9");
    db.exec("CREATE VIRTUAL TABLE t USING vec0(user_id text partition key, embedding float[3])");
    db.query("INSERT INTO t (rowid, user_id, embedding) VALUES (1, 'a', ?), (2, 'a', ?), (3, 'b', ?)").run(
      new Float32Array([1, 0, 0]),
      new Float32Array([0, 1, 0]),
      new Float32Array([1, 0, 0]),
    );
    const rows = db
      .query<{ rowid: number }, [Float32Array]>("SELECT rowid FROM t WHERE embedding MATCH ? AND k = 5 AND user_id = 'a' ORDER BY distance")
      .all(new Float32Array([0.9, 0.1, 0]));
    expect(rows.map((r) => r.rowid)).toEqual([1, 2]);
    db.close();
    expect(existsSync(join(dir, DATABASE_FILE))).toBe(true);
  });

  test("the pages read through the file's mapping leave the process when long work collects; reads give the same rows", () => {
    const dir = tempDir();
    const db = openDatabase(dir, storeMigrations);
    db.exec("CREATE TABLE big (n INTEGER PRIMARY KEY, b BLOB)");
    const insert = db.query("INSERT INTO big (n, b) VALUES (?, ?)");
    for (let n = 0; n < 64; n++) insert.run(n, new Uint8Array(128 * 1024).fill(n));
    db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    // Each blob's byte near its end: read through its chain of overflow pages.
    const read = () => db.query<{ s: string }, []>("SELECT group_concat(hex(substr(b, 100000, 1)), '') AS s FROM big").get()!.s;
    const before = read();
    const file = realpathSync(join(dir, DATABASE_FILE));
    expect(residentKb(file)).toBeGreaterThanOrEqual(4096);
    collectMemory();
    expect(residentKb(file)).toBeLessThan(1024);
    expect(read()).toBe(before);
    db.close();
  });

  test("migrations run once, in order, and survive a reopen", () => {
    const dir = tempDir();
    const calls: string[] = [];
    const ms: Migration[] = [
      ...storeMigrations,
      { id: "test-001", up: (db) => (calls.push("1"), db.exec("CREATE TABLE a (x)")) },
      { id: "test-002", up: (db) => (calls.push("2"), db.exec("ALTER TABLE a ADD COLUMN y")) },
    ];
    openDatabase(dir, ms).close();
    const db = openDatabase(dir, ms);
    expect(calls).toEqual(["1", "2"]);
    expect(appliedMigrations(db)).toEqual(["store-001-meta", "test-001", "test-002"]);
    expect(db.query<{ value: string }, []>("SELECT value FROM meta WHERE key = 'created_at'").get()!.value).toMatch(/^\d{4}-/);
    db.close();
  });

  test("a failing migration is rolled back whole and stops the start", () => {
    const db = new Database(":memory:");
    const ms: Migration[] = [
      { id: "ok", up: (d) => d.exec("CREATE TABLE ok (x)") },
      { id: "broken", up: (d) => (d.exec("CREATE TABLE half (x)"), d.exec("NOT SQL")) },
    ];
    expect(() => migrate(db, ms)).toThrow('near "NOT": syntax error');
    expect(appliedMigrations(db)).toEqual(["ok"]);
    expect(db.query("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeNull();
  });

  test("a migration id listed twice is refused", () => {
    const m: Migration = { id: "dup", up: () => {} };
    expect(() => migrate(new Database(":memory:"), [m, m])).toThrow("listed twice");
  });
});
