// D31: SQLite is searched in windows of rows (windows.ts), each one statement on the serving
// thread that nothing interrupts. Sized by rows only, a table of 20 rows of 1 MB was one window:
// every LIKE read 20 MB in one go (~20-40 ms a word of the question, more on a busy machine).
// A window now holds at most WINDOW_BYTES of searched cells past its first row, and so does each
// read of the rows found; counted here.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { selectInWindows, WINDOW_BYTES } from "../../src/connectors/sql/windows";

const MB = 1024 * 1024;

function table(rows: number, bodyBytes: number): Database {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const body = `${"lorem ipsum ".repeat(bodyBytes / 12)} porto`;
  const insert = db.query("INSERT INTO notes VALUES (?, ?, ?)");
  db.transaction(() => {
    for (let i = 1; i <= rows; i++) insert.run(i, `note ${i}`, body);
  })();
  return db;
}

/**
 * The rows found; the bytes of body each windowed LIKE statement read (the rows in its range) and
 * each read of the rows found; and each window's rows against those it asked for before its bytes
 * cut it (a window's size in rows follows the time the last took: more windows on a busy machine).
 */
async function search(db: Database) {
  const read: number[] = [];
  const rowReads: number[] = [];
  const windows: Array<{ rows: number; asked: number }> = [];
  /** Statements that summed the window's bytes row by row (a window function). */
  let runningSums = 0;
  const select = async (sql: string, params: unknown[]) => {
    if (sql.includes(" OVER (")) runningSums++;
    // A read of the rows found (their columns, by key): the bytes of those rows.
    if (/^SELECT (rowid AS corpus_key, )?id FROM "notes" WHERE rowid IN/.test(sql)) {
      const keys = sql.includes("LIMIT ?") ? params.slice(0, -1) : params;
      const n = db
        .query<{ n: number }, never[]>(`SELECT sum(length(body)) AS n FROM notes WHERE rowid IN (${keys.map(() => "?").join(", ")})`)
        .get(...(keys as never[]))!.n;
      read.push(n);
      rowReads.push(n);
    }
    if (sql.includes("LIKE")) {
      const range = sql.slice(sql.indexOf("WHERE") + 6, sql.indexOf(" AND body"));
      const bounds = params.slice(0, (range.match(/\?/g) ?? []).length);
      read.push(db.query<{ n: number }, never[]>(`SELECT sum(length(body)) AS n FROM notes WHERE ${range}`).get(...(bounds as never[]))!.n);
    }
    const rows = db.query(sql).all(...(params as never[])) as Record<string, unknown>[];
    if (sql.startsWith("SELECT min(corpus_key) AS corpus_low"))
      windows.push({ rows: Number(rows[0]!.corpus_rows), asked: Number(rows[0]!.corpus_asked) });
    return rows;
  };
  const rows = await selectInWindows(
    select,
    {
      table: "notes",
      key: "rowid",
      columns: "id",
      where: ["body LIKE ?"],
      params: ["%porto%"],
      order: "id DESC",
      limit: 50,
      bytes: "COALESCE(octet_length(title), 0) + COALESCE(octet_length(body), 0)",
    },
    { deadline: performance.now() + 60_000 },
  );
  return { found: rows.length, ids: rows.map((r) => r.id as number), read, rowReads, windows, runningSums };
}

test("attack: 20 rows of 1 MB are searched in windows of at most WINDOW_BYTES past their first row, all found", async () => {
  const { found, ids, read } = await search(table(20, MB));
  expect(found).toBe(20);
  expect(ids).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
  // Was one window of 20 MB, and the rows found read in one statement of 20 MB.
  expect(Math.max(...read)).toBeLessThanOrEqual(WINDOW_BYTES + MB + 100);
  expect(read.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(2 * 20 * MB);
});

test("small rows are still read in windows of many rows; a row larger than the bound is a window of its own", async () => {
  const small = await search(table(5_000, 100));
  expect(small.found).toBe(50);
  expect(small.ids).toEqual(Array.from({ length: 50 }, (_, i) => 5_000 - i));
  // Each window as many rows as its time asked for, never cut by bytes; the 50 found read at once.
  expect(small.windows.filter((w) => w.rows > 0).every((w) => w.rows === w.asked)).toBe(true);
  expect(small.windows.reduce((n, w) => n + w.rows, 0)).toBe(5_000);
  expect(small.rowReads).toHaveLength(1);
  const huge = await search(table(3, 3 * MB));
  expect(huge.found).toBe(3);
  expect(huge.read).toHaveLength(6);
});

test("attack: a window whose rows hold less than WINDOW_BYTES in all is bounded without a running sum of their bytes", async () => {
  // A small table (Chinook's 412 invoices) is one window: its running sum was ~1/3 of the SQLite
  // reader's CPU a question, for a bound nothing came near.
  const small = await search(table(400, 100));
  expect(small.found).toBe(50);
  expect(small.windows).toEqual([{ rows: 400, asked: 400 }]);
  expect(small.runningSums).toBe(0);
  // Past the bound, the running sum cuts the window as before.
  const huge = await search(table(3, 3 * MB));
  expect(huge.found).toBe(3);
  expect(huge.runningSums).toBeGreaterThan(0);
});
