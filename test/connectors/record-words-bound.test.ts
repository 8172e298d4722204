// D31: FTS5 writes a record's words in one statement on the serving thread, its cost growing with
// the record's words and distinct words (a 24 MB HTML mail held the thread 56-67 ms there; 50,000
// distinct words ~93 ms of CPU). A record gives the word index at most MAX_RECORD_WORDS words and
// MAX_RECORD_TERMS distinct ones: counted here in what the statement wrote (FTS5's own length of
// the row), with BM25's lengths (connectors-012) those of the words indexed, and the log says so.
import { expect, test } from "bun:test";
import { MAX_RECORD_TERMS, MAX_RECORD_WORDS, WORDS_CUT } from "../../src/connectors/index-terms";
import { type ScanEntry, syncIndex } from "../../src/connectors/local-index";
import { lengthOf } from "../../src/connectors/local-index/word-statistics";
import type { SourceRecord } from "../../src/connectors/types";
import { ask, localIndexes, mailRecord } from "../support/local-index";

/** Words written to the word index for each record (FTS5's docsize: what the insert wrote), and the index's own total (BM25's). */
function written(db: ReturnType<typeof localIndexes>["db"]) {
  const rows = db
    .query<{ doc: number; sz: Uint8Array; terms_length: number }, []>(
      "SELECT d.doc, z.sz, d.terms_length FROM connector_docs d JOIN connector_terms_docsize z ON z.id = d.doc ORDER BY d.doc",
    )
    .all();
  const counted = db.query<{ length: number }, []>("SELECT length FROM connector_terms_counts").get()?.length;
  return { lengths: rows.map((r) => lengthOf(r.sz)), stored: rows.map((r) => r.terms_length), counted };
}

const entry: ScanEntry = { source: "big.eml", size: 1, mtime: 1 };

/** Syncs `records` as one source's; the sync's result. */
const sync = (index: ReturnType<ReturnType<typeof localIndexes>["indexFor"]>, records: SourceRecord[]) =>
  syncIndex(index, [entry], async () => records);

test("a record of many distinct words gives the word index MAX_RECORD_TERMS of them, and is found by those", async () => {
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  // Distinct words (w0 … w19999), then one repeated: on main all 20,000 distinct went into one statement.
  const distinct = 2.5 * MAX_RECORD_TERMS;
  const words = Array.from({ length: distinct }, (_, i) => `w${i}`).join(" ");
  const result = await sync(index, [mailRecord("big", "2024-01-01", `${words} tail`), mailRecord("small", "2024-01-02", "w1 note")]);
  expect(result.cutWords).toBe(1);
  const w = written(db);
  // Its title's word ("big") is one of them; the small record's three words all go in.
  expect(w.lengths).toEqual([MAX_RECORD_TERMS, 3]);
  // BM25's statistics are those of what was indexed.
  expect(w.stored).toEqual(w.lengths);
  expect(w.counted).toBe(MAX_RECORD_TERMS + 3);
  // Its first words are found; those past the bound are not.
  expect(index.search(ask(["w0"])).map((r) => r.id)).toEqual(["big"]);
  expect(index.search(ask([`w${MAX_RECORD_TERMS - 2}`])).map((r) => r.id)).toEqual(["big"]);
  expect(index.search(ask([`w${MAX_RECORD_TERMS - 1}`])).map((r) => r.id)).toEqual([]);
  expect(index.search(ask(["tail"])).map((r) => r.id)).toEqual([]);
});

test("a record of one word repeated gives the word index MAX_RECORD_WORDS words; a record within the bounds all of its", async () => {
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  const result = await sync(index, [
    mailRecord("huge", "2024-01-01", "word ".repeat(MAX_RECORD_WORDS + 5_000)),
    mailRecord("fits", "2024-01-02", "word ".repeat(MAX_RECORD_WORDS - 1)),
  ]);
  expect(result.cutWords).toBe(1);
  // The title's word counts too ("huge" / "fits" is one word each).
  expect(written(db).lengths).toEqual([MAX_RECORD_WORDS, MAX_RECORD_WORDS]);
  expect(WORDS_CUT).toContain(String(MAX_RECORD_WORDS));
});

test("a record's words written again in a newer format keep the bound", () => {
  const { db, indexFor } = localIndexes();
  const index = indexFor("alice/mail");
  const words = Array.from({ length: 2 * MAX_RECORD_TERMS }, (_, i) => `w${i}`).join(" ");
  return index.put(entry, [mailRecord("big", "2024-01-01", words)]).then(() => {
    db.exec("UPDATE connector_docs SET terms_format = 0");
    expect(index.reblindStale(10, 1_000_000)).toBe(1);
    const w = written(db);
    expect(w.lengths).toEqual([MAX_RECORD_TERMS]);
    expect(w.stored).toEqual(w.lengths);
  });
});
