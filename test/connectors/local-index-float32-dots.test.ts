// The held vectors' dot products in WebAssembly lanes (float32-dots.ts): each the float32 sum in
// order that vec0 makes (a sum in double, or in another order, differs in the last bits for most
// of these vectors), for any count (groups left part empty) and after a copy between layouts.
import { expect, test } from "bun:test";
import { Float32Dots, GROUP, Int8Dots, QUERY_STEPS, VECTOR_STEPS } from "../../src/connectors/local-index/float32-dots";

/** A seeded generator: the same vectors on every run. */
function random(seed: number) {
  let s = seed;
  return () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0), s / 2 ** 32);
}

const DIM = 384;

/** vec0's sum (distance_cosine_float's loop): each product and each partial sum rounded to float32, in order. */
function inOrder(v: Float32Array, from: number, q: Float32Array): number {
  let sum = 0;
  for (let j = 0; j < q.length; j++) sum = Math.fround(sum + Math.fround(v[from + j]! * q[j]!));
  return sum;
}

/** `count` vectors whose values span six orders of magnitude (sums that lose bits), one after another. */
function vectors(count: number, seed: number): Float32Array {
  const next = random(seed);
  return Float32Array.from({ length: count * DIM }, (_, i) => (next() - 0.5) * (i % 7 === 0 ? 1000 : i % 3 === 0 ? 0.001 : 1));
}

test("every vector's dot product is vec0's float32 sum in order, bit for bit, for counts off the group's size", () => {
  const query = vectors(1, 9);
  for (const count of [1, GROUP - 1, GROUP, 3 * GROUP + 5]) {
    const held = vectors(count, count);
    const dots = Float32Dots.make(count, DIM)!;
    for (let i = 0; i < count; i++) dots.set(i, held, i * DIM);
    const all = [...dots.dots(query)];
    const expected = Array.from({ length: count }, (_, i) => inOrder(held, i * DIM, query));
    expect(all).toEqual(expected);
    expect(Array.from({ length: count }, (_, i) => dots.dot(i, query))).toEqual(expected);
    // The test can fail: a sum in double differs from vec0's for some of these vectors.
    let double = 0;
    for (let i = 0; i < count; i++) {
      let sum = 0;
      for (let j = 0; j < DIM; j++) sum += held[i * DIM + j]! * query[j]!;
      if (Math.fround(sum) !== expected[i]) double++;
    }
    if (count > 4) expect(double).toBeGreaterThan(0);
  }
});

test("vectors copied into another layout (a partition laid out again) keep their products", () => {
  const query = vectors(1, 3);
  const held = vectors(40, 4);
  const first = Float32Dots.make(40, DIM)!;
  for (let i = 0; i < 40; i++) first.set(i, held, i * DIM);
  // One vector removed (the 8th), one added at the end: the others move down by one.
  const added = vectors(1, 5);
  const second = Float32Dots.make(40, DIM)!;
  for (let i = 0, at = 0; i < 40; i++) if (i !== 7) second.copy(at++, first, i);
  second.set(39, added, 0);
  const expected = [
    ...Array.from({ length: 40 }, (_, i) => i)
      .filter((i) => i !== 7)
      .map((i) => inOrder(held, i * DIM, query)),
    inOrder(added, 0, query),
  ];
  expect([...second.dots(query)]).toEqual(expected);
});

test("the coarse pass: each vector's product is the exact integer of its steps and the query's, each vector rounded to its own scale", () => {
  const count = 3 * GROUP + 5;
  const all = vectors(count, 11);
  const query = vectors(1, 12);
  const coarse = Int8Dots.make(count, DIM)!;
  for (let i = 0; i < count; i++) coarse.set(i, all, i * DIM);
  const got = coarse.products(query)!;
  const queryMost = query.reduce((m, x) => Math.max(m, Math.abs(x)), 0);
  expect(got.scale).toBe(queryMost / QUERY_STEPS);
  for (let i = 0; i < count; i++) {
    const most = all.subarray(i * DIM, (i + 1) * DIM).reduce((m, x) => Math.max(m, Math.abs(x)), 0);
    expect(coarse.scales[i]).toBe(most / VECTOR_STEPS);
    let steps = 0;
    let sum = 0;
    for (let j = 0; j < DIM; j++) {
      const step = Math.round(all[i * DIM + j]! / coarse.scales[i]!);
      steps += step * Math.round(query[j]! / got.scale);
      sum += Math.abs(step);
    }
    expect(got.steps[i]).toBe(steps);
    expect(coarse.sums[i]).toBe(sum);
  }
  // A query that cannot be rounded (all zero, or not finite): no coarse pass, every product exact.
  expect(coarse.products(new Float32Array(DIM))).toBeUndefined();
  expect(coarse.products(new Float32Array(DIM).fill(Number.NaN))).toBeUndefined();
});
