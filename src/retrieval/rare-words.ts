// The question's rare words (a vendor or a shop it names, which the model cannot read) and the
// names it writes: which candidates hold them, a signal score.ts adds to the pool's candidates.
import { TAX } from "./amounts";
import { type CountedText, queryWords } from "./bm25";
import * as WORDS from "./language/words";
import { namesKind } from "./record-kinds";
import type { RankedChunk } from "./types";

/** A word of the question is rare when at most this share of the candidates holds it. */
const RARE_SHARE = 0.1;
/**
 * Questions of at most this many words: in a short question a rare word is what it is about (a
 * vendor, a shop); in a long one (a SciFact claim) the words' BM25 weighs them already, and the
 * signal cost 0.003 of nDCG@10 on SciFact's train split (0.7491 -> 0.7457).
 */
const RARE_QUESTION_WORDS = 4;
/** Pools smaller than this have no rare words: a word in one of five candidates says little. */
const RARE_POOL = 10;

/**
 * Whether a question's words can be rare among `poolSize` candidates: a short question, a pool
 * large enough. The words of the days it writes (`dayWords`, plan.ts) say which of a shop's receipts,
 * not what it is about: "How much did I spend at Home Master Hardware on 22 December 2017?" is short.
 */
export function rareWordsApply(terms: string[], poolSize: number, dayWords: readonly string[] = []): boolean {
  const days = new Set(queryWords([...dayWords]));
  const asked = queryWords(terms).filter((w) => !days.has(w)).length;
  return asked >= 2 && asked <= RARE_QUESTION_WORDS && poolSize >= RARE_POOL;
}

/** Every word of the language tables' German rows (words.ts), as the index folds them. */
const isTable = (v: unknown): v is WORDS.Table => typeof v === "object" && v !== null && Array.isArray((v as WORDS.Table).de);
const GERMAN_WORDS = new Set(
  queryWords(
    Object.values(WORDS).flatMap((v) =>
      isTable(v)
        ? [...v.de]
        : typeof v === "object" && v
          ? Object.values(v)
              .filter(isTable)
              .flatMap((t) => t.de)
          : [],
    ),
  ),
);

/**
 * The question's words written as names: capitalised after its first word, or in capitals ("Netpresse", "Nando's", "NETPRESSE").
 * None in a sentence whose every word is capitalised or in capitals ("How Much Did I Spend At
 * Nando's?", "HOW MUCH …"): its capitals tell no name from the other words. German capitalises
 * every noun: there a word of the tables ("Rechnung", "Gesamtbetrag", "Wechselgeld") is no name,
 * which a vendor's invoice in another language lacked ("Saeco-Rechnung": its Dutch invoice).
 */
export function namesIn(question: string, language?: WORDS.Language): Set<string> {
  const out = new Set<string>();
  const written = [...question.slice(0, NAMES_PROBE).matchAll(/[\p{L}\d'’-]+/gu)].map((m) => m[0]);
  const lettered = written.filter((w) => /\p{L}/u.test(w));
  if (lettered.length >= TITLE_CASE_WORDS && lettered.every((w) => /^\p{Lu}/u.test(w))) return out;
  written.forEach((w, i) => {
    if ((i > 0 && /^\p{Lu}/u.test(w)) || (w.length > 2 && w === w.toUpperCase() && /\p{L}/u.test(w)))
      for (const x of queryWords([w])) if (language !== "de" || !GERMAN_WORDS.has(x)) out.add(x);
  });
  return out;
}

/**
 * The first word of a question, capitalised, as the name it may be ("Bemed pharmacy receipt",
 * "Coolblue order invoices": the vendor asked about). namesIn leaves it out, as every sentence
 * capitalises its first word; here it counts only among the rare words (markRareWords), which a
 * question word never is, and never when it names a kind of record ("Invoices from 2014").
 */
export function leadingName(question: string): string[] {
  const first = /^[\s"'“‘(]*([\p{L}\d'’-]+)/u.exec(question.slice(0, NAMES_PROBE))?.[1];
  if (!first || !/^\p{Lu}/u.test(first) || namesKind(first)) return [];
  return queryWords([first]);
}

/**
 * A question of at least this many words, every one capitalised, is written in capitals, not in
 * names; a shorter one is a list of key words ("COOLBLUE INVOICE TOTAL": second outside attack).
 */
const TITLE_CASE_WORDS = 5;

/** How much of a question is read for names (a question is at most 4,000 characters). */
const NAMES_PROBE = 4_000;
/**
 * What holding every rare word the question writes as a name adds to a candidate's share: the vendor
 * or shop named is what the question is about ("How much VAT was on the Netpresse invoice?": at 1, a
 * record explaining VAT still came first). The business evaluation is the same from 0 to 5.
 */
const RARE_NAME = 3;

/**
 * Each candidate's share of the question's rare words: the name of the vendor or the shop asked
 * about, which the model cannot read ("the total of the Netpresse invoice": a document titled
 * "Invoice" was nearer by meaning and by the common words than the Netpresse invoice itself).
 */
export function markRareWords(
  scored: RankedChunk[],
  counted: CountedText[],
  terms: string[],
  names: Set<string> = new Set(),
  /** The words a record holds anywhere (wholeWordsOf), read when its pool text lacks a rare one; rareness is told by the pool's window (`counted`), as BM25 over the pool weighs words. */
  whole: (k: number) => CountedText = (k) => counted[k]!,
  dayWords: readonly string[] = [],
): void {
  if (!rareWordsApply(terms, counted.length, dayWords)) return;
  const rare = queryWords(terms).filter((w) => {
    // The name of a tax ("VAT") says which amount is asked, not which record: invoices write it
    // BTW, TVA or MwSt, and a record explaining VAT outranked the Coolblue invoice asked about.
    if (TAX.test(w)) return false;
    const n = counted.filter((t) => t.tf.has(w)).length;
    // At least two holders may share a rare word: in a small pool, one record naming every vendor
    // would otherwise make the vendor's own invoice's word common (outside attack).
    return n > 0 && n <= Math.max(2, RARE_SHARE * counted.length);
  });
  if (rare.length === 0) return;
  const rareNames = rare.filter((w) => names.has(w));
  for (const [k, c] of scored.entries()) {
    // Its pool text holds its headers (a sender's name); the whole text, the rest of its words.
    const head = counted[k]!.tf;
    const rest = rare.every((w) => head.has(w)) ? head : whole(k).tf;
    const holds = (w: string) => head.has(w) || rest.has(w);
    c.rare = rare.filter(holds).length / rare.length;
    // All of them: a record holding "Ed" of "Ed Segner" is not the one asked about (a share per
    // name put a mail's broken "ede d" line first as the answer to where his farewell lunch was).
    if (rareNames.length && rareNames.every(holds)) c.rare += RARE_NAME;
  }
}
