// Attack on the bound of a row read ahead (SqlConnector.newest, NEWEST_ROW_CHARS): the condition
// is SQLite's length(CAST(col AS TEXT)), which counts the characters *before the first NUL*. A
// hostile (or merely binary-ish) database whose text or BLOB cells begin with a NUL passes any
// row, whatever its size; so do cells of invalid UTF-8 (continuation bytes are not counted), and a
// BLOB is then read as "200,200,…", four characters a byte. 5,000 such rows are read at once on
// the request thread, unbounded.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_RECORDS } from "../../src/connectors/embed-ahead";
import { NEWEST_ROW_CHARS, SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

const CELL = 100_000;

test("attack: text cells that begin with a NUL pass newest()'s row bound whatever their length", async () => {
  const dir = join(tempDir("corpus-nul-rows-"), "db");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "hostile.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  const put = db.query("INSERT INTO t VALUES (?, ?, ?)");
  for (let i = 1; i <= 20; i++) put.run(i, `row ${i}`, `\u0000${"payload ".repeat(CELL / 8)}`);
  db.close();

  const source = new SqlConnector({ url: file, tables: [{ name: "t", id: "id", title: "title", text: ["body"] }] });
  try {
    const rows = await source.newest(AHEAD_RECORDS);
    const longest = Math.max(0, ...rows.map((r) => r.title.length + r.content.length));
    // Was { rows: 20, longest: 100020 }: every row of 100 kB read ahead (a table of 5,000 such
    // rows, or of 10 MB cells, is read whole at once).
    expect({ rows: rows.length, withinBound: longest <= NEWEST_ROW_CHARS + 64 }).toEqual({ rows: 0, withinBound: true });
  } finally {
    await source.close();
  }
});

test("attack: BLOB cells that begin with a zero byte pass newest()'s row bound, and are read as 4 characters a byte", async () => {
  const dir = join(tempDir("corpus-nul-blobs-"), "db");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "blobs.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT, body BLOB)");
  const put = db.query("INSERT INTO t VALUES (?, ?, ?)");
  for (let i = 1; i <= 20; i++) {
    const blob = new Uint8Array(CELL).fill(200);
    blob[0] = 0;
    put.run(i, `row ${i}`, blob);
  }
  db.close();

  const source = new SqlConnector({ url: file, tables: [{ name: "t", id: "id", title: "title", text: ["body"] }] });
  try {
    const rows = await source.newest(AHEAD_RECORDS);
    const longest = Math.max(0, ...rows.map((r) => r.title.length + r.content.length));
    expect({ longest, withinBound: longest <= NEWEST_ROW_CHARS + 64 }).toEqual({ longest, withinBound: true });
  } finally {
    await source.close();
  }
});

test("attack: text cells of UTF-8 continuation bytes count as one character for SQLite's length(), whatever their size", async () => {
  const dir = join(tempDir("corpus-bad-utf8-rows-"), "db");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "bad-utf8.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, title TEXT, body TEXT)");
  // No NUL at all: 100 kB of 0x80 bytes stored as TEXT (SQLite keeps invalid UTF-8 as given).
  const put = db.query("INSERT INTO t VALUES (?, ?, CAST(? AS TEXT))");
  for (let i = 1; i <= 20; i++) put.run(i, `row ${i}`, new Uint8Array(CELL).fill(0x80));
  db.close();

  const source = new SqlConnector({ url: file, tables: [{ name: "t", id: "id", title: "title", text: ["body"] }] });
  try {
    const rows = await source.newest(AHEAD_RECORDS);
    const longest = Math.max(0, ...rows.map((r) => r.title.length + r.content.length));
    expect({ longest, withinBound: longest <= NEWEST_ROW_CHARS + 64 }).toEqual({ longest, withinBound: true });
  } finally {
    await source.close();
  }
});
