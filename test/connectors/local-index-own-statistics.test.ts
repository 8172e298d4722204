// A user's word scores are BM25 by their own index's statistics (candidates.ts ownBm25): its rows,
// their lengths and each word's rarity among them. FTS5's bm25() weighs row lengths against the
// average of the whole shared table, so another user's long rows flipped a short and a long
// record's order (3.03 over 2.58 became 6.51 under 7.66), and the scores returned told a user
// how much text others held (D25: no index sees another's).
import { expect, test } from "bun:test";
import { indexMigrations } from "../../src/connectors/local-index";
import { wordHitsRead } from "../../src/connectors/local-index/candidates";
import { dropIndex } from "../../src/connectors/local-index/maintenance";
import { cryptoMigrations } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { ask, localIndexes, mailRecord } from "../support/local-index";

const NOTES = [
  ["short", "harbour crane"],
  ["long", "harbour crane harbour crane ledger freight invoice rotterdam quay shift report weekly"],
  ["other", "weekly report of the office move and the coffee machine"],
  ["menu", "lunch menu soup bread"],
  ["trip", "train tickets to utrecht"],
  ["gym", "gym opens at seven"],
] as const;

/**
 * The notes index beside `otherRows` long rows of another index in the same table. FTS5's
 * table-wide bm25() put the long note first from 10 such rows (harbour: 3.36 over 2.97; 4.36 over
 * 3.86 beside 20, 7.13 over 6.31 beside 100), its own statistics 0.77 over 0.65 beside any number.
 */
async function besideOthers(otherRows: number) {
  const { indexFor } = localIndexes();
  const notes = indexFor("notes");
  for (const [id, text] of NOTES) await notes.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, "2020-01-01T00:00:00.000Z", text)]);
  const other = indexFor("archive");
  const long = Array.from({ length: 2000 }, (_, i) => `word${i % 300} harbour`).join(" ");
  for (let i = 0; i < otherRows; i++)
    await other.put({ source: `a${i}`, size: 1, mtime: 1 }, [mailRecord(`a${i}`, "2020-01-01T00:00:00.000Z", long)]);
  return notes;
}

async function ranked(words: string[], otherRows: number) {
  const hits = await (await besideOthers(otherRows)).rank(ask(words));
  return hits.map((h) => ({ id: h.record.id, lexical: h.lexical! })).sort((a, b) => b.lexical - a.lexical);
}

for (const words of [["harbour"], ["harbour", "weekly"]])
  test(`a user's scores and order for ${words.join(", ")} are the same beside another user's 20 long rows`, async () => {
    const alone = await ranked(words, 0);
    const beside = await ranked(words, 20);
    expect(alone.length).toBeGreaterThan(1);
    expect(alone.at(-1)!.lexical).toBeGreaterThan(0.1);
    expect(beside.map((h) => h.id)).toEqual(alone.map((h) => h.id));
    for (const [i, h] of beside.entries()) expect(h.lexical).toBeCloseTo(alone[i]!.lexical, 9);
  });

test("an index of fewer than half the table's rows reads its own hits of a word, not the other index's, and scores them the same", async () => {
  const alone = (await besideOthers(0)).rankHere(ask(["harbour"]));
  const notes = await besideOthers(20);
  const before = wordHitsRead.count;
  const beside = notes.rankHere(ask(["harbour"]));
  // Its two records with the word, not the 20 of the other index's besides.
  expect(wordHitsRead.count - before).toBe(2);
  expect(beside.map((h) => [h.record.id, h.lexical])).toEqual(alone.map((h) => [h.record.id, h.lexical]));
});

// Connector.search (a source's records by their words, best first): the same order by the index's own statistics.
// FTS5's table-wide bm25() put the long record first beside them.
test("a user's search order for harbour is the same beside another user's 20 long rows", async () => {
  const order = async (otherRows: number) => (await besideOthers(otherRows)).search(ask(["harbour"])).map((r) => r.id);
  const alone = await order(0);
  expect(alone).toEqual(["short", "long"]);
  expect(await order(20)).toEqual(alone);
});

