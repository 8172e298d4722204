// Shape C's answer to a question as the service reads it: its plan (what it asks, its names),
// with the words the test gives (if any) in place of the plan's.
import { type AnswerSource, extractiveAnswer } from "../../src/retrieval/answer";
import { planQuery } from "../../src/retrieval/plan";

export const answerTo = (question: string, terms: string[], sources: AnswerSource[], order?: "desc" | "asc") => {
  const plan = planQuery(question);
  return extractiveAnswer({ ...plan, terms: terms.length ? terms : plan.terms, ...(order ? { order } : {}) }, sources);
};
