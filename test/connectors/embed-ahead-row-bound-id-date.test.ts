// Attack on the bound of a row read ahead (SqlConnector.newest, NEWEST_ROW_CHARS): only the
// title and text columns are measured, but the id and date columns are read too, whole, and each
// record holds the id three times (id, path, source_url) and both in its metadata. A table whose
// key or date column holds long strings passes every row: "5,000 rows ... ~10 MB at once,
// whatever the table holds" does not hold.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AHEAD_RECORDS } from "../../src/connectors/embed-ahead";
import { NEWEST_ROW_CHARS, SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

test("attack: newest() reads rows whose id and date cells are 100 kB each: its row bound measures title and text only", async () => {
  const dir = join(tempDir("corpus-long-keys-"), "db");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "long-keys.sqlite");
  const db = new Database(file);
  db.exec("CREATE TABLE t (ref TEXT PRIMARY KEY, title TEXT, body TEXT, created TEXT)");
  const put = db.query("INSERT INTO t VALUES (?, ?, ?, ?)");
  for (let i = 1; i <= 20; i++) put.run(`${i}-${"r".repeat(100_000)}`, `row ${i}`, "short", `2024-01-01 ${"d".repeat(100_000)}`);
  db.close();

  const source = new SqlConnector({ url: file, tables: [{ name: "t", id: "ref", title: "title", text: ["body"], date: "created" }] });
  try {
    const rows = await source.newest(AHEAD_RECORDS);
    // What a record read ahead holds (its id, path, link, title, text and metadata).
    const largest = Math.max(0, ...rows.map((r) => JSON.stringify(r).length));
    // Was { rows: 20, largest: ~500,000 }: each record ~250 times the row bound of 2,000
    // characters (the id and date, each 100 kB, read whole).
    expect({ rows: rows.length, withinBound: largest <= 4 * NEWEST_ROW_CHARS }).toEqual({ rows: rows.length, withinBound: true });
  } finally {
    await source.close();
  }
});
