// D31: a search's rows are ranked, chunked and cited on the serving thread. 20 rows of 1 MB asked
// held it ~0.2-0.5 s a question (reading 20 MB of cells, BM25 over 100,000 characters of each,
// the chunks' digests): a title or text cell is read up to SEARCH_CELL_CHARS characters, and a
// row found by a word past them still comes (the match is SQL's, over the whole cell).
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SEARCH_CELL_CHARS, SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

const ROWS = 20;
const MB = 1_000_000;

function database(create: string, rows: unknown[][]): string {
  const file = join(tempDir("corpus-sql-cell-"), "shop.sqlite");
  const db = new Database(file);
  db.exec(create);
  const insert = db.query(`INSERT INTO notes VALUES (${rows[0]!.map(() => "?").join(", ")})`);
  db.transaction(() => {
    for (const row of rows) insert.run(...(row as never[]));
  })();
  db.close();
  return file;
}

test("attack: rows of 1 MB are read up to SEARCH_CELL_CHARS of each cell, and found by a word past them", async () => {
  const words = "lorem ipsum dolor sit amet ".repeat(MB / 27);
  const rows = Array.from({ length: ROWS }, (_, i) => [i + 1, `note ${i + 1}`, `${words} porto`, 12.5 + i]);
  const url = database("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT, amount REAL)", rows);
  const sql = new SqlConnector({ url, tables: [{ name: "notes", id: "id", title: "title", text: ["body", "amount"] }] });
  try {
    const found = await sql.search({ terms: ["porto"], phrases: [], limit: 50 });
    expect(found).toHaveLength(ROWS);
    for (const r of found) {
      // Was the whole megabyte, in the content and again in the metadata.
      expect(r.content.length).toBeLessThan(SEARCH_CELL_CHARS + 100);
      expect(r.content).toStartWith("body: lorem ipsum");
      expect(String(r.metadata.body).length).toBe(SEARCH_CELL_CHARS);
      // A number stays a number.
      expect(typeof r.metadata.amount).toBe("number");
    }
  } finally {
    await sql.close();
  }
});

test("a cell cut holds whole characters, NULs and all; a BLOB's is cut too; short cells are as stored", async () => {
  const emoji = "😀".repeat(SEARCH_CELL_CHARS);
  const blob = new Uint8Array(MB).fill(200);
  const rows = [
    [1, "emoji", `${emoji} porto`],
    [2, "nul", `\u0000${"x".repeat(MB)} porto`],
    [3, "short", "The offsite moved to Porto."],
  ];
  const url = database("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body)", rows);
  const withBlob = new Database(url);
  withBlob.query("INSERT INTO notes VALUES (4, 'blob porto', ?)").run(blob);
  withBlob.close();
  const sql = new SqlConnector({ url, tables: [{ name: "notes", id: "id", title: "title", text: ["body"] }] });
  try {
    const byTitle = new Map((await sql.search({ terms: ["porto", "nul"], phrases: [], limit: 10 })).map((r) => [r.title, r]));
    expect([...byTitle.keys()].sort()).toEqual(["blob porto", "emoji", "nul", "short"]);
    const cutEmoji = String(byTitle.get("emoji")!.metadata.body);
    expect(cutEmoji.length).toBeLessThanOrEqual(SEARCH_CELL_CHARS);
    expect(cutEmoji).toBe("😀".repeat(cutEmoji.length / 2));
    expect(String(byTitle.get("nul")!.metadata.body)).toBe(`\u0000${"x".repeat(SEARCH_CELL_CHARS - 1)}`);
    expect(String(byTitle.get("blob porto")!.metadata.body).length).toBeLessThanOrEqual(SEARCH_CELL_CHARS);
    expect(byTitle.get("short")!.content).toBe("body: The offsite moved to Porto.");
  } finally {
    await sql.close();
  }
});