test("an index alone in the table scores as FTS5's bm25() does: the counts read back from its scores are exact", async () => {
  const { db, indexFor, keysFor } = localIndexes();
  const notes = indexFor("notes");
  for (const [id, text] of NOTES) await notes.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, "2020-01-01T00:00:00.000Z", text)]);
  const hits = await notes.rank(ask(["harbour", "crane", "weekly"]));
  const fts = db
    .query<{ score: number }, [string]>(
      "SELECT -bm25(connector_terms) AS score FROM connector_terms WHERE connector_terms MATCH ? ORDER BY 1 DESC",
    )
    .all(keysFor("notes").blinder.match(["harbour", "crane", "weekly"])!)
    .map((r) => r.score);
  expect(hits.map((h) => h.lexical!).sort((a, b) => b - a)).toEqual(fts.map((s) => expect.closeTo(s, 9)));
});

type Counts = { owner: string; rows: number; length: number };
const countsOf = (db: ReturnType<typeof openDatabase>) =>
  db.query<Counts, []>("SELECT owner, rows, length FROM connector_terms_counts ORDER BY owner").all();

test("a data folder of before upgrades: each record's length is read from FTS5 and each index's counted", () => {
  const dir = tempDir();
  const first = indexMigrations.findIndex((m) => m.id === "connectors-012-terms-counts");
  const before = openDatabase(dir, [...cryptoMigrations, ...indexMigrations.slice(0, first)]);
  const rows: Array<[number, string, string, string]> = [
    [1, "alice/notes", "t1", "a b c"],
    [2, "alice/notes", "t2 t3", "a b c d e f g"],
    [3, "bob/mail", "t4", "x y"],
  ];
  for (const [doc, owner, title, content] of rows) {
    before.query("INSERT INTO connector_docs (doc, owner, source, size, mtime, record) VALUES (?, ?, 's', 1, 1, x'00')").run(doc, owner);
    before.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)").run(doc, title, content);
  }
  before.close();
  const after = openDatabase(dir, [...cryptoMigrations, ...indexMigrations]);
  expect(
    after
      .query<{ n: number }, []>("SELECT terms_length AS n FROM connector_docs ORDER BY doc")
      .all()
      .map((r) => r.n),
  ).toEqual([4, 9, 3]);
  expect(countsOf(after)).toEqual([
    { owner: "alice/notes", rows: 2, length: 13 },
    { owner: "bob/mail", rows: 1, length: 3 },
  ]);
});

test("an index's counts follow its records as they are put, written again and removed; none is left of an index removed", async () => {
  const { db, indexFor } = localIndexes();
  const notes = indexFor("notes");
  for (const [id, text] of NOTES) await notes.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, "2020-01-01T00:00:00.000Z", text)]);
  // A title of one word (the id) and the text's words.
  const words = NOTES.reduce((sum, [, text]) => sum + 1 + text.split(" ").length, 0);
  expect(countsOf(db)).toEqual([{ owner: "notes", rows: NOTES.length, length: words }]);
  await notes.put({ source: "short", size: 2, mtime: 2 }, [mailRecord("short", "2020-01-01T00:00:00.000Z", "harbour crane and a boat")]);
  expect(countsOf(db)).toEqual([{ owner: "notes", rows: NOTES.length, length: words + 3 }]);
  await notes.removeSource(notes.sourceKey("short"));
  expect(countsOf(db)).toEqual([{ owner: "notes", rows: NOTES.length - 1, length: words - 3 }]);
  // Words written again (an older format): the record's length is measured again.
  db.query("UPDATE connector_docs SET terms_format = 0, terms_length = 0").run();
  expect(countsOf(db)).toEqual([{ owner: "notes", rows: NOTES.length - 1, length: 0 }]);
  expect(notes.reblindStale(100, 1_000_000)).toBe(NOTES.length - 1);
  expect(countsOf(db)).toEqual([{ owner: "notes", rows: NOTES.length - 1, length: words - 3 }]);
  dropIndex(db, "notes");
  expect(countsOf(db)).toEqual([]);
});
