// BERT WordPiece tokenizer for a Hugging Face `tokenizer.json` (BertNormalizer, lower-case,
// BertPreTokenizer, WordPiece with "##" continuation). Small enough to own, and it keeps
// the executable free of a tokenizer runtime. It runs on the request thread too (chunking,
// token counts), so the common case is fast: ASCII words by table, each word's pieces
// remembered; anything else takes the general Unicode path, with the same result.
import { readFileSync } from "node:fs";
import { assets } from "../native/assets";

export interface TokenizerFile {
  normalizer?: { lowercase?: boolean; strip_accents?: boolean | null; handle_chinese_chars?: boolean; clean_text?: boolean };
  model: { vocab: Record<string, number>; unk_token: string; continuing_subword_prefix: string; max_input_chars_per_word: number };
}

export interface Encoding {
  ids: number[];
}

function isControl(cp: number, ch: string): boolean {
  if (ch === "\t" || ch === "\n" || ch === "\r") return false;
  return /\p{Cc}|\p{Cf}|\p{Co}|\p{Cs}/u.test(ch) || cp === 0xfffd;
}

function isWhitespace(ch: string): boolean {
  return ch === " " || ch === "\t" || ch === "\n" || ch === "\r" || /\p{Zs}/u.test(ch);
}

function isPunctuation(cp: number, ch: string): boolean {
  // BERT treats every non-alphanumeric ASCII symbol as punctuation, plus Unicode P*.
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126)) return true;
  return /\p{P}/u.test(ch);
}

