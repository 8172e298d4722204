// A user's secret rotation of embedding vectors (D25): derived from their key, orthonormal, and
// always the same matrix for the same key: vectors stored rotated by it are searched with
// questions rotated by it again after every restart and upgrade.
import { expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { VectorRotation } from "../../src/crypto/rotation";

const DIM = 384;
const unitOf = (dim: number, j: number) => {
  const e = new Float32Array(dim);
  e[j] = 1;
  return e;
};
const unit = (j: number) => {
  const e = new Float32Array(DIM);
  e[j] = 1;
  return e;
};

test("the matrix of a key is the one vectors were stored with: bit for bit as it was built before (sha256 of its columns)", () => {
  // Taken from the build before its passes were fused (25 Nov): a change of a bit re-rotates nothing stored.
  const expected: Record<number, string> = {
    1: "8292b45fb5f435c02e4991bb7c0d7d598d93bb371925c11f18622fe812e1cc50",
    7: "d323bc69f5a7843b15805a3e3c1913f883fd7406d405cee0009a96da5438dd96",
  };
  for (const [fill, sha256] of Object.entries(expected)) {
    const rotation = VectorRotation.fromKey(new Uint8Array(32).fill(Number(fill)), DIM);
    const h = createHash("sha256");
    for (let j = 0; j < DIM; j++) h.update(rotation.apply(unit(j)));
    expect(h.digest("hex")).toBe(sha256);
  }
});

test("made a few rows a turn, the matrix is the same bit for bit, and each turn does a part of it (D31)", async () => {
  let turns = 0;
  for (const fill of [1, 7]) {
    const key = new Uint8Array(32).fill(fill);
    const whole = VectorRotation.fromKey(key, DIM);
    const inTurns = await VectorRotation.fromKeyInTurns(key, DIM, async () => turns++);
    for (const j of [0, 1, 191, 383]) expect(inTurns.apply(unit(j))).toEqual(whole.apply(unit(j)));
  }
  // 384 rows, 32 a turn: 12 turns each.
  expect(turns).toBe(24);
});

test("a dense vector is rotated to the very bits it was before apply took four rows at a time (sha256 of eight rotated)", () => {
  // Taken from the build that summed one row at a time (29 Nov): a question rotated otherwise would not meet what is stored by a bit.
  const rotation = VectorRotation.fromKey(new Uint8Array(32).fill(5), DIM);
  const h = createHash("sha256");
  for (let k = 1; k <= 8; k++) h.update(rotation.apply(new Float32Array(DIM).map((_, i) => Math.sin(i * k + 0.3))));
  expect(h.digest("hex")).toBe("282ece421dc8c567aebd855d5b6ab9a6f34264982dedced9b373436fa45048a0");
  // A size not a multiple of four: its last rows one at a time, as each row was.
  const small = VectorRotation.fromKey(new Uint8Array(32).fill(5), 7);
  const v = new Float32Array(7).map((_, i) => Math.cos(i + 1));
  const rowByRow = Array.from({ length: 7 }, (_, i) => {
    let sum = 0;
    for (let j = 0; j < 7; j++) sum += small.apply(unitOf(7, j))[i]! * v[j]!;
    return Math.fround(sum);
  });
  expect([...small.apply(v)]).toEqual(rowByRow);
});

test("orthonormal: dot products kept, and the inverse gives a vector back", () => {
  const rotation = VectorRotation.fromKey(new Uint8Array(32).fill(3), DIM);
  const x = new Float32Array(DIM).map((_, i) => Math.sin(i));
  const y = new Float32Array(DIM).map((_, i) => Math.cos(i * 0.7));
  const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);
  expect(dot(rotation.apply(x), rotation.apply(y))).toBeCloseTo(dot(x, y), 3);
  const back = rotation.invert(rotation.apply(x));
  for (let i = 0; i < DIM; i++) expect(back[i]!).toBeCloseTo(x[i]!, 4);
  // And it rotates: the vector as stored is not the vector.
  expect(dot(rotation.apply(x), x) / dot(x, x)).toBeLessThan(0.5);
});
