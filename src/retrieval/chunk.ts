// Records longer than the model's window (256 tokens) are cut into chunks for embedding and
// display: sentence boundaries where possible, each chunk at most CHUNK_TOKENS word pieces.
// Deterministic, so a chunk can be found again by its record and position.
import { type WordPieceTokenizer, wordSafeEnd } from "../embedding/tokenizer";

/** Room for the title and the special tokens inside the model's 256. */
export const CHUNK_TOKENS = 200;
const MAX_CHUNKS = 64;
/**
 * Characters of a text that are cut into chunks; what follows never is. MAX_CHUNKS chunks of
 * CHUNK_TOKENS word pieces hold ~60 KB of English; this leaves room for pieces of 20 characters.
 * Cutting all of a 1 MB row took ~0.3-1 s of the request thread, on every question (D31).
 */
export const CHUNKED_CHARS = 256 * 1024;
/** A run without white space is cut into pieces of at most this many characters (the tokenizer's longest word). */
const LONG_WORD_CHARS = 100;
/**
 * Characters a chunk holds at most: CHUNK_TOKENS words of the longest. A run of letters is one
 * word piece ([UNK]) per 100 characters or more: 256 K of them fit CHUNK_TOKENS, and were one chunk (D31).
 */
const CHUNK_CHARS = CHUNK_TOKENS * LONG_WORD_CHARS;

export function chunkText(text: string, tokenizer: WordPieceTokenizer, maxTokens = CHUNK_TOKENS): string[] {
  const clean = text
    .slice(0, CHUNKED_CHARS)
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+/g, " ")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (!clean) return [];
  if (clean.length <= CHUNK_CHARS && tokenizer.count(clean, maxTokens) <= maxTokens) return [clean];
  // Each piece with the break before it: a line break stays one in the chunk (an invoice's address
  // and phone lines, a mail's headers), so that an answer can tell lines apart; tokens are the same.
  const parts = clean.split(/((?<=[.!?])\s+|\n+)/);
  const pieces: Array<{ sentence: string; lineBefore: boolean }> = [];
  for (let i = 0; i < parts.length; i += 2)
    if (parts[i]!.trim()) pieces.push({ sentence: parts[i]!, lineBefore: i > 0 && parts[i - 1]!.includes("\n") });
  const chunks: string[] = [];
  let current = "";
  let tokens = 0;
  const flush = () => {
    if (current) chunks.push(current.trim());
    current = "";
    tokens = 0;
  };
  for (const { sentence, lineBefore } of pieces) {
    // Counted only as far as a chunk holds: a longer sentence is cut by words below.
    const n = sentence.length > CHUNK_CHARS ? maxTokens + 1 : tokenizer.count(sentence, maxTokens);
    if (n > maxTokens) {
      // A sentence longer than a chunk is cut by words.
      flush();
      let words = "";
      let wt = 0;
      const whole = (word: string) => word.length <= CHUNK_CHARS && tokenizer.count(word, maxTokens) <= maxTokens;
      for (const { word, glued } of wordsOf(sentence, whole)) {
        if (chunks.length >= MAX_CHUNKS) break;
        const c = tokenizer.count(word);
        if ((wt + c > maxTokens || words.length + word.length >= CHUNK_CHARS) && words) {
          chunks.push(words);
          words = "";
          wt = 0;
        }
        words += words && !glued ? ` ${word}` : word;
        wt += c;
      }
      if (words) chunks.push(words);
      if (chunks.length >= MAX_CHUNKS) break;
      continue;
    }
    if (tokens + n > maxTokens || current.length + sentence.length >= CHUNK_CHARS) flush();
    current += (current ? (lineBefore ? "\n" : " ") : "") + sentence.trim();
    tokens += n;
    if (chunks.length >= MAX_CHUNKS) break;
  }
  flush();
  return chunks.slice(0, MAX_CHUNKS);
}

/**
 * `text.split(/\s+/)`, one word at a time: a sentence of 256 K characters without a stop was
 * split whole for the few thousand words 64 chunks hold (D31: the work follows the chunks). A
 * word longer than LONG_WORD_CHARS that does not fit a chunk `whole` (a single-line CSV, Chinese
 * text; not a long URL) comes in pieces `glued` to the one before, cut where its tokens stay the
 * same where it can be: whole, it was one chunk of 256 K characters, counted whole.
 */
function* wordsOf(text: string, whole: (word: string) => boolean): Generator<{ word: string; glued: boolean }> {
  const space = /\s+/g;
  let at = 0;
  for (let m = space.exec(text); ; m = space.exec(text)) {
    const end = m ? m.index : text.length;
    const cut = end - at > LONG_WORD_CHARS && !whole(text.slice(at, end));
    for (let from = at; from < end || from === at; ) {
      const to = !cut || end - from <= LONG_WORD_CHARS ? end : wordSafeEnd(text, from, LONG_WORD_CHARS / 2, LONG_WORD_CHARS);
      yield { word: text.slice(from, to), glued: from > at };
      if (to === end) break;
      from = to;
    }
    if (!m) return;
    at = m.index + m[0].length;
  }
}

/** What is embedded for a chunk: the record's title gives it context. */
export const embeddingText = (title: string, chunk: string) => (title && !chunk.startsWith(title) ? `${title}\n${chunk}` : chunk);

/**
 * A chunk from what was embedded for it (embeddingText), its title taken off again. A chunk that
 * itself began with its title and a line break was embedded as it was, and comes back without
 * them (the result shows the title beside it).
 */
export const chunkOfEmbedded = (title: string, text: string) =>
  title && text.startsWith(`${title}\n`) ? text.slice(title.length + 1) : text;

/** The chunks of a record (its title alone when it has no text). */
export function recordChunks(record: { title: string; content: string }, tokenizer: WordPieceTokenizer): string[] {
  const chunks = chunkText(record.content, tokenizer);
  return chunks.length ? chunks : record.title ? [record.title] : [];
}

/** The texts a record is embedded as, in order: its chunks, each with its title (what a local index stores a vector of). */
export const embeddedChunks = (record: { title: string; content: string }, tokenizer: WordPieceTokenizer): string[] =>
  recordChunks(record, tokenizer).map((chunk) => embeddingText(record.title, chunk));
