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
  private readonly kindIndex: number[];

  constructor(
    readonly prototypes: readonly Prototype[],
    private readonly vectors: readonly Float32Array[],
  ) {
    if (prototypes.length !== vectors.length) throw new Error("prototypes: one vector per prototype");
    this.kindIndex = prototypes.map((p) => ASKED_KINDS.indexOf(p.kind));
  }

  /** The kind `vector` (a question's, of the same model) is nearest to, its margin and the runner-up. */
  classify(vector: Float32Array): AskedByModel {
    // The NEAREST_PER_KIND best cosines of each kind, descending (a small insertion per prototype).
    const best = ASKED_KINDS.map(() => [] as number[]);
    this.vectors.forEach((p, i) => {
      let s = 0;
      for (let j = 0; j < p.length; j++) s += p[j]! * vector[j]!;
      const top = best[this.kindIndex[i]!]!;
      if (top.length === NEAREST_PER_KIND && s <= top[NEAREST_PER_KIND - 1]!) return;
      top.push(s);
      top.sort((a, b) => b - a);
      if (top.length > NEAREST_PER_KIND) top.pop();
    });
    const scores = best
      .map((top, k) => ({ kind: ASKED_KINDS[k]!, score: top.length ? top.reduce((a, b) => a + b, 0) / top.length : -Infinity }))
      .sort((a, b) => b.score - a.score);
    const [first, second] = [scores[0]!, scores[1]!];
    return { kind: first.kind, confidence: Number.isFinite(second.score) ? first.score - second.score : 1, runnerUp: second.kind };
  }
}
