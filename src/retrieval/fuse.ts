// Step 3: words and meaning fused into one score on the pool's scale, the question's soft
// signals added (evidence.ts), best first.
import { evidence } from "./evidence";
import type { QueryPlan } from "./plan";
import { recordKey } from "./record-memo";
import type { RankedChunk } from "./types";

/**
 * Weight of the dense score in the fusion, tuned on the SciFact train split only
 * (scripts/eval/scifact.ts --split train --sweep, dense on denseScale: nDCG@10 0.750 at 0.60,
 * 0.748 at 0.55 and 0.65, 0.703 for words alone, 0.680 for meaning alone). Test split: 0.746.
 */
export const DENSE_WEIGHT = 0.6;

/**
 * Per unit of cosine below the pool's best, what a candidate's meaning loses: at 0.5 below, all of
 * it. With the weight it is one plateau on the SciFact train split (--spread): 1 at weight 0.75,
 * 2 at 0.60, 3 at 0.50, 4 at 0.45 all give nDCG@10 0.750.
 */
export const DENSE_SPREAD = 2;

/**
 * Meaning on the pool's scale: the best candidate 1, each other less by DENSE_SPREAD times its
 * cosine's distance from the best. A fixed scale, where min-max stretched whatever spread a pool
 * had to 0..1 and so made a few hundredths of cosine between near-equal candidates outweigh
 * their words. Train splits: SciFact 0.743 -> 0.750, business 0.896 -> 0.915 (test: 0.740 ->
 * 0.746, and 0.835 -> 0.827).
 */
export function denseScale(values: number[], spread = DENSE_SPREAD): (cosine: number) => number {
  const best = Math.max(...values);
  return (cosine) => 1 - spread * (best - cosine);
}

/**
 * What a candidate holding all of the question's rare words (score.ts) gains; four times that when
 * it also holds those the question writes as names (score.ts RARE_NAME). Tuned on the train
 * half of scripts/eval/business.ts: 0.915 without, 0.914 at 0.05, 0.917 at 0.1, 0.909 at 0.15
 * (test half: 0.862 without, 0.866 at 0.1); SciFact's claims are too long for it to apply.
 */
export const RARE_BOOST = 0.1;

/** Scores every candidate and sorts them, best first. */
export function fuse(pool: RankedChunk[], plan: QueryPlan, denseWeight = DENSE_WEIGHT, spread = DENSE_SPREAD): RankedChunk[] {
  const w = denseWeight;
  const denseValues = pool.filter((c) => c.dense !== undefined).map((c) => c.dense!);
  const normDense = denseScale(denseValues, spread);
  // A record not yet embedded is taken as of middling meaning: neither first nor last for it.
  const unknownDense = denseValues.length ? denseValues.reduce((a, b) => a + normDense(b), 0) / denseValues.length : 0;
  for (const c of pool) {
    c.score = denseValues.length === 0 ? c.lexical : w * (c.dense === undefined ? unknownDense : normDense(c.dense)) + (1 - w) * c.lexical;
    c.score += evidence(plan, c.record, recordKey(c.owner, c.connectorId, c.record.id)) + RARE_BOOST * (c.rare ?? 0);
    c.score = Math.round(c.score * 10_000) / 10_000;
  }
  return pool.sort((x, y) => y.score - x.score);
}
