// D31: the rows a SQL search reads for whole words (sql-whole-words.test.ts) are folded on the
// serving thread, up to 16 times the limit of them: a turn of the event loop between rows.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { SqlConnector } from "../../src/connectors/sql/connector";
import { tempDir } from "../helpers";

test("rows read for whole words are folded with turns of the event loop between them: 160 rows of three cells of 8,000 'ß' do not hold the serving thread", async () => {
  const path = join(tempDir("corpus-sql-whole-words-folded-"), "shop.sqlite");
  const db = new Database(path);
  db.exec("CREATE TABLE Note (NoteId INTEGER PRIMARY KEY, Title TEXT, Body TEXT, Extra TEXT)");
  const insert = db.query("INSERT INTO Note VALUES (?, ?, ?, ?)");
  // Each holds "strasse" only inside a longer word: every row read is folded, none kept.
  const cell = `${"ß".repeat(8_000)}strasse`;
  for (let i = 1; i <= 160; i++) insert.run(i, cell, cell, cell);
  db.close();
  const notes = new SqlConnector({ url: path, tables: [{ name: "Note", id: "NoteId", title: "Title", text: ["Body", "Extra"] }] });
  try {
    let longest = 0;
    let last = performance.now();
    let ticking = true;
    const tick = () => {
      const now = performance.now();
      longest = Math.max(longest, now - last);
      last = now;
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const started = performance.now();
    expect(await notes.search({ terms: ["strasse"], phrases: [], limit: 10 })).toEqual([]);
    const took = performance.now() - started;
    ticking = false;
    // Folded at once, the last read's rows held the thread for a sixth of the search in one
    // stretch (325 of 1,900 ms); with turns, its longest stretch was 58 of 2,390 ms.
    expect(longest / took).toBeLessThan(0.08);
  } finally {
    await notes.close();
  }
}, 30_000);
