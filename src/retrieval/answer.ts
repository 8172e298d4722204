// Shape C's extractive answer (D9): the sentences of the best chunks that speak to the
// question, each followed by the citation marker of its source.
import { words } from "./bm25";

export interface AnswerSource {
  text: string;
}

const MAX_SENTENCES = 4;

export function extractiveAnswer(question: string, terms: string[], sources: AnswerSource[]): string {
  // The planned terms carry the question's meaning; its function words ("the", "was") do not.
  const want = new Set((terms.length ? terms : words(question)).flatMap(words));
  const picked: Array<{ sentence: string; n: number; score: number; order: number }> = [];
  sources.forEach((s, i) => {
    const sentences = s.text.split(/(?<=[.!?])\s+|\n+/).map((x) => x.trim()).filter((x) => x.length > 12);
    sentences.forEach((sentence, j) => {
      const overlap = new Set(words(sentence).filter((w) => want.has(w))).size;
      // Earlier sources rank higher: the retrieval order already weighs them.
      if (overlap > 0) picked.push({ sentence, n: i + 1, score: overlap - i * 0.25, order: i * 1000 + j });
    });
  });
  const best = picked.sort((a, b) => b.score - a.score).slice(0, MAX_SENTENCES).sort((a, b) => a.order - b.order);
  if (best.length === 0) {
    const first = sources[0]?.text.split(/(?<=[.!?])\s+/)[0]?.trim();
    return first ? `${first} [1]` : "No connected source answers this question.";
  }
  return best.map((b) => `${/[.!?]$/.test(b.sentence) ? b.sentence : `${b.sentence}.`} [${b.n}]`).join(" ");
}
