// The bound of a row read to be embedded ahead (SqlConnector.newest, NEWEST_ROW_BYTES), attacked
// with hostile SQLite files (attack reports of this session). It was SQLite's length() of the
// title and text: that stops at a text's first NUL and counts characters, not bytes, so cells
// that begin with a NUL, BLOBs (read as "200,200,…", four characters a byte) and 100 kB of
// invalid UTF-8 passed; and the id and date cells were not measured at all, each record holding
// the id three times. Every row below is ~100 kB: none may be read ahead.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { AHEAD_RECORDS } from "../../src/connectors/embed-ahead";
import type { SqlTable } from "../../src/connectors/sql/config";
import { NEWEST_ROW_BYTES, SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

const CELL = 100_000;
const blobFrom = (byte: number, first = byte) => {
  const blob = new Uint8Array(CELL).fill(byte);
  blob[0] = first;
  return blob;
};

const hostile: Array<{ name: string; columns: string; insert: string; row: (i: number) => unknown[]; table: SqlTable }> = [
  {
    name: "text cells that begin with a NUL",
    columns: "id INTEGER PRIMARY KEY, title TEXT, body TEXT",
    insert: "INSERT INTO t VALUES (?, ?, ?)",
    row: (i) => [i, `row ${i}`, `\u0000${"payload ".repeat(CELL / 8)}`],
    table: { name: "t", id: "id", title: "title", text: ["body"] },
  },
  {
    name: "BLOB cells that begin with a zero byte",
    columns: "id INTEGER PRIMARY KEY, title TEXT, body BLOB",
    insert: "INSERT INTO t VALUES (?, ?, ?)",
    row: (i) => [i, `row ${i}`, blobFrom(200, 0)],
    table: { name: "t", id: "id", title: "title", text: ["body"] },
  },
  {
    name: "text cells of UTF-8 continuation bytes (no NUL)",
    columns: "id INTEGER PRIMARY KEY, title TEXT, body TEXT",
    insert: "INSERT INTO t VALUES (?, ?, CAST(? AS TEXT))",
    row: (i) => [i, `row ${i}`, blobFrom(0x80)],
    table: { name: "t", id: "id", title: "title", text: ["body"] },
  },
  {
    name: "id and date cells of 100 kB (title and text short)",
    columns: "ref TEXT PRIMARY KEY, title TEXT, body TEXT, created TEXT",
    insert: "INSERT INTO t VALUES (?, ?, ?, ?)",
    row: (i) => [`${i}-${"r".repeat(CELL)}`, `row ${i}`, "short", `2024-01-01 ${"d".repeat(CELL)}`],
    table: { name: "t", id: "ref", title: "title", text: ["body"], date: "created" },
  },
];

for (const h of hostile) {
  test(`attack: ${h.name} are not read ahead; a question still finds them`, async () => {
    const file = join(tempDir("corpus-newest-bound-"), "hostile.sqlite");
    const db = new Database(file);
    db.exec(`CREATE TABLE t (${h.columns})`);
    const put = db.query(h.insert);
    // One transaction: a commit a row is a sync of the disk each (seconds on a busy machine).
    db.transaction(() => {
      for (let i = 1; i <= 20; i++) put.run(...(h.row(i) as never[]));
    })();
    db.close();
    const source = new SqlConnector({ url: file, tables: [h.table] });
    try {
      const rows = await source.newest(AHEAD_RECORDS);
      // Was 20 rows of ~100-500 kB each (a table of 5,000 such rows read whole at once).
      expect({ rows: rows.length, largest: Math.max(0, ...rows.map((r) => JSON.stringify(r).length)) }).toEqual({ rows: 0, largest: 0 });
      expect(NEWEST_ROW_BYTES).toBeLessThan(CELL / 10);
      expect((await source.search({ terms: ["row"], phrases: [], limit: 5 })).length).toBe(5);
    } finally {
      await source.close();
    }
  });
}
