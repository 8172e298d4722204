// The search worker's dot products of a question's vector with every held vector
// (src/connectors/local-index/float32-dots.ts, WebAssembly float32 lanes) against the JavaScript
// loop it replaced (Math.fround after each product and sum, four vectors at a time), in the same
// run on the same vectors: as many as the Enron bench's mail (10,053 chunks of 384 floats). Checks
// that both give the same sums to the last bit, then prints each one's time per pass and the ratio.
//   bun scripts/bench/held-dots.ts [--vectors 10053] [--passes 40]
import { parseArgs } from "node:util";
import { Float32Dots } from "../../src/connectors/local-index/float32-dots";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";

const { values: args } = parseArgs({
  options: { vectors: { type: "string", default: "10053" }, passes: { type: "string", default: "40" } },
});
const N = Number(args.vectors);
const PASSES = Number(args.passes);
const D = EMBEDDING_DIM;
const fround = Math.fround;

let seed = 7;
function next(): number {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32 - 0.5;
}
const vectors = Float32Array.from({ length: N * D }, next);
const query = Float32Array.from({ length: D }, next);

/** The loop before: four vectors at a time, each summed in order in float32. */
function inJavaScript(out: Float64Array): void {
  let i = 0;
  for (; i + 3 < N; i += 4) {
    const a = i * D;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let j = 0; j < D; j++) {
      const q = query[j]!;
      s0 = fround(s0 + fround(vectors[a + j]! * q));
      s1 = fround(s1 + fround(vectors[a + D + j]! * q));
      s2 = fround(s2 + fround(vectors[a + 2 * D + j]! * q));
      s3 = fround(s3 + fround(vectors[a + 3 * D + j]! * q));
    }
    out[i] = s0;
    out[i + 1] = s1;
    out[i + 2] = s2;
    out[i + 3] = s3;
  }
  for (; i < N; i++) {
    let s = 0;
    for (let j = 0; j < D; j++) s = fround(s + fround(vectors[i * D + j]! * query[j]!));
    out[i] = s;
  }
}

const dots = Float32Dots.make(N, D);
if (!dots) throw new Error("this runtime has no WebAssembly SIMD");
for (let i = 0; i < N; i++) dots.set(i, vectors, i * D);
const expected = new Float64Array(N);
inJavaScript(expected);
const got = dots.dots(query);
for (let i = 0; i < N; i++) if (got[i] !== expected[i]) throw new Error(`vector ${i}: ${got[i]} against ${expected[i]}`);

/** Milliseconds per pass, the passes of the two interleaved so the machine's load falls on both alike. */
const times = { javascript: 0, wasm: 0 };
for (let p = 0; p < PASSES + 5; p++) {
  let t = performance.now();
  inJavaScript(expected);
  const js = performance.now() - t;
  t = performance.now();
  dots.dots(query);
  const wasm = performance.now() - t;
  // The first five warm both up.
  if (p >= 5) {
    times.javascript += js;
    times.wasm += wasm;
  }
}
console.log(`${N} vectors of ${D}, ${PASSES} passes each, interleaved; the same sums to the last bit`);
console.log(`JavaScript loop  ${(times.javascript / PASSES).toFixed(2)} ms a pass`);
console.log(`WebAssembly      ${(times.wasm / PASSES).toFixed(2)} ms a pass`);
console.log(`ratio: ${(times.javascript / times.wasm).toFixed(2)}x less time in WebAssembly`);
