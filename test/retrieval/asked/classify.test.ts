// The classifier of what is asked (D32): a kind is scored by the mean of its NEAREST_PER_KIND
// nearest prototypes (not by one lucky neighbour), the same as sorting every cosine; quantised
// vectors keep their cosines; a vector of another model's size is refused.
import { expect, test } from "bun:test";
import { AskedPrototypes, NEAREST_PER_KIND, quantise } from "../../../src/retrieval/asked/classify";
import { ASKED_KINDS, type Asks } from "../../../src/retrieval/asked/prototypes";
import { unitVectors } from "../../support/unit-vectors";

const unit = (v: number[]) => {
  const n = Math.hypot(...v);
  return Float32Array.from(v, (x) => x / n);
};
const prototypesOf = (kinds: Asks[], vectors: Float32Array[]) => {
  const q = quantise(vectors);
  return new AskedPrototypes(kinds, q.vectors, q.scales, vectors[0]!.length);
};

test("a kind is scored by the mean of its nearest prototypes: one close prototype of another kind does not outvote three", () => {
  expect(NEAREST_PER_KIND).toBe(3);
  // Against the question [1, 0], a prototype's cosine is its first coordinate.
  const at = (cos: number) => unit([cos, Math.sqrt(1 - cos * cos)]);
  const prototypes = prototypesOf(
    ["person", "person", "person", "date", "date", "date", "date"],
    [at(0.99), at(0.3), at(0.3), at(0.8), at(0.8), at(0.8), at(0.1)],
  );
  const read = prototypes.classify(unit([1, 0]));
  expect(read.kind).toBe("date");
  expect(read.runnerUp).toBe("person");
  expect(read.margin).toBeCloseTo(0.8 - (0.99 + 0.3 + 0.3) / 3, 2);
});

test("the nearest per kind, kept by insertion, are those of sorting every cosine (20 questions, 540 prototypes)", () => {
  const vectors = unitVectors(540 + 20, 7);
  const kinds = vectors.slice(0, 540).map((_, i) => ASKED_KINDS[i % ASKED_KINDS.length]!);
  const prototypes = prototypesOf(kinds, vectors.slice(0, 540));
  const stored = kinds.map((_, i) => prototypes.vector(i));
  for (const question of vectors.slice(540)) {
    const scores = ASKED_KINDS.map((kind) => {
      const cosines = kinds
        .map((k, i) => (k === kind ? i : -1))
        .filter((i) => i >= 0)
        .map((i) => stored[i]!.reduce((s, x, j) => s + x * question[j]!, 0))
        .sort((a, b) => b - a)
        .slice(0, NEAREST_PER_KIND);
      return { kind, score: cosines.reduce((a, b) => a + b, 0) / cosines.length };
    }).sort((a, b) => b.score - a.score);
    const read = prototypes.classify(question);
    expect(read.kind).toBe(scores[0]!.kind);
    expect(read.runnerUp).toBe(scores[1]!.kind);
    expect(read.margin).toBeCloseTo(scores[0]!.score - scores[1]!.score, 4);
  }
});

test("quantised to int8, a prototype's cosine with a question moves by less than 0.01", () => {
  const [a, b] = unitVectors(2, 11);
  const back = prototypesOf(["open"], [a!]).vector(0);
  const cos = (x: Float32Array, y: Float32Array) => x.reduce((s, v, i) => s + v * y[i]!, 0);
  expect(Math.abs(cos(back, b!) - cos(a!, b!))).toBeLessThan(0.01);
});

test("a vector of another size (another model's) is refused, and so are prototypes without one vector each", () => {
  const prototypes = prototypesOf(["date", "place"], [unit([1, 0, 0]), unit([0, 1, 0])]);
  expect(() => prototypes.classify(unit([1, 0]))).toThrow("a vector of another model");
  expect(() => new AskedPrototypes(["date"], new Int8Array(6), new Float32Array(1), 3)).toThrow("one vector per prototype");
});
