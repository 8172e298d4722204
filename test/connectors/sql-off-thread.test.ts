// Issue 35 (D31): a SQLite connector's statements (a search's windows of LIKE over the rows, the
// rows read) ran on the thread that serves every request: 20 rows of 1 MB asked were ~50 ms of
// its CPU a question, in turns of up to ~20 ms. They run in the SQLite reader now
// (src/connectors/sql/sqlite-worker.ts), and on the asking thread only where no reader can start.
import { Database } from "bun:sqlite";
import { afterAll, afterEach, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { endSqliteReader, SQLITE_RETRY_MS, SQLITE_STUCK_MS, sqliteReaderSettings } from "../../src/connectors/sql/sqlite-reader";
import { tempDir } from "../helpers";
import { CHINOOK_SQLITE, chinookCustomers, chinookInvoices } from "../support/chinook";
import { HOSTILE_TABLE, HUGE_ROWS } from "../support/hostile-sources";
import { WEDGED } from "../support/wedging-sqlite-worker";

const dir = tempDir("corpus-sql-off-thread-");
const file = join(dir, "shop.db");
{
  const db = new Database(file);
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const words = "lorem ipsum dolor sit amet ".repeat(40_000);
  db.transaction(() => {
    for (let i = 1; i <= HUGE_ROWS; i++) db.query("INSERT INTO notes VALUES (?, ?, ?)").run(i, `note ${i}`, `${words} porto`);
    db.query("INSERT INTO notes VALUES (?, ?, ?)").run(HUGE_ROWS + 1, "offsite", "The offsite moved to Porto.");
  })();
  db.close();
}

/** Statements prepared on this thread's connections to the shop's file (bun:sqlite's query: every statement goes through it). */
let onThisThread = 0;
const query = Database.prototype.query;
Database.prototype.query = function (this: Database, sql: string) {
  if (this.filename === file) onThisThread++;
  return query.call(this, sql);
} as typeof query;
afterAll(() => {
  Database.prototype.query = query;
});

const entry = sqliteReaderSettings.entry;
afterEach(() => {
  endSqliteReader();
  Object.assign(sqliteReaderSettings, { entry, stuckMs: SQLITE_STUCK_MS, retryMs: SQLITE_RETRY_MS });
});

const search = (c: SqlConnector) => c.search({ terms: ["dinner", "porto"], phrases: [], limit: 50 });
const ids = (records: Array<{ id: string }>) => records.map((r) => r.id);

test("a search over 20 rows of 1 MB runs none of its statements on the serving thread, and finds what the serving thread found", async () => {
  const connector = new SqlConnector({ url: file, tables: [HOSTILE_TABLE] });
  try {
    expect((await connector.health()).status).toBe("ok");
    onThisThread = 0;
    const found = await search(connector);
    expect(found.length).toBe(HUGE_ROWS + 1);
    // The windows, the rows' keys and the rows themselves: none here (about 40 on the serving thread before).
    expect(onThisThread).toBe(0);

    // No reader can start (a thread refused, as in the unit suite): the same rows, read on this thread.
    endSqliteReader();
    sqliteReaderSettings.entry = join(dir, "no-such-worker.ts");
    const onThread = new SqlConnector({ url: file, tables: [HOSTILE_TABLE] });
    try {
      onThisThread = 0;
      const read = await search(onThread);
      expect(onThisThread).toBeGreaterThan(HUGE_ROWS / 2);
      expect(ids(read)).toEqual(ids(found));
      expect(read.map((r) => r.content)).toEqual(found.map((r) => r.content));
    } finally {
      await onThread.close();
    }
  } finally {
    await connector.close();
  }
});

test("a reader that stops answering fails the search with a message, not the serving thread, and the next search starts another", async () => {
  sqliteReaderSettings.entry = join(import.meta.dir, "../support/wedging-sqlite-worker.ts");
  const connector = new SqlConnector({ url: file, tables: [HOSTILE_TABLE] });
  try {
    expect((await connector.health()).status).toBe("ok");
    // Every statement held from now on, as one stuck would hold it.
    writeFileSync(join(dir, WEDGED), "");
    sqliteReaderSettings.stuckMs = 200;
    onThisThread = 0;
    await expect(search(connector)).rejects.toThrow(/cannot be reached/);
    expect(onThisThread).toBe(0);
    rmSync(join(dir, WEDGED));
    // Opened again (its schema read here, as on every opening), then searched in a new reader.
    expect((await connector.health()).status).toBe("ok");
    onThisThread = 0;
    expect((await search(connector)).length).toBe(HUGE_ROWS + 1);
    expect(onThisThread).toBe(0);
  } finally {
    await connector.close();
  }
});

/** The type of every message a worker is posted, until `restore()`: how many reads a search costs the reader. */
function spyOnPostedTypes(): { posted: string[]; restore: () => void } {
  const post = Worker.prototype.postMessage;
  const posted: string[] = [];
  Worker.prototype.postMessage = function (this: Worker, message: { type?: string }, ...rest: unknown[]) {
    posted.push(String(message?.type));
    return (post as (...a: unknown[]) => void).call(this, message, ...rest);
  } as typeof post;
  return { posted, restore: () => (Worker.prototype.postMessage = post) };
}

test("attack: a search's read of each table is one message to the reader and one answer, its windows and rows read there", async () => {
  const connector = new SqlConnector({ url: CHINOOK_SQLITE, tables: [chinookInvoices(), chinookCustomers()] });
  const { posted, restore } = spyOnPostedTypes();
  try {
    expect((await connector.health()).status).toBe("ok");
    posted.length = 0;
    const found = await connector.search({ terms: ["berlin"], phrases: [], limit: 50 });
    expect(found.some((r) => r.id.startsWith("Invoice/"))).toBe(true);
    expect(found.some((r) => r.id.startsWith("Customer/"))).toBe(true);
    // Two tables, each found whole in its first read: two messages (each window, the keys kept
    // and the rows found were a message each way, 10 or more for the two).
    expect(posted).toEqual(["windows", "windows"]);
  } finally {
    restore();
    await connector.close();
  }
});

test("a search that gives up tells the reader, whose read stops at its next window with what it found", async () => {
  const connector = new SqlConnector({ url: file, tables: [HOSTILE_TABLE] });
  const { posted, restore } = spyOnPostedTypes();
  try {
    expect((await connector.health()).status).toBe("ok");
    posted.length = 0;
    const stop = new AbortController();
    const searching = connector.search({ terms: ["dinner", "porto"], phrases: [], limit: 50, signal: stop.signal });
    while (!posted.includes("windows")) await new Promise((resolve) => setImmediate(resolve));
    stop.abort();
    const found = await searching;
    expect(posted).toEqual(["windows", "abort"]);
    expect(found.length).toBeLessThanOrEqual(HUGE_ROWS + 1);
    // The reader serves the next search whole.
    expect((await search(connector)).length).toBe(HUGE_ROWS + 1);
  } finally {
    restore();
    await connector.close();
  }
});
