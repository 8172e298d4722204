// The words of a local index, blinded (D25). Words are cut and normalised here, as FTS5's
// `porter unicode61 remove_diacritics 2` tokenizer did (Unicode letters and digits, lower case,
// no diacritics, English words Porter-stemmed), and each is stored as a keyed hash under a key
// of its owner: BM25, phrases and incremental updates work on the hashes as on the words, but
// nothing in the database spells a word, and destroying the key leaves noise.
import { createHmac } from "node:crypto";
import { stemmer } from "stemmer";
import { INVISIBLE, ownCopy } from "../text";
import { FOLDED_LETTERS } from "./folded-letters";
import { Turns } from "./turns";

/** Words remembered per index (~100 bytes each): the vocabulary repeats, the stem and hash need not be recomputed. */
const MEMO_LIMIT = 50_000;
/**
 * The longest word (UTF-16 units, folded): a longer one is cut to its first MAX_WORD_CHARS, in the
 * index and in questions alike, so that it is still found by them (a hex dump, a token, a run of
 * letters; dropped, it could not be). Whole, one word of 4 M letters was stemmed and hashed at
 * once, ~0.4 s of the serving thread (D31), and no English word is near this long.
 */
export const MAX_WORD_CHARS = 64;
/** Hex digits kept of each keyed hash (64 bits): hex never spells a word of the text. */
const TERM_CHARS = 16;

/**
 * The format of the words below, kept with each record's words (connector_docs.terms_format): a
 * change of how words are cut or folded raises it, and records of an older one have their
 * words written again (reblindStale). 1: letters and digits, NFKD without marks, lower case.
 * 2: and a soft hyphen or other invisible character inside a word joined, ß as ss, ς as σ,
 * Chinese and Japanese cut in overlapping pairs of characters. 3: and a word cut to its first
 * MAX_WORD_CHARS. 4: and the letters no accent makes folded (FOLDED_LETTERS: "ł" l, "ø" o, "æ" ae).
 */
export const TERMS_FORMAT = 4;

const NON_ASCII = /[^\p{ASCII}]/u;
const NOT_WORD = /[^\p{L}\p{N}]+/u;
const FOLDED_LETTER = new RegExp(`[${Object.keys(FOLDED_LETTERS).join("")}]`, "gu");
/** Scripts written without spaces between words: a word of them is found by its pairs of characters. */
const UNSPACED_CHAR = "\\p{Script_Extensions=Han}\\p{Script_Extensions=Hiragana}\\p{Script_Extensions=Katakana}";
const UNSPACED = new RegExp(`[${UNSPACED_CHAR}]+`, "gu");
const HAS_UNSPACED = new RegExp(`[${UNSPACED_CHAR}]`, "u");

/**
 * Text as words are compared, in the index and in questions alike: lower case, without
 * diacritics or other combining marks (NFKD), so "résumé" in either form, a Turkish "İ" and a
 * word written with vowel signs are one word on both sides; nothing invisible inside a word
 * ("Rech\u00ADnung"); a letter no accent makes as it is written without it (FOLDED_LETTERS:
 * "Łódź" is "lodz", "Straße" "strasse", "Ærø" "aero"); Greek's final sigma as a sigma.
 */
export function foldText(text: string): string {
  // Most text is ASCII: nothing to decompose.
  return NON_ASCII.test(text)
    ? text
        .replace(INVISIBLE, "")
        .normalize("NFKD")
        .replace(/\p{M}+/gu, "")
        .toLowerCase()
        .replace(FOLDED_LETTER, (c) => FOLDED_LETTERS[c]!)
    : text.toLowerCase();
}

/** A folded word, cut to its first MAX_WORD_CHARS (never between the halves of a surrogate pair). */
function capped(word: string): string {
  if (word.length <= MAX_WORD_CHARS) return word;
  const last = word.charCodeAt(MAX_WORD_CHARS - 1);
  return word.slice(0, last >= 0xd800 && last <= 0xdbff ? MAX_WORD_CHARS - 1 : MAX_WORD_CHARS);
}

