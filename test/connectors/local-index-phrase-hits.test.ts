// A phrase's hits are kept by the search worker between questions while the word index is as it
// was read (phrase-hits.ts): the same candidates as read anew, with or without a date range or
// records hidden; a record written, changed or removed since changes the index's generation and
// is seen by the next question; what is kept is bounded.
import { expect, test } from "bun:test";
import { type CandidatesAsked, candidates, wordHitsRead } from "../../src/connectors/local-index/candidates";
import { indexGeneration, KEPT_HITS, PhraseHitsMemo } from "../../src/connectors/local-index/phrase-hits";
import { localIndexes, mailRecord } from "../support/local-index";

const NOTES = [
  ["crane", "2019-05-01T00:00:00.000Z", "harbour crane ledger"],
  ["quay", "2020-03-01T00:00:00.000Z", "harbour quay shift report"],
  ["freight", "2021-07-01T00:00:00.000Z", "freight invoice harbour rotterdam"],
  ["menu", "2020-09-01T00:00:00.000Z", "lunch menu soup bread"],
] as const;

async function notes() {
  const { db, indexFor, keysFor } = localIndexes();
  const index = indexFor("notes");
  for (const [id, date, text] of NOTES) await index.put({ source: id, size: 1, mtime: 1 }, [mailRecord(id, date, text)]);
  // Another index in the same table: its rows count in FTS5's rarity, never among the notes' hits.
  await indexFor("other").put({ source: "o", size: 1, mtime: 1 }, [mailRecord("o", "2020-01-01T00:00:00.000Z", "harbour soup")]);
  const keys = keysFor("notes");
  const asked = (words: string[], range: { dateFrom?: string; dateTo?: string } = {}): CandidatesAsked => ({
    parts: keys.blinder.matchParts(words),
    words: 10,
    nearest: 0,
    ...range,
  });
  return { db, index, ix: { db, owner: index.owner }, asked };
}

const found = (c: ReturnType<typeof candidates>) => [...c.found].sort((a, b) => a[0] - b[0]);

test("kept hits give the candidates read ones give, with and without a date range; a phrase asked again is not read again", async () => {
  const { ix, asked } = await notes();
  const memo = new PhraseHitsMemo();
  const questions = [
    asked(["harbour"]),
    asked(["harbour"], { dateFrom: "2020-01-01T00:00:00.000Z", dateTo: "2021-01-01T00:00:00.000Z" }),
    asked(["harbour", "soup"], { dateFrom: "2020-06-01T00:00:00.000Z" }),
    asked(["soup"], { dateTo: "2020-01-01T00:00:00.000Z" }),
  ];
  for (const q of questions) {
    const read = found(candidates(ix, q));
    expect(found(candidates(ix, q, undefined, memo))).toEqual(read);
    expect(found(candidates(ix, q, undefined, memo))).toEqual(read);
  }
  expect(found(candidates(ix, questions[1]!, undefined, memo)).map(([doc]) => doc)).toHaveLength(1);
  const before = wordHitsRead.count;
  for (const q of questions) candidates(ix, q, undefined, memo);
  expect(wordHitsRead.count).toBe(before);
  expect(memo.size).toBe(2);
});

test("attack: a record written, changed or removed after its phrase was kept is seen by the next question", async () => {
  const { db, index, ix, asked } = await notes();
  const memo = new PhraseHitsMemo();
  const q = asked(["harbour"]);
  const docs = () => found(candidates(ix, q, undefined, memo)).map(([doc]) => doc);
  const fresh = () => found(candidates(ix, q)).map(([doc]) => doc);
  expect(docs()).toHaveLength(3);
  let generation = indexGeneration(db);

  await index.put({ source: "pier", size: 1, mtime: 1 }, [mailRecord("pier", "2022-01-01T00:00:00.000Z", "harbour pier")]);
  expect(indexGeneration(db)).toBeGreaterThan(generation);
  generation = indexGeneration(db);
  expect(docs()).toHaveLength(4);
  expect(docs()).toEqual(fresh());

  // Its words changed: "harbour" no longer in it.
  await index.put({ source: "pier", size: 2, mtime: 2 }, [mailRecord("pier", "2022-01-01T00:00:00.000Z", "jetty only")]);
  expect(indexGeneration(db)).toBeGreaterThan(generation);
  generation = indexGeneration(db);
  expect(docs()).toEqual(fresh());
  expect(docs()).toHaveLength(3);

  await index.removeSource(index.sourceKey("crane"));
  expect(indexGeneration(db)).toBeGreaterThan(generation);
  expect(docs()).toEqual(fresh());
  expect(docs()).toHaveLength(2);
});

test("what is kept is bounded: the phrase asked least recently goes first", () => {
  const memo = new PhraseHitsMemo();
  let reads = 0;
  const half = (): { tableHits: number; own: never[] } => {
    reads++;
    // KEPT_HITS counts each phrase once more than its hits: two of these fill it exactly.
    return { tableHits: 1, own: new Array(KEPT_HITS / 2 - 1).fill({ doc: 1, score: 1, length: 1, source: "s", date: null }) as never[] };
  };
  memo.get(1, "notes", "a", half);
  memo.get(1, "notes", "b", half);
  expect(memo.size).toBe(2);
  memo.get(1, "notes", "a", half); // asked again: "b" is now the least recent
  memo.get(1, "notes", "c", half);
  expect(memo.size).toBe(2);
  expect(reads).toBe(3);
  memo.get(1, "notes", "a", half);
  expect(reads).toBe(3);
  memo.get(1, "notes", "b", half);
  expect(reads).toBe(4);
  // Another generation keeps nothing of the last.
  memo.get(2, "notes", "a", half);
  expect(reads).toBe(5);
});

test("attack: a phrase whose hits alone pass the bound is not kept, and does not push out the phrases kept", () => {
  const memo = new PhraseHitsMemo();
  let reads = 0;
  const hits = (n: number) => (): { tableHits: number; own: never[] } => {
    reads++;
    return { tableHits: n, own: new Array(n).fill({ doc: 1, score: 1, length: 1, source: "s", date: null }) as never[] };
  };
  memo.get(1, "notes", "invoice", hits(10));
  memo.get(1, "notes", "gas", hits(10));
  // A word of nearly every record of a large mailbox: more hits than the memo keeps in all.
  memo.get(1, "notes", "the", hits(KEPT_HITS));
  expect(reads).toBe(3);
  memo.get(1, "notes", "invoice", hits(10));
  memo.get(1, "notes", "gas", hits(10));
  expect(reads).toBe(3);
  expect(memo.size).toBe(2);
});

test("attack: long phrases that hit nothing are bounded by their length too, not one hit's ~100 bytes each", () => {
  const memo = new PhraseHitsMemo();
  // A long quoted question: a phrase of 700 blinded terms (~10 KB), asked again and again with one word changed.
  const words = Array.from({ length: 700 }, (_, i) => `w${i.toString(36).padStart(12, "0")}`);
  const none = () => ({ tableHits: 0, own: [] });
  for (let i = 0; i < 3_000; i++) memo.get(1, "notes", `"${i} ${words.join(" ")}"`, none);
  const kept = memo.size * (words.length * 14);
  // KEPT_HITS at ~100 bytes each: the phrases' own text counts in it.
  expect(kept).toBeLessThanOrEqual(KEPT_HITS * 100);
});
