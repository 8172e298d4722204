// BM25 over a small set of candidate texts, for sources that return records without scores
// of their own (IMAP, SQL): the candidates are the collection. Words are those of the index
// (foldText): a question's words are found in a candidate however either is written.
import { foldedWords } from "../connectors/index-terms";

const K1 = 1.2;
const B = 0.75;

export const words = (text: string) => foldedWords(text).filter((w) => w.length > 1);

export function bm25Scores(texts: string[], terms: string[]): number[] {
  const query = [...new Set(terms.flatMap(words))];
  const wanted = new Set(query);
  // Each text's length in words and the counts of the question's words only: a count of every
  // word was half the time of a question's ranking over a pool of long mails.
  const docs = texts.map((t) => {
    const tf = new Map<string, number>();
    let len = 0;
    for (const w of foldedWords(t)) {
      if (w.length < 2) continue;
      len++;
      if (wanted.has(w)) tf.set(w, (tf.get(w) ?? 0) + 1);
    }
    return { tf, len };
  });
  const n = docs.length;
  const avg = docs.reduce((s, d) => s + d.len, 0) / Math.max(1, n);
  const idf = new Map(
    query.map((q) => {
      const df = docs.filter((d) => d.tf.has(q)).length;
      return [q, Math.log(1 + (n - df + 0.5) / (df + 0.5))];
    }),
  );
  return docs.map((d) =>
    query.reduce((score, q) => {
      const f = d.tf.get(q) ?? 0;
      return f ? score + idf.get(q)! * ((f * (K1 + 1)) / (f + K1 * (1 - B + (B * d.len) / Math.max(1, avg)))) : score;
    }, 0),
  );
}
