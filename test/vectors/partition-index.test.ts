// Big partitions on one node: past the threshold (small here, as CORPUS_VECTOR_INDEX_THRESHOLD
// sets it) a partition's keyed vectors get an HNSW index in a file beside the database, built in
// a worker; a search without ids asks it (and what changed since) and finds what exact search
// finds (recall@10); a key's rotation (every vector put again) builds the next one; dropping the
// connector or the owner leaves no file.
import { afterAll, expect, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { closeSearches, dropIndex, EmbeddedIndex, indexKeysFor } from "../../src/connectors/local-index";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { configureConnectorVectors } from "../../src/vectors/embedded";
import { VECTOR_INDEX_DIR } from "../../src/vectors/partition-index";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
import { tempDir } from "../helpers";
import { mailRecord } from "../support/local-index";
import { unitVectors } from "../support/unit-vectors";

const THRESHOLD = 1000;
const N = 1500;

const data = unitVectors(N, 1);
const questions = unitVectors(40, 2);
const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
/** The exact 10 nearest ids over the vectors as the model made them (ids from 1), those given left out. */
const exactTop = (q: Float32Array, except = new Set<number>()) =>
  data
    .map((v, i) => ({ id: i + 1, s: dot(v, q) }))
    .filter((x) => !except.has(x.id))
    .sort((a, b) => b.s - a.s)
    .slice(0, 10)
    .map((x) => x.id);

const dir = tempDir();
const db = openDatabase(dir, MIGRATIONS);
afterAll(() => db.close());
const store = configureConnectorVectors(db, { threshold: THRESHOLD, onBuildFailed: (e) => console.error(e) });
const indexFiles = () => (existsSync(join(dir, VECTOR_INDEX_DIR)) ? readdirSync(join(dir, VECTOR_INDEX_DIR)) : []);
const put = (rotation: VectorRotation, from: number, to: number) =>
  store.put(
    "alice",
    "mail",
    data.slice(from, to).map((v, i) => ({ id: from + i + 1, vector: rotation.apply(v) })),
  );

function recall(rotation: VectorRotation, except = new Set<number>()): number {
  let hits = 0;
  for (const q of questions) {
    const found = store.knn("alice", rotation.apply(q), 10, { connectors: ["mail"] }).map((n) => n.id);
    const exact = exactTop(q, except);
    hits += found.filter((id) => exact.includes(id)).length;
  }
  return hits / (10 * questions.length);
}

test("past the threshold a partition gets an index built beside the database, of keyed vectors, searched in place of sqlite-vec at recall@10 >= 0.95", async () => {
  const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  put(rotation, 0, 900);
  await store.settled();
  // Below the threshold: no index, the exact search.
  expect(indexFiles()).toEqual([]);
  put(rotation, 900, N);
  await store.settled();
  const files = indexFiles();
  expect(files.length).toBe(1);
  // The file holds the keyed vectors, never one as the model made it.
  const bytes = readFileSync(join(dir, VECTOR_INDEX_DIR, files[0]!));
  const plain = Buffer.from(data[0]!.buffer, data[0]!.byteOffset, EMBEDDING_DIM * 4);
  expect(bytes.indexOf(plain)).toBe(-1);
  expect(bytes.indexOf(Buffer.from(rotation.apply(data[0]!).buffer))).toBeGreaterThanOrEqual(0);

  // Searched without sqlite-vec's brute force over the partition.
  const exactSearches = spyOn(SqliteVectorStore.prototype, "knn");
  expect(recall(rotation)).toBeGreaterThanOrEqual(0.95);
  expect(exactSearches).not.toHaveBeenCalled();
  exactSearches.mockRestore();
  // Another owner's partition, small, stays without one and is never searched through alice's.
  store.put("bob", "mail", [{ id: 100_000, vector: rotation.apply(questions[0]!) }]);
  expect(store.knn("alice", rotation.apply(questions[0]!), 10).some((n) => n.id === 100_000)).toBe(false);
  expect(store.knn("bob", rotation.apply(questions[0]!), 10).map((n) => n.id)).toEqual([100_000]);

  // Changes since the snapshot: a removed vector is never given, one put since is found at once.
  const q = questions[1]!;
  const nearest = exactTop(q).slice(0, 3);
  store.remove("alice", "mail", nearest);
  const added = 200_000;
  store.put("alice", "mail", [{ id: added, vector: rotation.apply(q) }]);
  const found = store.knn("alice", rotation.apply(q), 10, { connectors: ["mail"] });
  expect(found[0]).toMatchObject({ id: added, similarity: expect.closeTo(1, 4) });
  expect(found.some((n) => nearest.includes(n.id))).toBe(false);
  expect(indexFiles().length).toBe(1);
  // Put back, as they were: found again.
  store.put(
    "alice",
    "mail",
    nearest.map((id) => ({ id, vector: rotation.apply(data[id - 1]!) })),
  );
  store.remove("alice", "mail", [added]);
  expect(recall(rotation)).toBeGreaterThanOrEqual(0.95);
}, 120_000);

test("a key's rotation (every vector put again) builds the next index from the new keyed vectors; the old file goes", async () => {
  const before = indexFiles();
  const rotated = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  for (let at = 0; at < N; at += 500) put(rotated, at, Math.min(N, at + 500));
  await store.settled();
  const after = indexFiles();
  expect(after.length).toBe(1);
  expect(after).not.toEqual(before);
  expect(recall(rotated)).toBeGreaterThanOrEqual(0.95);
}, 120_000);

test("dropping the connector (as a user's deletion does for each) or the owner leaves no index file, and no vector", async () => {
  expect(indexFiles().length).toBe(1);
  expect(dropIndex(db, "alice/mail")).toBe(0);
  expect(indexFiles()).toEqual([]);
  expect(store.count("alice")).toBe(0);
  expect(db.query<{ n: number }, []>("SELECT count(*) AS n FROM vector_hnsw").get()!.n).toBe(0);
  // Again, dropped by owner.
  const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  put(rotation, 0, N);
  await store.settled();
  expect(indexFiles().length).toBe(1);
  expect(store.dropOwner("alice")).toBe(N);
  expect(indexFiles()).toEqual([]);
  expect(store.knn("alice", rotation.apply(questions[0]!), 10)).toEqual([]);
  expect(store.count("bob")).toBe(1);
}, 120_000);

test("a search within ids is exact (the index holds no ids to narrow by)", async () => {
  const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  put(rotation, 0, N);
  await store.settled();
  expect(indexFiles().length).toBe(1);
  const ids = [5, 50, 500, 1400];
  const q = rotation.apply(data[49]!) as KeyedVector;
  const found = store.knn("alice", q, 10, { connectors: ["mail"], ids });
  expect(found.map((n) => n.id).sort((a, b) => a - b)).toEqual(ids);
  expect(found[0]).toMatchObject({ id: 50, similarity: expect.closeTo(1, 4) });
  store.dropOwner("alice");
}, 120_000);

test("an index whose file is gone (a backup restored holds the database alone) is searched exactly, and built again at the next change", async () => {
  const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);
  put(rotation, 0, N);
  await store.settled();
  const [file] = indexFiles();
  rmSync(join(dir, VECTOR_INDEX_DIR, file!));
  const exactSearches = spyOn(SqliteVectorStore.prototype, "knn");
  expect(recall(rotation)).toBe(1);
  expect(exactSearches).toHaveBeenCalled();
  exactSearches.mockRestore();
  store.put("alice", "mail", [{ id: 300_000, vector: rotation.apply(questions[0]!) }]);
  await store.settled();
  expect(indexFiles().length).toBe(1);
  expect(store.knn("alice", rotation.apply(questions[0]!), 1)[0]!.id).toBe(300_000);
  store.dropOwner("alice");
  expect(indexFiles()).toEqual([]);
}, 120_000);

