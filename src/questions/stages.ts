// How long each stage of a question took, for the operator's metrics (D35): told as they end, to
// whoever listens (the metrics, when served); nothing is kept here.

/**
 * The stages a question passes through (issue 39): `plan` (the question read into its plan, D32,
 * and embedded), `gather` (the connectors asked for candidates, in parallel), `rank` (candidates
 * scored, fused, collapsed and cited), `answer` (a books sum over every transaction, D34, or
 * shape C's extractive answer), `archive` (written before the answer is sent, D12).
 */
export const QUESTION_STAGES = ["plan", "gather", "rank", "answer", "archive"] as const;
export type QuestionStage = (typeof QUESTION_STAGES)[number];

export interface QuestionStageTimes {
  /** Told of each stage's seconds once it ends (the metrics set it). */
  observe?: (stage: QuestionStage, seconds: number) => void;
}

/** Runs `work`, telling `times` how long it took when it ends, thrown or not (a promise: once settled). */
export function timed<T>(times: QuestionStageTimes | undefined, stage: QuestionStage, work: () => T): T {
  const observe = times?.observe;
  if (!observe) return work();
  const started = performance.now();
  const told = () => observe(stage, (performance.now() - started) / 1000);
  let result: T;
  try {
    result = work();
  } catch (error) {
    told();
    throw error;
  }
  if (result instanceof Promise) return result.finally(told) as T;
  told();
  return result;
}