/**
 * The words of `text`, folded (foldText), in order, not yet stemmed: runs of letters and digits,
 * each cut to its first MAX_WORD_CHARS; a run of Chinese or Japanese as its overlapping pairs of
 * characters ("明日の会議" is 明日 日の の会 会議), so that a word inside it is found, as a phrase
 * of its pairs.
 */
export function foldedWords(text: string): string[] {
  // split, not matchAll: half the time over a question's pool of candidate texts. It leaves an
  // empty string only at an end that is not a word.
  const words = foldText(text).split(NOT_WORD);
  if (words.at(-1) === "") words.pop();
  if (words[0] === "") words.shift();
  if (!NON_ASCII.test(text) || !HAS_UNSPACED.test(text)) {
    for (let i = 0; i < words.length; i++) if (words[i]!.length > MAX_WORD_CHARS) words[i] = capped(words[i]!);
    return words;
  }
  const out: string[] = [];
  for (const word of words) {
    if (!HAS_UNSPACED.test(word)) {
      out.push(capped(word));
      continue;
    }
    let at = 0;
    for (const m of word.matchAll(UNSPACED)) {
      if (m.index > at) out.push(capped(word.slice(at, m.index)));
      pushPairs(m[0], out);
      at = m.index + m[0].length;
    }
    if (at < word.length) out.push(capped(word.slice(at)));
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
 * MAX_WORD_CHARS (none from foldedWords) is not kept. The word is cut from a record's text: it is
 * kept as its own copy, not holding that text.
 */
function remembered(memo: Map<string, string>, word: string, compute: (word: string) => string): string {
  let value = memo.get(word);
  if (value === undefined) {
    value = compute(word);
    if (word.length > MAX_WORD_CHARS) return value;
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

/** Characters cut and folded at a time by textInTurns (~2-5 ms), its words then blinded with turns between them. */
export const BLIND_SLICE_CHARS = 20_000;
/** Words blinded between two looks at the clock (Turns): ~0.3-1 ms of unique words. */
const WORDS_PER_LOOK = 32;
/**
 * Where a slice may end: before a character no word goes across, that gives no letter, digit or
 * mark once folded (not "㎏", which is "kg"); or inside a run of Chinese or Japanese, before its
 * third letter or later (see sliceAt).
 */
const CUT = new RegExp(`[^\\p{L}\\p{N}\\p{M}\\u00AD\\u200B\\u2060\\uFEFF]|(?<=[${UNSPACED_CHAR}]{2})[${UNSPACED_CHAR}]`, "gu");
const WORDLIKE = /[\p{L}\p{N}\p{M}]/u;
const WORD_CHAR = /^[\p{L}\p{N}]$/u;
/** A letter of a run cut in pairs that folds to itself. */
const pairedLetter = (c: string) => WORD_CHAR.test(c) && HAS_UNSPACED.test(c) && c.normalize("NFKD") === c;

/**
 * Where the slice of `text` from `at` ends (`end`), and where the next begins (`next`): past
 * BLIND_SLICE_CHARS, before a character no word goes across; or inside a run of Chinese or
 * Japanese, after a letter that begins the next slice too (each slice's run holds two or more
 * letters, so their pairs are the whole run's). A word of other letters is not cut: its
 * blinded term is of the whole word.
 */
function sliceAt(text: string, at: number): { end: number; next: number } {
  CUT.lastIndex = at + BLIND_SLICE_CHARS;
  for (let m = CUT.exec(text); m; m = CUT.exec(text)) {
    const end = m.index;
    const code = text.charCodeAt(end);
    // Never between the halves of a surrogate pair.
    if (code >= 0xdc00 && code <= 0xdfff) continue;
    const c = m[0];
    if (!WORD_CHAR.test(c)) {
      if (!WORDLIKE.test(c.normalize("NFKD"))) return { end, next: end };
      continue;
    }
    const before = [...text.slice(Math.max(at, end - 4), end)].slice(-2);
    if (before.length === 2 && pairedLetter(c) && before.every(pairedLetter)) return { end, next: end - before[1]!.length };
  }
  return { end: text.length, next: text.length };
}

/**
 * The words of one record the word index takes, at most: FTS5 writes a record's row in one
 * statement on the serving thread, whose cost grows with the record's words and, most, with its
 * distinct words (CPU measured here: 520,000 of one word 39 ms, 50,000 distinct 93 ms, 10,000
 * distinct ~15-20 ms; a 24 MB HTML mail held the thread 56-67 ms in that statement). Past either
 * bound a record's later words are not indexed (D31): it is found by its words up to there, and
 * by meaning as before (its chunks come from its first CHUNKED_CHARS); the log says so.
 */
export const MAX_RECORD_WORDS = 100_000;
export const MAX_RECORD_TERMS = 8_000;
/** Why a record is found by its words in part (the log's reason). */
export const WORDS_CUT = `has more than ${MAX_RECORD_WORDS} words or ${MAX_RECORD_TERMS} distinct words: found by its words up to there`;

/** One record's words as they are blinded, refused past MAX_RECORD_WORDS or MAX_RECORD_TERMS distinct (title and content together). */
export class RecordWords {
  private words = 0;
  private readonly terms = new Set<string>();
  /** Set once a word was refused: the record is indexed by its words in part. */
  cut = false;

  /** Whether the index takes `term`, the record's next word; once one is refused, no later one is taken. */
  take(term: string): boolean {
    if (this.cut) return false;
    if (this.words >= MAX_RECORD_WORDS || (this.terms.size >= MAX_RECORD_TERMS && !this.terms.has(term))) {
      this.cut = true;
      return false;
    }
    this.words++;
    this.terms.add(term);
    return true;
  }
}

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

  /** A text as the index stores it: one blinded term per word, in order; a record's (`record`) up to where its bound refuses one. */
  text(text: string, record?: RecordWords): string {
    if (!record)
      return foldedWords(text)
        .map((w) => this.term(w))
        .join(" ");
    const terms: string[] = [];
    for (const word of foldedWords(text)) {
      const term = this.term(word);
      if (!record.take(term)) break;
      terms.push(term);
    }
    return terms.join(" ");
  }

  /**
   * The same as text(), with the event loop turning whenever `turns`' budget is spent (D31): the
   * text is cut and folded a slice at a time (sliceAt) and its words blinded a few at a time, so
   * no turn is long whatever the text's shape (4 M characters of unique words with no space held
   * the serving thread 17-23 s in one slice: outside attack).
   */
  async textInTurns(text: string, turns = new Turns(), record?: RecordWords): Promise<string> {
    const parts: string[] = [];
    for (let at = 0; at < text.length && !record?.cut; ) {
      const { end, next } = sliceAt(text, at);
      const words = foldedWords(at === 0 && end === text.length ? text : text.slice(at, end));
      const terms: string[] = [];
      for (let i = 0; i < words.length; i++) {
        const term = this.term(words[i]!);
        if (record && !record.take(term)) break;
        terms.push(term);
        if (i % WORDS_PER_LOOK === WORDS_PER_LOOK - 1) await turns.maybe();
      }
      if (terms.length) parts.push(terms.join(" "));
      at = next;
      await turns.maybe();
    }
    return parts.join(" ");
  }

  /** A source's path or name as the index stores it. */
  source(source: string): string {
    return this.hash(`s\u0000${source}`);
  }

  /** FTS5 MATCH expression: any of the needles, each a quoted phrase of blinded terms (`phrases`: those quoted in the question). */
  match(needles: string[], phrases: ReadonlySet<string> = new Set()): string | undefined {
    const parts = this.matchParts(needles, phrases);
    return parts.length ? parts.join(" OR ") : undefined;
  }

  /** The parts match() joins: each needle's quoted phrase of blinded terms, once. */
  matchParts(needles: string[], phrases: ReadonlySet<string> = new Set()): string[] {
    const parts = needles.flatMap((n) => {
      // A word of Chinese or Japanese (a question written as one run, "会議はいつですか") asks for
      // each of its pairs of characters, ranked by BM25: as one phrase it matched only a text
      // holding the whole question. Quoted, it stays a phrase.
      if (!phrases.has(n) && HAS_UNSPACED.test(n)) return foldedWords(n).map((w) => this.term(w));
      const text = this.text(n);
      return text ? [text] : [];
    });
    return [...new Set(parts)].map((p) => `"${p}"`);
  }
}
