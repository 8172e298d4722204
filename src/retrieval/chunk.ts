// Records longer than the model's window (256 tokens) are cut into chunks for embedding and
// display: sentence boundaries where possible, each chunk at most CHUNK_TOKENS word pieces.
// Deterministic, so a chunk can be found again by its record and position.
import type { WordPieceTokenizer } from "../embedding/tokenizer";

/** Room for the title and the special tokens inside the model's 256. */
export const CHUNK_TOKENS = 200;
const MAX_CHUNKS = 64;
/**
 * Characters of a text that are cut into chunks; what follows never is. MAX_CHUNKS chunks of
 * CHUNK_TOKENS word pieces hold ~60 KB of English; this leaves room for pieces of 20 characters.
 * Cutting all of a 1 MB row took ~0.3-1 s of the request thread, on every question (D31).
 */
export const CHUNKED_CHARS = 256 * 1024;

export function chunkText(text: string, tokenizer: WordPieceTokenizer, maxTokens = CHUNK_TOKENS): string[] {
  const clean = text
    .slice(0, CHUNKED_CHARS)
    .replace(/\r\n?/g, "\n")
    .replace(/[ \t]+/g, " ")
    .replace(/\n{3,}/g, "\n\n")
    .trim();
  if (!clean) return [];
  if (tokenizer.count(clean, maxTokens) <= maxTokens) return [clean];
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
    const n = tokenizer.count(sentence, maxTokens);
    if (n > maxTokens) {
      // A sentence longer than a chunk is cut by words.
      flush();
      let words: string[] = [];
      let wt = 0;
      for (const w of wordsOf(sentence)) {
        if (chunks.length >= MAX_CHUNKS) break;
        const c = tokenizer.count(w);
        if (wt + c > maxTokens && words.length) {
          chunks.push(words.join(" "));
          words = [];
          wt = 0;
        }
        words.push(w);
        wt += c;
      }
      if (words.length) chunks.push(words.join(" "));
      if (chunks.length >= MAX_CHUNKS) break;
      continue;
    }
    if (tokens + n > maxTokens) flush();
    current += (current ? (lineBefore ? "\n" : " ") : "") + sentence.trim();
    tokens += n;
    if (chunks.length >= MAX_CHUNKS) break;
  }
  flush();
  return chunks.slice(0, MAX_CHUNKS);
}

/**
 * `text.split(/\s+/)`, one word at a time: a sentence of 256 K characters without a stop was
 * split whole for the few thousand words 64 chunks hold (D31: the work follows the chunks).
 */
function* wordsOf(text: string): Generator<string> {
  const space = /\s+/g;
  let at = 0;
  for (let m = space.exec(text); m; m = space.exec(text)) {
    yield text.slice(at, m.index);
    at = m.index + m[0].length;
  }
  yield text.slice(at);
}

/** What is embedded for a chunk: the record's title gives it context. */
export const embeddingText = (title: string, chunk: string) => (title && !chunk.startsWith(title) ? `${title}\n${chunk}` : chunk);

/** The chunks of a record (its title alone when it has no text). */
export function recordChunks(record: { title: string; content: string }, tokenizer: WordPieceTokenizer): string[] {
  const chunks = chunkText(record.content, tokenizer);
  return chunks.length ? chunks : record.title ? [record.title] : [];
}
