// The search worker's copy of the vectors (held-vectors.ts): the same candidates as sqlite-vec,
// row for row and bit for bit (ties included: copies of a mail have equal vectors), with and
// without a date range; an unchanged index is not read again, a changed one only in the vec0
// chunks that changed; past its bound, nothing is held and sqlite-vec searches.
import { expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { type CandidatesAsked, candidates } from "../../src/connectors/local-index/candidates";
import { HeldVectors } from "../../src/connectors/local-index/held-vectors";
import type { KeyedVector } from "../../src/crypto/rotation";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { mailRecord } from "../support/local-index";

// Building the index takes ~1 s quiet; the machine may be shared.
setDefaultTimeout(60_000);

/** A seeded generator: the same vectors on every run. */
function random(seed: number) {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
}
const next = random(5);
const randomVector = () => Float32Array.from({ length: EMBEDDING_DIM }, () => next() - 0.5);

/** Chunks per record: 20 records fill two of vec0's chunks of 1,024. */
const CHUNKS = 60;
const OWNER = "alice/mail";

async function index() {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const userKeys = new UserKeys(db, randomBytes(32));
  const keys = indexKeysFor(userKeys, "alice", "mail", true);
  const ix = new EmbeddedIndex(db, OWNER, keys, () => Array.from({ length: CHUNKS }, (_, i) => `chunk ${i}`));
  // Another index's vectors in the same table: a partition of its own.
  const other = new EmbeddedIndex(db, "alice/docs", indexKeysFor(userKeys, "alice", "docs", true), () => ["one"]);
  const put = async (target: EmbeddedIndex, i: number) =>
    target.put({ source: `m${i}`, size: 1, mtime: 1 }, [
      mailRecord(
        `m${i}`,
        `20${String(10 + (i % 10))}-03-01T10:00:00.000Z`,
        `${i % 3 === 0 ? "harbour" : "meeting"} ${i % 5 === 0 ? "audit" : ""}`,
      ),
    ]);
  for (let i = 0; i < 20; i++) await put(ix, i);
  for (let i = 0; i < 10; i++) await put(other, i);
  const embedAll = (target: EmbeddedIndex) => {
    const pending = target.pendingChunks(100_000);
    const vectors: Float32Array[] = [];
    for (const [k] of pending.entries()) vectors.push(k % 7 === 3 ? vectors[k - 3]! : randomVector());
    target.setVectors(pending, vectors);
  };
  embedAll(ix);
  embedAll(other);
  const asked = (extra: Partial<CandidatesAsked> = {}): CandidatesAsked => ({
    parts: keys.blinder.matchParts(["harbour", "audit"]),
    words: 10,
    nearest: 40,
    // Stored vectors are keyed (rotated); these tests compare two searches of the same ones.
    vector: randomVector() as KeyedVector,
    ...extra,
  });
  return { db, ix, other, put, embedAll, asked, rows: { db, owner: OWNER } };
}

/** The candidates as compared: every record found with its scores, in order, and the rows read. */
const shown = (c: ReturnType<typeof candidates>) => ({ found: [...c.found], sealed: [...c.sealed.keys()] });

test("the held vectors find what sqlite-vec finds, in the same order, with and without a date range", async () => {
  const { rows, asked } = await index();
  const held = new HeldVectors();
  for (let i = 0; i < 6; i++) {
    const a = asked(i % 3 === 0 ? { parts: [] } : {});
    expect(shown(candidates(rows, a, held))).toEqual(shown(candidates(rows, a)));
    const dated = asked({ dateFrom: "2012-01-01T00:00:00.000Z", dateTo: "2016-01-01T00:00:00.000Z" });
    expect(shown(candidates(rows, dated, held))).toEqual(shown(candidates(rows, dated)));
  }
  // Ties: asked by a vector that chunks hold as copies, each is found where sqlite-vec puts it.
  const copy = rows.db.query<{ embedding: Uint8Array }, []>("SELECT embedding FROM connector_vec WHERE chunk_id = 4").get()!.embedding;
  const onTies = asked({ vector: new Float32Array(copy.buffer.slice(copy.byteOffset, copy.byteOffset + copy.byteLength)) as KeyedVector });
  expect(shown(candidates(rows, onTies, held))).toEqual(shown(candidates(rows, onTies)));
});

test("an unchanged index is not read again; a change is read in the vec0 chunks it touched, and found", async () => {
  const { rows, asked, ix, put, embedAll } = await index();
  const held = new HeldVectors();
  candidates(rows, asked(), held);
  // 1,200 vectors: two of vec0's chunks.
  expect(held.chunksRead).toBe(2);
  for (let i = 0; i < 5; i++) candidates(rows, asked(), held);
  expect(held.chunksRead).toBe(2);
  // A record added and embedded: its vectors go to the last chunk, the only one read again.
  await put(ix, 1000);
  embedAll(ix);
  let a = asked();
  expect(shown(candidates(rows, a, held))).toEqual(shown(candidates(rows, a)));
  expect(held.chunksRead).toBe(3);
  // A record removed: the chunk that held its vectors is read again.
  await ix.removeSource(ix.sourceKey("m1"));
  a = asked();
  expect(shown(candidates(rows, a, held))).toEqual(shown(candidates(rows, a)));
  expect(held.chunksRead).toBe(4);
});

test("attack: a question reckons each held vector's coarse product once and the exact product of few: those that may rank, and of each word match's chunks those that may be its nearest", async () => {
  const { rows, asked } = await index();
  const held = new HeldVectors();
  // Word matches not among the nearest: their best chunks are looked up among the products of the pass.
  const a = asked({ nearest: 5 });
  const found = candidates(rows, a, held);
  expect([...found.found.values()].some((hit) => hit.lexical !== undefined && hit.dense !== undefined)).toBe(true);
  expect(shown(found)).toEqual(shown(candidates(rows, a)));
  expect(held.coarseProducts.count).toBe(1_200);
  // Each of the 1,200 reckoned exactly before the coarse pass.
  const exact = held.products.count;
  // 33 here (nearest 5 and the word matches' nearest chunks).
  expect(exact).toBeLessThan(1_200 / 10);
  const dated = asked({ nearest: 5, dateFrom: "2012-01-01T00:00:00.000Z", dateTo: "2016-01-01T00:00:00.000Z" });
  expect(shown(candidates(rows, dated, held))).toEqual(shown(candidates(rows, dated)));
  expect(held.coarseProducts.count).toBe(2_400);
  expect(held.products.count - exact).toBeLessThan(1_200 / 10);
});

test("past its bound nothing is held, and sqlite-vec answers the same", async () => {
  const { rows, asked } = await index();
  // Room for the small index's 10 vectors, not for the 1,200 of the other.
  const held = new HeldVectors(100 * EMBEDDING_DIM * 4);
  const a = asked();
  expect(shown(candidates(rows, a, held))).toEqual(shown(candidates(rows, a)));
  expect(held.chunksRead).toBe(0);
  expect(held.bytes).toBe(0);
  candidates({ db: rows.db, owner: "alice/docs" }, a, held);
  expect(held.chunksRead).toBe(1);
  // Its floats and its coarse copy (int8, a scale and a sum each).
  expect(held.bytes).toBe(10 * (EMBEDDING_DIM * 5 + 16));
});

test("a record removed and another put before the next search is found by its own vector, never the removed one's (a chunk's number is not given again)", async () => {
  const { db, asked, other, put, embedAll } = await index();
  const rows = { db, owner: "alice/docs" };
  const held = new HeldVectors();
  candidates(rows, asked(), held);
  const last = () => db.query<{ n: number }, []>("SELECT max(chunk_id) AS n FROM connector_vec").get()!.n;
  // The newest record's chunk removed and the next record's put (its number was given again, so
  // vec0's slot too), with no search between: the held copy last saw the removed vector there.
  await other.removeSource(other.sourceKey("m9"));
  await put(other, 2000);
  embedAll(other);
  // Asked by the new record's own vector: sqlite-vec finds it nearest, and so must the held copy.
  const own = db
    .query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM connector_vec WHERE chunk_id = ?")
    .get(last())!.embedding;
  const a = asked({
    parts: [],
    vector: new Float32Array(own.buffer.slice(own.byteOffset, own.byteOffset + own.byteLength)) as KeyedVector,
  });
  expect(shown(candidates(rows, a, held))).toEqual(shown(candidates(rows, a)));
});

test("a data folder of before upgrades: its chunks keep their numbers, and the next one is past every number a chunk or vector had", () => {
  const dir = tempDir();
  // Before connectors-009, and so before every migration of the local index that came after it.
  const first = indexMigrations.findIndex((m) => m.id === "connectors-009-chunk-numbers-once");
  const before = openDatabase(dir, [...cryptoMigrations, ...indexMigrations.slice(0, first)]);
  for (const ord of [0, 1, 2]) before.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (1, ?, ?)").run(OWNER, ord);
  // A vector stored under a number whose chunk row is gone (the newest chunks removed).
  before.query("INSERT INTO connector_vec (chunk_id, owner, embedding) VALUES (9, ?, ?)").run(OWNER, randomVector());
  before.close();
  const after = openDatabase(dir, [...cryptoMigrations, ...indexMigrations]);
  expect(
    after
      .query<{ chunk: number }, []>("SELECT chunk FROM connector_chunks ORDER BY chunk")
      .all()
      .map((r) => r.chunk),
  ).toEqual([1, 2, 3]);
  after.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (2, ?, 0)").run(OWNER);
  after.query("DELETE FROM connector_chunks WHERE chunk = 10").run();
  after.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (3, ?, 0)").run(OWNER);
  expect(
    after
      .query<{ chunk: number }, []>("SELECT chunk FROM connector_chunks WHERE doc > 1")
      .all()
      .map((r) => r.chunk),
  ).toEqual([11]);
  expect(
    after.query<{ n: number }, []>("SELECT count(*) AS n FROM sqlite_master WHERE tbl_name = 'connector_chunks' AND type = 'index'").get()!
      .n,
  ).toBe(3);
});
