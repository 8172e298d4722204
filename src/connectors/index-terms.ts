// The words of a local index, blinded (D25). Words are cut and normalised here, as FTS5's
// `porter unicode61 remove_diacritics 2` tokenizer did (Unicode letters and digits, lower case,
// no diacritics, English words Porter-stemmed), and each is stored as a keyed hash under a key
// of its owner: BM25, phrases and incremental updates work on the hashes as on the words, but
// nothing in the database spells a word, and destroying the key leaves noise.
import { createHmac } from "node:crypto";
import { stemmer } from "stemmer";
import { INVISIBLE, ownCopy } from "../text";

/** Words remembered per index (~100 bytes each): the vocabulary repeats, the stem and hash need not be recomputed. */
const MEMO_LIMIT = 50_000;
/** The longest word remembered: a longer one (a hex dump, a run of letters) rarely comes again, and would make the memo's bytes unbounded. */
const MEMO_WORD_CHARS = 64;
/** Hex digits kept of each keyed hash (64 bits): hex never spells a word of the text. */
const TERM_CHARS = 16;

/**
 * The format of the words below, kept with each record's words (connector_docs.terms_format): a
 * change of how words are cut or folded raises it, and records of an older one have their
 * words written again (reblindStale). 1: letters and digits, NFKD without marks, lower case.
 * 2: and a soft hyphen or other invisible character inside a word joined, ß as ss, ς as σ,
 * Chinese and Japanese cut in overlapping pairs of characters.
 */
export const TERMS_FORMAT = 2;

const NON_ASCII = /[^\p{ASCII}]/u;
const NOT_WORD = /[^\p{L}\p{N}]+/u;
/** Scripts written without spaces between words: a word of them is found by its pairs of characters. */
const UNSPACED_CHAR = "\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}\\p{Script_Extensions=Katakana}";
const UNSPACED = new RegExp(`[${UNSPACED_CHAR}]+`, "gu");
const HAS_UNSPACED = new RegExp(`[${UNSPACED_CHAR}]`, "u");

/**
 * Text as words are compared, in the index and in questions alike: lower case, without
 * diacritics or other combining marks (NFKD), so "résumé" in either form, a Turkish "İ" and a
 * word written with vowel signs are one word on both sides; nothing invisible inside a word
 * ("Rech\u00ADnung"); "ß" as "ss"; Greek's final sigma as a sigma (lower-casing writes "ς" or
 * "σ" by what follows the letter).
 */
export function foldText(text: string): string {
  // Most text is ASCII: nothing to decompose.
  return NON_ASCII.test(text)
    ? text
        .replace(INVISIBLE, "")
        .normalize("NFKD")
        .replace(/\p{M}+/gu, "")
        .toLowerCase()
        .replaceAll("ß", "ss")
        .replaceAll("ς", "σ")
    : text.toLowerCase();
}

/**
 * The words of `text`, folded (foldText), in order, not yet stemmed: runs of letters and digits;
 * a run of Chinese or Japanese as its overlapping pairs of characters ("明日の会議" is 明日 日の
 * の会 会議), so that a word inside it is found, as a phrase of its pairs.
 */
export function foldedWords(text: string): string[] {
  // split, not matchAll: half the time over a question's pool of candidate texts. It leaves an
  // empty string only at an end that is not a word.
  const words = foldText(text).split(NOT_WORD);
  if (words.at(-1) === "") words.pop();
  if (words[0] === "") words.shift();
  if (!NON_ASCII.test(text) || !HAS_UNSPACED.test(text)) return words;
  const out: string[] = [];
  for (const word of words) {
    if (!HAS_UNSPACED.test(word)) {
      out.push(word);
      continue;
    }
    let at = 0;
    for (const m of word.matchAll(UNSPACED)) {
      if (m.index > at) out.push(word.slice(at, m.index));
      pushPairs(m[0], out);
      at = m.index + m[0].length;
    }
    if (at < word.length) out.push(word.slice(at));
  }
  return out;
}

/** A run's overlapping pairs of characters (code points), a single character alone, onto `out` (one by one: a run may be millions long). */
function pushPairs(run: string, out: string[]): void {
  let previous: string | undefined;
  let pairs = 0;
  for (const ch of run) {
    if (previous !== undefined) {
      out.push(previous + ch);
      pairs++;
    }
    previous = ch;
  }
  if (pairs === 0 && previous !== undefined) out.push(previous);
}

