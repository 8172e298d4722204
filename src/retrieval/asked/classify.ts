// The embedding model classifies what a question asks (D32): the question's vector (the one
// ranking embeds) against the labelled prototypes' vectors, embedded once. A kind scores the mean
// cosine of its NEAREST_PER_KIND nearest prototypes: one dot product per prototype per question.
import { ASKED_KINDS, type AskedKind, type Prototype } from "./prototypes";

/**
 * Prototypes a kind is scored by, its nearest: on the evaluation's train half 3 read 0.79 of the
 * kinds, 2 0.77, 5 0.75, the nearest prototype alone 0.72; a kind's centroid 0.60 (a question's
 * names and things outweigh its question words in a centroid), centred vectors no better (0.76).
 */
export const NEAREST_PER_KIND = 3;

export interface AskedByModel {
  kind: AskedKind;
  /** How much nearer the kind is than the runner-up: the difference of their mean cosines (0 to 2). */
  confidence: number;
  runnerUp: AskedKind;
}

/** The prototypes with their vectors (the model's, normalised: a dot product is their cosine). */
export class AskedPrototypes {
  private readonly kindIndex: Int32Array;
  /** Every prototype's vector, one after another (one array: a tight loop per question). */
  private readonly flat: Float32Array;
  private readonly dim: number;

  constructor(
    readonly prototypes: readonly Prototype[],
    vectors: readonly Float32Array[],
  ) {
    if (prototypes.length !== vectors.length || vectors.length === 0) throw new Error("prototypes: one vector per prototype");
    this.dim = vectors[0]!.length;
    this.flat = new Float32Array(vectors.length * this.dim);
    vectors.forEach((v, i) => {
      this.flat.set(v, i * this.dim);
    });
    this.kindIndex = Int32Array.from(prototypes, (p) => ASKED_KINDS.indexOf(p.kind));
  }

  /** The kind `vector` (a question's, of the same model) is nearest to, its margin and the runner-up. */
  classify(vector: Float32Array): AskedByModel {
    const { dim, flat } = this;
    if (vector.length !== dim) throw new Error("prototypes: a vector of another model");
    // The NEAREST_PER_KIND best cosines of each kind, descending.
    const best = ASKED_KINDS.map(() => [] as number[]);
    for (let i = 0, at = 0; i < this.kindIndex.length; i++, at += dim) {
      let s = 0;
      for (let j = 0; j < dim; j++) s += flat[at + j]! * vector[j]!;
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
    return { kind: first.kind, confidence: Number.isFinite(second.score) ? first.score - second.score : 1, runnerUp: second.kind };
  }
}
