// The embedding model classifies what a question asks (D32): the question's vector (the one
// ranking embeds) against the labelled prototypes' vectors, computed when the project is built
// (scripts/asked-vectors.ts writes prototype-vectors.json), so that no data folder embeds them and
// the first question waits for nothing. A kind scores the mean cosine of its NEAREST_PER_KIND
// nearest prototypes: one dot product per prototype per question (~700 x 384).
import stored from "./prototype-vectors.json";
import { ASKED_KINDS, type Asks, prototypesDigest, prototypesOf } from "./prototypes";

/**
 * Prototypes a kind is scored by, its nearest. The model alone on the train halves (the
 * evaluation's questions, the paraphrases), 694 prototypes: 3 read 0.765 and 0.540, 2 0.735 and
 * 0.480, 5 0.758 and 0.540, 8 0.720 and 0.580, the nearest alone 0.689 and 0.420; a kind's centroid
 * 0.606 and 0.520 (a question's names and things outweigh its question words in a centroid).
 */
export const NEAREST_PER_KIND = 3;

export interface AskedByModel {
  kind: Asks;
  /** How much nearer the kind is than the runner-up: the difference of their mean cosines (0 to 2). */
  margin: number;
  runnerUp: Asks;
}

/** The stored vectors' file: written by scripts/asked-vectors.ts, never by hand. */
export interface PrototypeVectorsFile {
  note: string;
  /** The sha256 of the model that computed them (src/native/assets.ts embeddingModel). */
  model: string;
  /** prototypesDigest of the prototypes they are the vectors of, in order. */
  prototypes: string;
  dim: number;
  /** Base64 of a Float32Array: each vector's scale (its largest component / 127). */
  scales: string;
  /** Base64 of an Int8Array: the vectors one after another, each component / its scale. */
  vectors: string;
}

/**
 * The prototypes' kinds and vectors, quantised to int8 with a scale per vector (a quarter of
 * float32's size; cosines within ~0.002 of float32's, the same kinds on the evaluation's questions).
 */
export class AskedPrototypes {
  private readonly kindIndex: Int32Array;

  constructor(
    kinds: readonly Asks[],
    /** Every prototype's quantised vector, one after another (one array: a tight loop per question). */
    private readonly vectors: Int8Array,
    private readonly scales: Float32Array,
    readonly dim: number,
  ) {
    if (kinds.length === 0 || scales.length !== kinds.length || vectors.length !== kinds.length * dim)
      throw new Error("prototypes: one vector per prototype");
    this.kindIndex = Int32Array.from(kinds, (k) => ASKED_KINDS.indexOf(k));
  }

  get size(): number {
    return this.kindIndex.length;
  }

  /** Prototype `i`'s vector as float32 (tests, the generator's check). */
  vector(i: number): Float32Array {
    const scale = this.scales[i]!;
    return Float32Array.from(this.vectors.subarray(i * this.dim, (i + 1) * this.dim), (x) => x * scale);
  }

  /** The kind `vector` (a question's, of the same model, normalised) is nearest to, its margin and the runner-up. */
  classify(vector: Float32Array): AskedByModel {
    const { dim, vectors } = this;
    if (vector.length !== dim) throw new Error("prototypes: a vector of another model");
    // The NEAREST_PER_KIND best cosines of each kind, descending.
    const best = ASKED_KINDS.map(() => [] as number[]);
    for (let i = 0, at = 0; i < this.kindIndex.length; i++, at += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += vectors[at + j]! * vector[j]!;
      s *= this.scales[i]!;
      const top = best[this.kindIndex[i]!]!;
      if (top.length === NEAREST_PER_KIND && s <= top[NEAREST_PER_KIND - 1]!) continue;
      let k = top.length;
      while (k > 0 && top[k - 1]! < s) k--;
      top.splice(k, 0, s);
      if (top.length > NEAREST_PER_KIND) top.pop();
    }
    const scores = best
      .map((top, k) => ({ kind: ASKED_KINDS[k]!, score: top.length ? top.reduce((a, b) => a + b, 0) / top.length : -Infinity }))
      .sort((a, b) => b.score - a.score);
    const [first, second] = [scores[0]!, scores[1]!];
    return { kind: first.kind, margin: Number.isFinite(second.score) ? first.score - second.score : 1, runnerUp: second.kind };
  }
}

/** `vectors` (normalised float32) quantised for the file: a scale per vector, int8 components. */
export function quantise(vectors: readonly Float32Array[]): { scales: Float32Array; vectors: Int8Array } {
  const dim = vectors[0]?.length ?? 0;
  const scales = new Float32Array(vectors.length);
  const out = new Int8Array(vectors.length * dim);
  vectors.forEach((v, i) => {
    let largest = 0;
    for (const x of v) largest = Math.max(largest, Math.abs(x));
    const scale = largest / 127 || 1;
    scales[i] = scale;
    for (let j = 0; j < dim; j++) out[i * dim + j] = Math.round(v[j]! / scale);
  });
  return { scales, vectors: out };
}

const decoded = (base64: string) => {
  const bytes = Buffer.from(base64, "base64");
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
};

/**
 * The stored prototypes of `model` (a sha256), decoded once; undefined when the file's vectors are
 * another model's (an evaluation running another model) or another text's (prototypes.json edited
 * and its vectors not generated again: test/retrieval/asked/prototype-vectors.test.ts fails then).
 */
export function storedPrototypes(model: string, file: PrototypeVectorsFile = stored): AskedPrototypes | undefined {
  if (file.model !== model) return undefined;
  if (file === stored) {
    cached ??= { prototypes: fromFile(file) };
    return cached.prototypes;
  }
  return fromFile(file);
}
let cached: { prototypes: AskedPrototypes | undefined } | undefined;

function fromFile(file: PrototypeVectorsFile): AskedPrototypes | undefined {
  const prototypes = prototypesOf();
  if (file.prototypes !== prototypesDigest(prototypes)) return undefined;
  return new AskedPrototypes(
    prototypes.map((p) => p.kind),
    new Int8Array(decoded(file.vectors)),
    new Float32Array(decoded(file.scales)),
    file.dim,
  );
}