/** Words the stemmer changes: English letters only, three or more. */
const STEMMABLE = /^[a-z]{3,}$/;

/** A folded word as the index knows it: English words Porter-stemmed ("nandos" and "Nando's" meet as "nando"). */
export const stemmed = (word: string) => (STEMMABLE.test(word) ? stemmer(word) : word);

/**
 * `compute(word)`, remembered in `memo`, which is emptied past MEMO_LIMIT; a word longer than
 * MEMO_WORD_CHARS is not kept. The word is cut from a record's text: it is kept as its own copy,
 * not holding that text.
 */
function remembered(memo: Map<string, string>, word: string, compute: (word: string) => string): string {
  let value = memo.get(word);
  if (value === undefined) {
    value = compute(word);
    if (word.length > MEMO_WORD_CHARS) return value;
    if (memo.size >= MEMO_LIMIT) memo.clear();
    memo.set(ownCopy(word), value);
  }
  return value;
}

const stems = new Map<string, string>();
/**
 * `stemmed`, remembered across calls (candidates' vocabulary repeats from question to question).
 * Digits, other scripts and short words are returned as they are, never remembered: a record of
 * distinct numbers or Chinese pairs would empty the memo for every question (outside attack).
 */
export const stemOf = (word: string): string => (STEMMABLE.test(word) ? remembered(stems, word, stemmer) : word);

/** Characters blinded in one turn of the event loop by textInTurns (~15-25 ms). */
export const BLIND_SLICE_CHARS = 100_000;
/** A space, tab or line break: no word goes across one. */
const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x09 || c === 0x0d;

export class TermBlinder {
  /** By folded word, its blinded stem: stemming each occurrence again was half the time of a long mail's indexing. */
  private readonly memo = new Map<string, string>();
  private keyValue?: Buffer;

  /** `key` is asked for on first use: a deleted owner's index fails instead of making a key. */
  constructor(private readonly key: () => Buffer) {}

  private hash(value: string): string {
    this.keyValue ??= this.key();
    // Only the hex kept: a slice of the whole digest's hex would hold all of it.
    return createHmac("sha256", this.keyValue)
      .update(value)
      .digest()
      .toString("hex", 0, TERM_CHARS / 2);
  }

  /** A folded word as the index stores it: its stem, blinded. */
  term(word: string): string {
    return remembered(this.memo, word, (w) => this.hash(`w\u0000${stemmed(w)}`));
  }

  /** A text as the index stores it: one blinded term per word, in order. */
  text(text: string): string {
    return foldedWords(text)
      .map((w) => this.term(w))
      .join(" ");
  }

  /**
   * The same as text(), a slice of BLIND_SLICE_CHARS at a time (cut at a space, which no word
   * spans), the event loop turning between slices: 4 M characters took ~0.5-1 s to blind, in one
   * go on the serving thread (D31).
   */
  async textInTurns(text: string): Promise<string> {
    if (text.length <= BLIND_SLICE_CHARS) return this.text(text);
    const parts: string[] = [];
    for (let at = 0; at < text.length; ) {
      let end = Math.min(text.length, at + BLIND_SLICE_CHARS);
      while (end < text.length && !isSpace(text.charCodeAt(end))) end++;
      const part = this.text(text.slice(at, end));
      if (part) parts.push(part);
      at = end;
      if (at < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return parts.join(" ");
  }

  /** A source's path or name as the index stores it. */
  source(source: string): string {
    return this.hash(`s\u0000${source}`);
  }

  /** FTS5 MATCH expression: any of the needles, each a quoted phrase of blinded terms (`phrases`: those quoted in the question). */
  match(needles: string[], phrases: ReadonlySet<string> = new Set()): string | undefined {
    const parts = needles.flatMap((n) => {
      // A word of Chinese or Japanese (a question written as one run, "会議はいつですか") asks for
      // each of its pairs of characters, ranked by BM25: as one phrase it matched only a text
      // holding the whole question. Quoted, it stays a phrase.
      if (!phrases.has(n) && HAS_UNSPACED.test(n)) return foldedWords(n).map((w) => this.term(w));
      const text = this.text(n);
      return text ? [text] : [];
    });
    const quoted = [...new Set(parts)].map((p) => `"${p}"`);
    return quoted.length ? quoted.join(" OR ") : undefined;
  }
}
