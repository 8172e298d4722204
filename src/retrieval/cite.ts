// Step 5: the chunk each kept result cites: the one that matched by meaning, else by words; in
// a mail, its own words before the message it quotes or forwards.
import { words } from "./bm25";
import type { RankedChunk } from "./types";

/** Sets the text of each result's cited chunk (`chunksOf` gives a record's chunks) and drops the chunks kept while ranking. */
export function cite(kept: RankedChunk[], terms: string[], chunksOf: (c: RankedChunk) => string[]): void {
  for (const c of kept) {
    const chunks = c.chunks ?? chunksOf(c);
    if (c.chunkIndex < 0 || c.chunkIndex >= chunks.length) c.chunkIndex = bestByWords(chunks, terms);
    if (c.record.type === "email") c.chunkIndex = ownTextFirst(c.record.content, chunks, c.chunkIndex, terms);
    c.text = chunks[c.chunkIndex] ?? c.record.title;
    delete c.chunks;
  }
}

/** Where a mail's quoted or forwarded part begins (its length when there is none). */
const QUOTE_START =
  /-{3,}\s*(original message|forwarded by)|^\s*"?[^"\n]{1,60}"?\s*<[^>\s]+@[^>\s]+>\s+on\s+\d|^\s*on .{5,80} wrote:\s*$|^>/im;

/**
 * The chunk to cite from a mail: its own words rather than the message it quotes or forwards,
 * when its own part speaks to the question at all (issue 16: cited chunks were often
 * "-----Original Message-----" headers).
 */
function ownTextFirst(content: string, chunks: string[], best: number, terms: string[]): number {
  const m = QUOTE_START.exec(content);
  if (!m || m.index < 20) return best;
  const at = (chunk: string) => {
    const probe = chunk.trim().slice(0, 40);
    const i = probe ? content.indexOf(probe) : -1;
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  if (at(chunks[best] ?? "") < m.index) return best;
  const want = new Set(terms.flatMap(words));
  let pick = -1;
  let pickScore = 0;
  chunks.forEach((c, i) => {
    if (at(c) >= m.index) return;
    const score = new Set(words(c).filter((w) => want.has(w))).size;
    if (score > pickScore) {
      pick = i;
      pickScore = score;
    }
  });
  return pick >= 0 ? pick : best;
}

function bestByWords(chunks: string[], terms: string[]): number {
  const want = new Set(terms.flatMap(words));
  let best = 0;
  let bestScore = -1;
  chunks.forEach((c, i) => {
    const score = words(c).filter((w) => want.has(w)).length;
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  });
  return best;
}
