// BM25 over a small set of candidate texts, for sources that return records without scores
// of their own (IMAP, SQL): the candidates are the collection. Words are compared as the index
// compares them (index-terms.ts: folded, then stemmed): a question's words are found in a
// candidate however either is written, and a record the index found by a word ("Nandos" for
// "NANDO'S") is not scored 0 for it here.
import { foldedWords, stemOf } from "../connectors/index-terms";

const K1 = 1.2;
const B = 0.75;

/** The words of a text as they are compared: folded, stemmed, of two characters or more (read once per text within wordsRemembered: shared, so read-only). */
export function words(text: string): readonly string[] {
  if (!remembered) return wordsOf(text);
  let read = remembered.get(text);
  if (!read) remembered.set(text, (read = wordsOf(text)));
  return read;
}
const wordsOf = (text: string) => foldedWords(text).flatMap((w) => (w.length > 1 ? [stemOf(w)] : []));

/** The texts read by words() within the running wordsRemembered, and their words (shared: readonly, not frozen, which made JSC's reads of them slow). */
let remembered: Map<string, readonly string[]> | undefined;

/**
 * `work` (synchronous: nothing else runs meanwhile) with each text's words read once: an answer
 * scores each candidate statement by several features, each reading its words again (~1.5 of the
 * serving thread's ms a question, issue 36). Forgotten when `work` ends: never shared between
 * questions, so between users (D25), and bounded by what one call reads.
 */
export function wordsRemembered<T>(work: () => T): T {
  if (remembered) return work();
  remembered = new Map();
  try {
    return work();
  } finally {
    remembered = undefined;
  }
}

/** A word's first two characters as one number: stemming keeps them, so a word whose pair no wanted stem has is not stemmed. */
const pairOf = (word: string) => word.charCodeAt(0) * 65_536 + word.charCodeAt(1);

/** A text as BM25 reads it: its length in words and the counts of the question's words. */
export interface CountedText {
  tf: Map<string, number>;
  len: number;
}

/** The question's words, as the texts are read. */
export const queryWords = (terms: string[]) => [...new Set(terms.flatMap(words))];

/**
 * Each text's length in words and the counts of the question's words only: a count of every
 * word was half the time of a question's ranking over a pool of long mails. Read once per
 * question and shared (score.ts: BM25 over the pool, and its rare words).
 */
export function countWords(texts: string[], terms: string[]): CountedText[] {
  const wanted = new Set(queryWords(terms));
  const pairs = new Set([...wanted].map(pairOf));
  return texts.map((t) => {
    const tf = new Map<string, number>();
    let len = 0;
    for (const w of foldedWords(t)) {
      if (w.length < 2) continue;
      len++;
      if (!pairs.has(pairOf(w))) continue;
      const stem = stemOf(w);
      if (wanted.has(stem)) tf.set(stem, (tf.get(stem) ?? 0) + 1);
    }
    return { tf, len };
  });
}

/**
 * A text's words as BM25 reads them, counted once for any question: its length in words and each
 * word's count, as " word:count" runs (a question looks up its few words; ~1 byte a character
 * where a Map of them held ~50 bytes a word), with a hash table of where each run starts, so that
 * a question's word is found in a few probes: searching the runs for it read a long mail's whole
 * counts for each of the question's words, on every question it was a candidate of (9% of the
 * serving thread's CPU, issue 36).
 */
export interface WordCounts {
  len: number;
  counts: string;
  /** Open addressing by wordHash: where each word's run starts in `counts` (past its space, so never 0: 0 is an empty slot); a power of two long, at least twice the words. */
  runs: Uint16Array | Int32Array;
}

/** FNV-1a over a word's UTF-16 code units: where its run is looked for in WordCounts.runs. */
function wordHash(word: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < word.length; i++) h = Math.imul(h ^ word.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Probes made so far looking up words in counted texts (tests count the work: a few per word, whatever the text's length). */
export const wordLookups = { probes: 0 };

/** Every word of `text` counted (wordCountsOf then gives a question's, as countWords does). */
export function wordCounts(text: string): WordCounts {
  const tf = new Map<string, number>();
  let len = 0;
  for (const w of foldedWords(text)) {
    if (w.length < 2) continue;
    len++;
    const stem = stemOf(w);
    // As countWords counts: a word whose stem starts otherwise ("ies": "i") is counted by neither.
    if (stem !== w && pairOf(stem) !== pairOf(w)) continue;
    tf.set(stem, (tf.get(stem) ?? 0) + 1);
  }
  let counts = " ";
  const at: number[] = [];
  for (const [stem, n] of tf) {
    at.push(counts.length);
    counts += `${stem}:${n} `;
  }
  let size = 4;
  while (size < tf.size * 2) size *= 2;
  // Two bytes a slot where the runs are shorter than 64 K characters (a pool text's always are).
  const runs = counts.length < 65_536 ? new Uint16Array(size) : new Int32Array(size);
  let k = 0;
  for (const stem of tf.keys()) {
    let slot = wordHash(stem) & (size - 1);
    while (runs[slot] !== 0) slot = (slot + 1) & (size - 1);
    runs[slot] = at[k++]!;
  }
  return { len, counts, runs };
}

/** Characters a WordCounts holds, its table's bytes counted as characters (record memos' budgets). */
export const wordCountsChars = (w: WordCounts) => w.counts.length + w.runs.byteLength;

/** How often `stem` is counted in `w`: 0 when it is not. */
function countOf(w: WordCounts, stem: string): number {
  const { counts, runs } = w;
  const mask = runs.length - 1;
  for (let slot = wordHash(stem) & mask; ; slot = (slot + 1) & mask) {
    wordLookups.probes++;
    const at = runs[slot]!;
    if (at === 0) return 0;
    if (counts.charCodeAt(at + stem.length) === 58 && counts.startsWith(stem, at)) {
      let n = 0;
      for (let i = at + stem.length + 1; ; i++) {
        const c = counts.charCodeAt(i);
        if (c === 32) return n;
        n = n * 10 + c - 48;
      }
    }
  }
}

/** The question's words' counts in texts counted by wordCounts: what countWords gives for them. */
export function wordCountsOf(texts: WordCounts[], terms: string[]): CountedText[] {
  const wanted = queryWords(terms);
  return texts.map((w) => {
    const tf = new Map<string, number>();
    for (const stem of wanted) {
      const n = countOf(w, stem);
      if (n > 0) tf.set(stem, n);
    }
    return { tf, len: w.len };
  });
}

export const bm25Scores = (texts: string[], terms: string[]): number[] => bm25Of(countWords(texts, terms), terms);

/** BM25 of texts already counted (countWords) for `terms`. */
export function bm25Of(docs: CountedText[], terms: string[]): number[] {
  const query = queryWords(terms);
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