function isChinese(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b820 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

/** What an ASCII character is to the pre-tokenizer. */
const KEEP = 0;
const SPACE = 1;
const PUNCT = 2;
const DROP = 3;
const ASCII_CLASS = Uint8Array.from({ length: 128 }, (_, cp) =>
  cp === 9 || cp === 10 || cp === 13 || cp === 32
    ? SPACE
    : cp < 32 || cp === 127
      ? DROP
      : isPunctuation(cp, String.fromCharCode(cp))
        ? PUNCT
        : KEEP,
);
const PRINTABLE_ASCII = /^[\t\n\r\x20-\x7e]*$/;
/** How much of a text count() reads before it looks at its limit. */
const COUNT_PART = 4096;

/**
 * Where a text may be cut at or after `start + soft` so that its words stay the same: before white
 * space, before ASCII punctuation or a Chinese character (each a word of its own, D31: a 1 MB
 * single-line CSV or a Chinese text has no white space, and was read whole as one part, ~0.7 s
 * of the serving thread). Within `start + hard`, else there (never between the halves of a
 * surrogate pair): a run longer than that with no such place is one word over the tokenizer's
 * max_input_chars_per_word anyway ([UNK]), counted as two.
 */
export function wordSafeEnd(text: string, start: number, soft: number, hard: number): number {
  const last = Math.min(text.length, start + hard);
  for (let end = start + soft; end < last; end++) {
    const unit = text.charCodeAt(end);
    if (unit < 128 ? ASCII_CLASS[unit] === SPACE || ASCII_CLASS[unit] === PUNCT : isChinese(text.codePointAt(end)!)) return end;
  }
  if (last < text.length && (text.charCodeAt(last) & 0xfc00) === 0xdc00) return last + 1;
  return last;
}
/** Words whose pieces are remembered; past this the memory starts again (mail repeats its words). */
const PIECE_CACHE = 20_000;

export class WordPieceTokenizer {
  readonly clsId: number;
  readonly sepId: number;
  private readonly unkId: number;
  private readonly vocab: Map<string, number>;
  private readonly prefix: string;
  private readonly maxCharsPerWord: number;
  private readonly lowercase: boolean;
  private readonly stripAccents: boolean;
  private readonly pieceCache = new Map<string, number[]>();

  constructor(file: TokenizerFile) {
    this.vocab = new Map(Object.entries(file.model.vocab));
    const id = (t: string) => {
      const v = this.vocab.get(t);
      if (v === undefined) throw new Error(`tokenizer: vocabulary has no ${t}`);
      return v;
    };
    this.clsId = id("[CLS]");
    this.sepId = id("[SEP]");
    this.unkId = id(file.model.unk_token);
    this.prefix = file.model.continuing_subword_prefix;
    this.maxCharsPerWord = file.model.max_input_chars_per_word;
    this.lowercase = file.normalizer?.lowercase ?? true;
    // Hugging Face: strip_accents null follows lowercase.
    this.stripAccents = file.normalizer?.strip_accents ?? this.lowercase;
  }

  /**
   * Words after normalisation and pre-tokenisation (whitespace and punctuation splits). Control
   * characters are dropped and whitespace splits, as BERT does; each piece between whitespace
   * (and each Chinese character) is then normalised and split at punctuation on its own, which
   * gives what normalising the whole text would.
   */
  words(text: string): string[] {
    if (PRINTABLE_ASCII.test(text)) return this.printableWords(text);
    const out: string[] = [];
    let piece = "";
    let ascii = true;
    const flush = () => {
      if (piece) {
        if (ascii) this.asciiWords(piece, out);
        else this.unicodeWords(piece, out);
      }
      piece = "";
      ascii = true;
    };
    for (let i = 0; i < text.length; i++) {
      const unit = text.charCodeAt(i);
      if (unit < 128) {
        const kind = ASCII_CLASS[unit];
        if (kind === SPACE) flush();
        else if (kind !== DROP) piece += text[i];
        continue;
      }
      const cp = text.codePointAt(i)!;
      const ch = String.fromCodePoint(cp);
      if (cp > 0xffff) i++;
      if (isControl(cp, ch)) continue;
      if (isWhitespace(ch)) flush();
      else if (isChinese(cp)) {
        flush();
        this.unicodeWords(ch, out);
      } else {
        piece += ch;
        ascii = false;
      }
    }
    flush();
    return out;
  }

  /** Printable ASCII and whitespace only (most mail): one pass, no normalisation needed. */
  private printableWords(text: string): string[] {
    const t = this.lowercase ? text.toLowerCase() : text;
    const out: string[] = [];
    let start = -1;
    for (let i = 0; i < t.length; i++) {
      const kind = ASCII_CLASS[t.charCodeAt(i)];
      if (kind === KEEP) {
        if (start < 0) start = i;
        continue;
      }
      if (start >= 0) out.push(t.slice(start, i));
      start = -1;
      if (kind === PUNCT) out.push(t[i]!);
    }
    if (start >= 0) out.push(t.slice(start));
    return out;
  }

  /** ASCII between whitespace: lower-cased, split at punctuation. */
  private asciiWords(piece: string, out: string[]): void {
    let start = 0;
    for (let i = 0; i < piece.length; i++) {
      if (ASCII_CLASS[piece.charCodeAt(i)] !== PUNCT) continue;
      if (i > start) out.push(this.lowercase ? piece.slice(start, i).toLowerCase() : piece.slice(start, i));
      out.push(piece[i]!);
      start = i + 1;
    }
    if (start < piece.length) out.push(this.lowercase ? piece.slice(start).toLowerCase() : piece.slice(start));
  }

  /** Anything else between whitespace: lower-cased, accents stripped (NFD), split at Unicode punctuation. */
  private unicodeWords(piece: string, out: string[]): void {
    let cleaned = this.lowercase ? piece.toLowerCase() : piece;
    if (this.stripAccents) cleaned = cleaned.normalize("NFD").replace(/\p{Mn}/gu, "");
    let current = "";
    for (const ch of cleaned) {
      if (isPunctuation(ch.codePointAt(0)!, ch)) {
        if (current) out.push(current);
        out.push(ch);
        current = "";
      } else current += ch;
    }
    if (current) out.push(current);
  }

  /** The word's pieces (ids), remembered. */
  private pieces(word: string): number[] {
    let ids = this.pieceCache.get(word);
    if (!ids) {
      ids = this.wordPiece(word);
      if (this.pieceCache.size >= PIECE_CACHE) this.pieceCache.clear();
      this.pieceCache.set(word, ids);
    }
    return ids;
  }

  /** Greedy longest-match-first over the vocabulary; a word with no match is [UNK]. */
  private wordPiece(word: string): number[] {
    // Code points, not UTF-16 units: an ASCII word is its own array of characters.
    const chars = /^[\p{ASCII}]*$/u.test(word) ? word : Array.from(word);
    const slice = (a: number, b: number) => (typeof chars === "string" ? chars.slice(a, b) : chars.slice(a, b).join(""));
    if (chars.length > this.maxCharsPerWord) return [this.unkId];
    const pieces: number[] = [];
    let start = 0;
    while (start < chars.length) {
      let end = chars.length;
      let found: number | undefined;
      while (start < end) {
        found = this.vocab.get((start > 0 ? this.prefix : "") + slice(start, end));
        if (found !== undefined) break;
        end--;
      }
      if (found === undefined) return [this.unkId];
      pieces.push(found);
      start = end;
    }
    return pieces;
  }

  /** Token ids of `text` wrapped in [CLS] … [SEP], truncated to `maxLength` in all. */
  encode(text: string, maxLength: number): Encoding {
    const ids = [this.clsId];
    const budget = maxLength - 1;
    for (const word of this.words(text)) {
      for (const id of this.pieces(word)) ids.push(id);
      if (ids.length >= budget) break;
    }
    if (ids.length > budget) ids.length = budget;
    ids.push(this.sepId);
    return { ids };
  }

  /**
   * Number of word-piece tokens in `text`, without the special tokens; once past `limit`, some
   * number above it (a long mail asked whether it fits one chunk is not counted to its end).
   */
  count(text: string, limit = Number.POSITIVE_INFINITY): number {
    let n = 0;
    // A part at a time, each cut where a word ends anyway (wordSafeEnd).
    for (let start = 0; start < text.length && n <= limit; ) {
      const end = wordSafeEnd(text, start, COUNT_PART, 2 * COUNT_PART);
      for (const word of this.words(text.slice(start, end))) n += this.pieces(word).length;
      start = end;
    }
    return n;
  }
}

/** The shipped model's tokenizer (models/tokenizer.json), read and parsed: once per thread that uses it (each has its own). */
export const shippedTokenizer = (): WordPieceTokenizer =>
  new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")) as TokenizerFile);
