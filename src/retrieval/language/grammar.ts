// A small grammar for what a question asks of amounts (D32), from the language tables' rows:
// no list of words that make a question not something.
//   condition:  COMPARATOR [CURRENCY] NUMBER [CURRENCY | COUNTED NOUN | PARTITIVE | %]
//   tax amount: QUANTITY … TAX | WHAT TAX (AUX | ON | end) | WHAT (IS | WAS) DET{0,2} TAX ON
//               | WHAT WAS DET{0,2} TAX end | TAX MONEY-NOUN | TAX ON …, no question word before

import { MONTH_WORDS } from "../document-dates";
import { CURRENCY_CENTS, CURRENCY_CODE_WORDS, CURRENCY_NAMES, CURRENCY_SIGNS } from "./currencies";
import { anyOf, wholeWords } from "./patterns";
import {
  ARTICLES,
  ASKS_QUANTITY,
  ASKS_WHAT,
  AUXILIARIES,
  all,
  BETWEEN,
  COUNTED,
  IDENTIFIER_NOUNS,
  IS,
  MONEY_NOUNS,
  MONEY_WORDS,
  OVER,
  PARTITIVE,
  QUESTION_WORDS,
  RANGE_JOINS,
  SPENDING,
  TAX_NOUNS,
  TAX_ON,
  UNDER,
  WAS,
} from "./words";

const PLURAL = "(?:e?s)?";
/** Comparing with an amount, in any language of the tables ("more than", "boven de", "powyżej"). */
export const COMPARATOR = anyOf([...all(OVER), ...all(UNDER)]);
const OVER_ONLY = new RegExp(`^${anyOf(all(OVER))}$`, "i");
/** "over" or "under", for a comparator as written. */
export const comparisonOf = (written: string): "over" | "under" => (OVER_ONLY.test(written.trim()) ? "over" : "under");

/** A currency before a number ("€", "EUR", "RM"), and after one ("euros", "zł"). */
const BEFORE = `(?:${CURRENCY_SIGNS}|${CURRENCY_CODE_WORDS}(?=\\s?\\d))\\s?`;
const AFTER = `\\s*(?:${CURRENCY_SIGNS}|(?<![\\p{L}])${CURRENCY_NAMES}(?![\\p{L}]))`;
const NUMBER = "\\d[\\d.,]*\\d|\\d";
/** BETWEEN NUMBER JOIN NUMBER, a currency before either or after the second: a range of amounts. */
const RANGE = new RegExp(
  `(?<![\\p{L}])${anyOf(all(BETWEEN))}\\s+(${BEFORE})?(${NUMBER})(${AFTER})?\\s+${anyOf(all(RANGE_JOINS))}\\s+(${BEFORE})?(${NUMBER})(${AFTER})?`,
  "giu",
);
const YEAR = /^(19|20)\d\d$/;
/** What follows a range of days or hours: a month ("between 10 and 20 May"), a time of day ("between 3 and 5 pm", "zwischen 9 und 11 Uhr"). */
const DAYS_OR_HOURS = new RegExp(
  `^\\s*(?:${wholeWords([...MONTH_WORDS, "am", "pm", "a.m", "p.m", "h", "uhr", "heures", "godz", "o'clock", "uur"])}|[.:]\\d)`,
  "iu",
);
/**
 * A range of amounts as the two conditions it is ("between 50 and 100 EUR": "over 50 EUR under
 * 100 EUR"), its currency said with each end; two years without a currency are a time, left to
 * the dates (question-dates.ts), as are days of a month and hours ("between 10 and 20 May 2023",
 * "between 3 and 5 pm").
 */
export function rangesAsComparisons(text: string): string {
  return text.replace(RANGE, (range, before1 = "", low: string, after1 = "", before2 = "", high: string, after2 = "", at: number) => {
    const [before, after] = [before1 || before2, after2 || after1];
    if (!before && !after && YEAR.test(low) && YEAR.test(high)) return range;
    if (!before && !after && DAYS_OR_HOURS.test(text.slice(at + range.length))) return range;
    return `${all(OVER)[0]} ${before}${low}${after} ${RANGE_JOINS.en.at(-1)} ${all(UNDER)[0]} ${before}${high}${after}`;
  });
}

/** A currency beside a compared number, or its cents ("5 cents"). */
const CURRENCY = `(?<![\\p{L}])(?:${CURRENCY_NAMES}|${CURRENCY_CENTS})(?![\\p{L}])`;
const CURRENCY_ONLY = new RegExp(`^(?:${CURRENCY}|${CURRENCY_SIGNS})$`, "iu");
/** What right after a number makes it a count: a thing counted, a record, a part of a whole, a percentage. */
const COUNTED_NEXT = new RegExp(
  `^\\s*(?:%|${wholeWords([...all(COUNTED), ...all(MONEY_NOUNS)], PLURAL)}|${wholeWords(all(PARTITIVE))})`,
  "iu",
);
/** Whether the text right after a compared number says what it counts ("5 orders", "2 days", "10 of the same track", "10%"). */
export const countedNext = (after: string) => COUNTED_NEXT.test(after);

