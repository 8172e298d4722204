// A secret orthogonal rotation of embedding vectors (D25). Vectors kept for nearest-neighbour
// search are stored rotated by a matrix derived from their owner's key: rotation keeps every
// dot product and cosine exact, so search in the rotated space ranks exactly as before, but a
// copy of the database without the key does not give the vectors back as the model made them.
// Destroying the key leaves them as noise.
import { createCipheriv } from "node:crypto";

declare const keyed: unique symbol;
/** A vector rotated by its owner's rotation (apply's result): the only kind a vector store keeps (src/vectors/). */
export type KeyedVector = Float32Array & { readonly [keyed]: true };

export class VectorRotation {
  private constructor(
    /** Row-major, orthonormal rows. */
    private readonly q: Float32Array,
    readonly dim: number,
  ) {}

  /** The rotation for a 32-byte key: Gaussian matrix from the key's AES-CTR stream, orthonormalised. */
  static fromKey(key: Uint8Array, dim: number): VectorRotation {
    const normals = gaussians(key, dim * dim);
    const rows = rowsOf(normals, dim);
    for (let i = 0; i < dim; i++) orthonormaliseRow(rows, i, dim);
    return new VectorRotation(Float32Array.from(normals), dim);
  }

  /**
   * The same rotation as fromKey, bit for bit (the same operations in the same order), made
   * ROWS_PER_TURN rows at a time with `turn` awaited between: at 384 dimensions it is ~20-40 ms
   * of CPU, which held the serving thread when a connector's first vectors were stored (D31).
   */
  static async fromKeyInTurns(key: Uint8Array, dim: number, turn: () => Promise<unknown>): Promise<VectorRotation> {
    const normals = gaussians(key, dim * dim);
    const rows = rowsOf(normals, dim);
    for (let i = 0; i < dim; i++) {
      orthonormaliseRow(rows, i, dim);
      if ((i + 1) % ROWS_PER_TURN === 0) await turn();
    }
    return new VectorRotation(Float32Array.from(normals), dim);
  }

  /**
   * Q·v. Four rows at a time, each summed in its own order as one row alone is (the same bits): a
   * question's vector is rotated once per store it searches and every archived chunk's once, and
   * one pass over v for four rows took half the time (~0.9 -> ~0.45 ms at 384 under load).
   */
  apply(v: Float32Array): KeyedVector {
    const { q, dim } = this;
    const out = new Float32Array(dim);
    let i = 0;
    for (; i + 3 < dim; i += 4) {
      const r0 = i * dim;
      const r1 = r0 + dim;
      const r2 = r1 + dim;
      const r3 = r2 + dim;
      let s0 = 0;
      let s1 = 0;
      let s2 = 0;
      let s3 = 0;
      for (let j = 0; j < dim; j++) {
        const x = v[j]!;
        s0 += q[r0 + j]! * x;
        s1 += q[r1 + j]! * x;
        s2 += q[r2 + j]! * x;
        s3 += q[r3 + j]! * x;
      }
      out[i] = s0;
      out[i + 1] = s1;
      out[i + 2] = s2;
      out[i + 3] = s3;
    }
    for (; i < dim; i++) {
      let sum = 0;
      const row = i * dim;
      for (let j = 0; j < dim; j++) sum += q[row + j]! * v[j]!;
      out[i] = sum;
    }
    return out as KeyedVector;
  }

  /** Qᵀ·v, the inverse. */
  invert(v: Float32Array): Float32Array {
    const { q, dim } = this;
    const out = new Float64Array(dim);
    for (let i = 0; i < dim; i++) {
      const x = v[i]!;
      const row = i * dim;
      for (let j = 0; j < dim; j++) out[j]! += q[row + j]! * x;
    }
    return Float32Array.from(out);
  }
}

/** `n` standard normal numbers from the key's keystream (Box-Muller over pairs of 32-bit words). */
function gaussians(key: Uint8Array, n: number): Float64Array {
  const cipher = createCipheriv("aes-256-ctr", key, Buffer.alloc(16));
  const words = n + (n % 2);
  const stream = cipher.update(Buffer.alloc(words * 4));
  const u = new Uint32Array(stream.buffer, stream.byteOffset, words);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i += 2) {
    const u1 = (u[i]! + 1) / 4294967297;
    const u2 = u[i + 1]! / 4294967296;
    const r = Math.sqrt(-2 * Math.log(u1));
    out[i] = r * Math.cos(2 * Math.PI * u2);
    if (i + 1 < n) out[i + 1] = r * Math.sin(2 * Math.PI * u2);
  }
  return out;
}

const rowsOf = (m: Float64Array, dim: number) => Array.from({ length: dim }, (_, i) => m.subarray(i * dim, (i + 1) * dim));

/** Rows a turn of fromKeyInTurns orthonormalises: row i costs i dot products, so ~2-4 ms a turn at 384. */
const ROWS_PER_TURN = 32;

/**
 * Modified Gram-Schmidt, row `i` of a dim×dim matrix in place, after rows 0 … i-1. Each projection
 * is taken away in the same pass that takes the next one's dot product: the very same operations
 * in the same order as one pass each (the matrix stored vectors were rotated by must not change by
 * a bit), in half the passes over memory (41 -> ~20 ms at 384, once per user and store).
 */
function orthonormaliseRow(rows: Float64Array[], i: number, dim: number): void {
  const a = rows[i]!;
  if (i > 0) {
    let b = rows[0]!;
    let dot = 0;
    for (let j = 0; j < dim; j++) dot += a[j]! * b[j]!;
    for (let k = 1; k < i; k++) {
      const next = rows[k]!;
      let nextDot = 0;
      for (let j = 0; j < dim; j++) {
        const v = a[j]! - dot * b[j]!;
        a[j] = v;
        nextDot += v * next[j]!;
      }
      b = next;
      dot = nextDot;
    }
    for (let j = 0; j < dim; j++) a[j]! -= dot * b[j]!;
  }
  let norm = 0;
  for (let j = 0; j < dim; j++) norm += a[j]! * a[j]!;
  norm = Math.sqrt(norm);
  for (let j = 0; j < dim; j++) a[j]! /= norm;
}
