// The embedded HNSW (usearch) over keyed vectors: its neighbours are the exact ones (recall on a
// set small enough to check by brute force), removed ids are gone, a saved index loads the same.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { EmbeddedHnsw } from "../../src/vectors/hnsw";
import { MAX_KNN } from "../../src/vectors/store";
import { tempDir } from "../helpers";
import { unitVectors } from "../support/unit-vectors";

const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);

// A loop, not Float32Array's reduce: the same sum, 2.7 s of the brute force's 2.8 (a call per element).
const dot = (a: Float32Array, b: Float32Array) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
};
const exactTop = (data: Float32Array[], q: Float32Array, k: number, except = new Set<number>()) =>
  data
    .map((v, i) => ({ id: i + 1, s: dot(v, q) }))
    .filter((x) => !except.has(x.id))
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.id);

const data = unitVectors(3000, 1);
const keyed = data.map((v) => rotation.apply(v));
const queries = unitVectors(50, 2).map((v) => rotation.apply(v));
const ids = data.map((_, i) => i + 1);

test("the k nearest keyed vectors, nearest first, as brute force over the model's vectors finds them (recall@10 >= 0.95)", () => {
  const index = EmbeddedHnsw.create();
  index.add(ids, keyed);
  expect(index.size).toBe(3000);
  let hits = 0;
  for (const q of queries) {
    const found = index.search(q, 10);
    expect(found.length).toBe(10);
    for (let i = 1; i < found.length; i++) expect(found[i]!.similarity).toBeLessThanOrEqual(found[i - 1]!.similarity);
    // Exact over the vectors before rotation: the rotation keeps every cosine (D25).
    const exact = exactTop(data, rotation.invert(q), 10);
    hits += found.filter((f) => exact.includes(f.id)).length;
    expect(found[0]!.similarity).toBeCloseTo(dot(data[found[0]!.id - 1]!, rotation.invert(q)), 4);
  }
  expect(hits / (10 * queries.length)).toBeGreaterThanOrEqual(0.95);
});

test("removed ids are never found; a saved index loads and answers the same", () => {
  const index = EmbeddedHnsw.create();
  // A third of the set: what is removed and what loads do not depend on its size.
  index.add(ids.slice(0, 1000), keyed.slice(0, 1000));
  const q = queries[0]!;
  const gone = index.search(q, 5).map((f) => f.id);
  index.remove(gone);
  const after = index.search(q, 50).map((f) => f.id);
  expect(after.some((id) => gone.includes(id))).toBe(false);
  const file = join(tempDir(), "index.usearch");
  index.save(file);
  const loaded = EmbeddedHnsw.load(file);
  expect(loaded.size).toBe(index.size);
  for (const query of queries.slice(0, 10)) expect(loaded.search(query, 10)).toEqual(index.search(query, 10));
});

test("bad input is refused: a k out of bounds, vectors of another size, ids not matching vectors", () => {
  const index = EmbeddedHnsw.create();
  index.add(ids.slice(0, 10), keyed.slice(0, 10));
  for (const k of [0, -1, 2.5, MAX_KNN + 1]) expect(() => index.search(queries[0]!, k)).toThrow(RangeError);
  expect(() => index.add([11], [new Float32Array(10) as KeyedVector])).toThrow(RangeError);
  expect(() => index.add([11, 12], [keyed[11]!])).toThrow(RangeError);
  expect(index.size).toBe(10);
});