const CONDITION = new RegExp(
  `(?<![\\p{L}])${COMPARATOR}\\s+(?<before>${CURRENCY}\\s?)?\\d[\\d.,]*(?<after>\\s*(?:%|${CURRENCY_SIGNS}|[\\p{L}]+))?`,
  "giu",
);
/** A word of money in the question: an amount compared beside it is money ("invoices over 1000", "spend over 100"). */
const MONEY_NAMED = new RegExp(`${wholeWords(all(MONEY_NOUNS), PLURAL)}|${wholeWords([...all(MONEY_WORDS), ...all(SPENDING)])}`, "iu");

/**
 * Whether a question compares an amount of money: a currency beside a compared number, or a word
 * of money in the question and no compared number followed by what it counts ("over 10 and under
 * 50 RM": money by either; "more than 3 and fewer than 10 items": a count by either).
 */
export function comparesMoney(question: string): boolean {
  const conditions = [...rangesAsComparisons(question).matchAll(CONDITION)].map((m) => {
    const after = m.groups?.after?.trim() ?? "";
    const currency = m.groups?.before !== undefined || (after !== "" && CURRENCY_ONLY.test(after));
    return { currency, counts: !currency && countedNext(after) };
  });
  if (conditions.length === 0) return false;
  if (conditions.some((c) => c.currency)) return true;
  return !conditions.some((c) => c.counts) && MONEY_NAMED.test(question);
}

const w = (table: Parameters<typeof all>[0]) => wholeWords(all(table));
const TAX = w(TAX_NOUNS);
/** What a tax is on, after it ("the VAT on the invoice", "btw op", "TVA sur", "VAT na fakturze"). */
const ON = `\\.?\\s+${w(TAX_ON)}`;
const END = "\\.?\\s*[?!.]?\\s*$";
/** Up to two articles or possessives between the verb and the tax ("the", "Coolblue's"). */
const DETERMINERS = `(?:\\s+(?:${w(ARTICLES)}|[\\p{L}\\d-]+['’]s))?(?:\\s+(?:${w(ARTICLES)}|[\\p{L}\\d-]+['’]s))?`;
const WHAT = w(ASKS_WHAT);
const TAX_AMOUNT = new RegExp(
  [
    // "How much GST was charged", "Hoeveel btw", "Combien de TVA", "Wie viel MwSt.", "Ile wynosi kwota VAT".
    `${w(ASKS_QUANTITY)}[^?.!]{0,24}?${TAX}`,
    // "What VAT did Coolblue charge?", "What GST was charged", "Quelle TVA sur …".
    `${WHAT}\\s+${TAX}(?:\\.?\\s+${w(AUXILIARIES)}|${ON}|${END})`,
    // "What was the VAT on …", "What is the GST for …", "Wat is de btw op …".
    `${WHAT}\\s*(?:${w(IS)}|${w(WAS)})${DETERMINERS}\\s+${TAX}${ON}`,
    // "What was Coolblue's VAT?", "…, what was the VAT?" (not "What is VAT?": what it is).
    `${WHAT}\\s*${w(WAS)}${DETERMINERS}\\s+${TAX}${END}`,
    // "the GST bill", "the VAT amount".
    `${TAX}\\s+(?:${wholeWords(all(MONEY_NOUNS), PLURAL)}|${w(MONEY_WORDS)})`,
  ].join("|"),
  "iu",
);
const TAX_ON_SOMETHING = new RegExp(`${TAX}${ON}`, "iu");
/**
 * Key words led by a tax, no number of it named, a word of money or a number among them ("vat
 * coolblue macbook invoice", "btw saeco factuur"): its amount, as "the VAT of …". Without one
 * ("VAT rules in Germany") they ask what the tax is, not how much.
 */
const TAX_KEY_WORDS = new RegExp(`^\\s*${TAX}(?![^?]*${w(IDENTIFIER_NOUNS)})[^?]*$`, "iu");
const MONEY_OR_NUMBER = new RegExp(`${MONEY_NAMED.source}|\\d`, "iu");
const QUESTION_WORD = new RegExp(w(QUESTION_WORDS), "iu");

/**
 * Whether a question naming a tax asks its amount: a question of quantity governs it, "what"
 * asks it, or it is a money noun's; or, with no question word before it, the tax is followed by
 * what it is on ("the VAT on the Coolblue invoice"). Not what was said of a tax, what it is, its
 * rate or its number: there no rule of the grammar reads an amount.
 */
export function asksTaxAmount(question: string): boolean {
  if (TAX_AMOUNT.test(question)) return true;
  if (TAX_KEY_WORDS.test(question) && !QUESTION_WORD.test(question) && MONEY_OR_NUMBER.test(question)) return true;
  const on = TAX_ON_SOMETHING.exec(question);
  return on !== null && !QUESTION_WORD.test(question.slice(0, on.index));
}