test("a local index past the threshold is searched through its index in the search worker, off the serving thread, as on this thread", async () => {
  const dataDir = tempDir();
  const real = openDatabase(dataDir, MIGRATIONS);
  const vectors = configureConnectorVectors(real, { threshold: 50 });
  const index = new EmbeddedIndex(real, "carol/mail", indexKeysFor(new UserKeys(real, randomBytes(32)), "carol", "mail", true), (r) => [
    r.content,
  ]);
  const axis = (turn: number) => {
    const v = new Float32Array(EMBEDDING_DIM);
    v[0] = Math.cos(turn);
    v[1] = Math.sin(turn);
    return v;
  };
  try {
    for (let i = 0; i < 60; i++)
      await index.put({ source: `m${i}`, size: 1, mtime: 1 }, [
        mailRecord(`m${i}`, "2020-03-01T10:00:00.000Z", `note ${i}`, { from: "a@example.com" }),
      ]);
    const pending = index.pendingChunks(1000);
    index.setVectors(
      pending,
      pending.map((_, i) => axis(i / 60)),
    );
    await vectors.settled();
    expect(readdirSync(join(dataDir, VECTOR_INDEX_DIR)).length).toBe(1);
    const request = { terms: [], phrases: [], limit: 10, vector: axis(0.3) };
    const off = await index.rank(request);
    const here = index.rankHere(request);
    // Twice the limit of nearest chunks, as rank asks (rank.ts).
    expect(off.length).toBe(20);
    expect(off.map((h) => [h.record.id, h.dense])).toEqual(here.map((h) => [h.record.id, h.dense]));
    // The nearest: the chunk turned 0.3 (the 18th of 60), its similarity ~1.
    expect(off[0]!.record.id).toBe("m18");
    expect(off[0]!.dense).toBeCloseTo(1, 4);
  } finally {
    await closeSearches(real);
    real.close();
  }
}, 120_000);
