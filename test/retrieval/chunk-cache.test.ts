// Issue 14 (memory): the query service keeps the chunks of records it showed, so that a record
// asked about again is not cut again. Bounded by a count of 4,096 records, that cache grew the
// request thread's heap with every question while a mail folder embedded (records of 5-50 kB);
// it is bounded by characters now: many long records shown leave it under CHUNK_CACHE_CHARS.
import { afterAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type { SourceRecord } from "../../src/connectors/types";
import { UserKeys } from "../../src/crypto/user-keys";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { CHUNK_CACHE_CHARS, ChunkCache } from "../../src/retrieval/chunk-cache";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

const dir = tempDir();
const db = openDatabase(dir, MIGRATIONS);
// Only its tokenizer is used here: no worker starts.
const embeddings = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1 });
afterAll(() => embeddings.close());

const record = (i: number): SourceRecord => ({
  id: `mail-${i}`,
  title: `Report ${i}`,
  // ~40 kB: a long mail with a forwarded thread.
  content: Array.from({ length: 400 }, (_, s) => `Sentence ${s} of mail ${i} about the pipeline capacity auction.`).join(" "),
  source_url: "",
  date: null,
  type: "email",
  path: `mail-${i}`,
  metadata: {},
});

test("the chunks of many long records shown stay under the cache's bound in characters, and a record shown again is not cut again", () => {
  const cache = new ChunkCache(() => embeddings.tokenizer);
  const chunksOf = (r: SourceRecord) => cache.chunksOf("alice", "mail", r);
  const first = record(0);
  const chunks = chunksOf(first);
  expect(chunks.length).toBeGreaterThan(10);
  expect(chunksOf(first)).toBe(chunks);
  // 300 records x ~85k characters (text and chunks): ~25 M characters shown in all.
  const shown = [chunks];
  for (let i = 1; i <= 300; i++) shown.push(chunksOf(record(i)));
  expect(cache.chars).toBeGreaterThan(0);
  expect(cache.chars).toBeLessThanOrEqual(CHUNK_CACHE_CHARS);
  // What is held, counted again from the records still held (the same chunks given back, not cut again).
  let held = 0;
  for (let i = 300; i >= 0; i--) {
    const r = record(i);
    if (cache.chunksOf("alice", "mail", r) !== shown[i]) break;
    // Its chunks' characters, and one for the entry (record-memo.ts).
    held += 1 + shown[i]!.reduce((n, c) => n + c.length, 0);
  }
  expect(held).toBe(cache.chars);
  // The first ones made room for the later.
  expect(held).toBeLessThan(300 * 40_000);
});

/** The tokenizer, counting the word pieces it is asked to count: the work of cutting chunks. */
function countingTokenizer() {
  const tokenizer = embeddings.tokenizer;
  const counted = { chars: 0 };
  const counting = Object.create(tokenizer) as typeof tokenizer;
  counting.count = (text: string, max?: number) => {
    counted.chars += text.length;
    return tokenizer.count(text, max);
  };
  return { counting, counted };
}

const row = (words: number): SourceRecord => ({
  id: "orders/1",
  title: "orders 1",
  // A 1 MB column of words and no sentence: the outside review's row.
  content: `notes: ${"lorem ".repeat(words)}`,
  source_url: "",
  date: null,
  type: "file",
  path: "orders/1",
  metadata: {},
});

test("20 rows of 1 MB are cut once, not on every question, and cutting one reads what its chunks hold, not the megabyte", () => {
  const { counting, counted } = countingTokenizer();
  const cache = new ChunkCache(() => counting);
  const rows = Array.from({ length: 20 }, (_, i) => ({ ...row(175_000), id: `orders/${i}` }));
  expect(rows[0]!.content.length).toBeGreaterThan(1_000_000);
  const chunks = rows.map((r) => cache.chunksOf("alice", "shop", r));
  expect(chunks[0]!.length).toBe(64);
  const first = counted.chars;
  expect(first).toBeGreaterThan(0);
  // The second question: the same rows, fetched again (equal strings, not the same ones).
  for (const [i, r] of rows.entries())
    expect(cache.chunksOf("alice", "shop", { ...r, content: `${r.content} `.trimEnd() })).toBe(chunks[i]!);
  expect(counted.chars).toBe(first);
  // A row changed within what is cut is cut again.
  const changed = cache.chunksOf("alice", "shop", { ...rows[0]!, content: `changed ${rows[0]!.content}` });
  expect(changed).not.toBe(chunks[0]);
  expect(changed[0]!.startsWith("changed notes:")).toBe(true);
  // Twice the row: no more work for one (the chunks stop at 64).
  const { counting: counting2, counted: counted2 } = countingTokenizer();
  new ChunkCache(() => counting2).chunksOf("alice", "shop", row(350_000));
  expect(counted2.chars).toBeLessThanOrEqual((first / 20) * 1.1);
  // What is held is the chunks, not the megabytes.
  expect(cache.chars).toBeLessThan(20 * 100_000);
});
