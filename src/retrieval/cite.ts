// Step 5: the chunk each kept result cites: the one that matched by meaning, else by words; in
// a mail, its own words before the message it quotes or forwards.
import { words } from "./bm25";
import { recordKey } from "./record-memo";
import type { RankedChunk } from "./types";

/**
 * Sets the text of each result's cited chunk (`chunksOf` gives a record's chunks) and drops the
 * chunks kept while ranking. `fits` (answer.ts chunkFitFor) says how well a chunk holds the kind
 * of answer the question asks for: a document is cited by the chunk with its total or its date
 * rather than by the one nearest in meaning (outside walkthrough: "how much did we pay Amazon Web
 * Services" cited the invoice's footnote, and the answer had no amount to quote).
 */
export function cite(
  kept: RankedChunk[],
  terms: string[],
  chunksOf: (c: RankedChunk) => string[],
  fits?: (chunk: string, key?: string) => number,
): void {
  for (const c of kept) {
    const chunks = c.chunks ?? chunksOf(c);
    if (c.chunkIndex < 0 || c.chunkIndex >= chunks.length) c.chunkIndex = bestByWords(chunks, terms);
    if (c.record.type === "email") c.chunkIndex = ownTextFirst(c.record.content, chunks, c.chunkIndex, terms);
    else if (fits && chunks.length > 1) {
      // Each chunk by its record's key and its place: what is read of it is remembered per version (statement-memo.ts).
      const record = recordKey(c.owner, c.connectorId, c.record.id);
      c.chunkIndex = answeringChunk(chunks, c.chunkIndex, terms, (chunk, i) => fits(chunk, `${record}\u0000${i}`));
    }
    c.text = chunks[c.chunkIndex] ?? c.record.title;
    delete c.chunks;
    delete c.storedChunks;
  }
}

/** The chunk that best holds the kind of answer asked for, of those naming most of the question's words; `best` unless another holds more. */
function answeringChunk(chunks: string[], best: number, terms: string[], fits: (chunk: string, i: number) => number): number {
  const fit = chunks.map(fits);
  const most = Math.max(...fit);
  if (fit[best]! >= most) return best;
  const want = new Set(terms.flatMap(words));
  let pick = best;
  let pickWords = -1;
  chunks.forEach((chunk, i) => {
    if (fit[i]! < most) return;
    const named = new Set(words(chunk).filter((w) => want.has(w))).size;
    if (named > pickWords) {
      pick = i;
      pickWords = named;
    }
  });
  return pick;
}

/**
 * A line that begins a mail's quoted or forwarded part, as its first LINE_PROBE characters show
 * it. Anchored at the line's start and bounded: a crafted line (thousands of '<' and '@') costs
 * one short try, where an unanchored search over the whole mail backtracked quadratically
 * (~2 s a question for a 120 KB line).
 */
const QUOTE_LINE =
  /^\s*-{3,}\s*(original message|forwarded by)|^\s*"?[^"\n]{1,60}"?\s*<[^>\s@]{1,64}@[^>\s]{1,255}>\s+on\s+\d|^\s*on .{5,80} wrote:\s*$|^>/i;
const LINE_PROBE = 400;
/** Whether a mail's line begins the message it quotes or forwards. */
export const startsQuote = (line: string) => QUOTE_LINE.test(line.slice(0, LINE_PROBE));

/** Where a mail's quoted or forwarded part begins: the offset of its first line, if any. */
function quoteStart(content: string): number | undefined {
  let at = 0;
  for (const line of content.split("\n")) {
    if (startsQuote(line)) return at;
    at += line.length + 1;
  }
  return undefined;
}

/**
 * The chunk to cite from a mail: its own words rather than the message it quotes or forwards,
 * when its own part speaks to the question at all (issue 16: cited chunks were often
 * "-----Original Message-----" headers).
 */
function ownTextFirst(content: string, chunks: string[], best: number, terms: string[]): number {
  const start = quoteStart(content);
  if (start === undefined || start < 20) return best;
  const at = (chunk: string) => {
    const probe = chunk.trim().slice(0, 40);
    const i = probe ? content.indexOf(probe) : -1;
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  if (at(chunks[best] ?? "") < start) return best;
  const want = new Set(terms.flatMap(words));
  let pick = -1;
  let pickScore = 0;
  chunks.forEach((c, i) => {
    if (at(c) >= start) return;
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
