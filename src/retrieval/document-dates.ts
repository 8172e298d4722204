// The dates a document's own text names (an invoice's date, a receipt's, written as its country
// writes them): a document's record date is only its file time, so a question that asks for a
// time ("what did I pay at IKEA in July 2017") is weighed by the dates inside it (issue 16).
import { anyOf, wholeWords } from "./language/patterns";
import { all, DAY_WORDS } from "./language/words";

/** How much of a document is read for its dates: an invoice or a receipt names its date near the top. */
const DATE_PROBE = 20_000;

/** Month names in the languages invoices and receipts here are written in (English, Dutch, German, French), and their abbreviations. */
const MONTH_NAMES = [
  "january januari januar janvier jan",
  "february februari februar février fevrier feb fév févr",
  "march maart märz mars mar mrt mär",
  "april avril apr avr",
  "may mei mai",
  "june juni juin jun",
  "july juli juillet jul juil",
  "august augustus août aout aug",
  "september septembre sep sept",
  "october oktober octobre oct okt",
  "november novembre nov",
  "december dezember décembre decembre dec dez déc",
];
/** Every month's name and abbreviation, lower case. */
export const MONTH_WORDS = MONTH_NAMES.flatMap((names) => names.split(" "));
const MONTH_OF = new Map(MONTH_NAMES.flatMap((names, i) => names.split(" ").map((n) => [n, i + 1] as const)));

/**
 * A date or a time a statement names (an answer to "when"): a clock time, a day and a month either
 * way round (the month in any of MONTH_NAMES' languages, no year needed), an ISO or numeric date,
 * or a day's word of the language tables (weekdays, today, noon).
 */
const MONTH = `(?<![\\p{L}])${anyOf(MONTH_WORDS)}`;
export const DATE_OR_TIME = new RegExp(
  `\\b(\\d{1,2}:\\d{2}|\\d{1,2}\\s*(a\\.?m\\.?|p\\.?m\\.?)\\b|${MONTH}\\.?\\s+\\d{1,2}(st|nd|rd|th)?\\b|\\d{1,2}(st|nd|rd|th)?\\.?\\s+(of\\s+)?${MONTH}(?![\\p{L}])|\\d{4}-\\d{2}-\\d{2}\\b|\\d{1,2}\\/\\d{1,2}\\/\\d{2,4}\\b)|${wholeWords(all(DAY_WORDS))}`,
  "iu",
);

/** Day, month and year as numbers ("25/12/2018", "17-12-28", "2014-08-03"): each reading tried (day or month first, year first). */
const NUMERIC = /(?<![\d/.-])(\d{1,4})[/.-](\d{1,2})[/.-](\d{1,4})(?![\d/-]|\.\d)/g;
/** "19 april 2014", "05 MAR 2018", "3rd August, 2014". */
const DAY_NAMED = /(?<![\p{L}\d])(\d{1,2})\.?(?:st|nd|rd|th)?[\s/-]{1,3}(\p{L}{3,9})\.?,?[\s/-]{1,3}(\d{4}|\d{2})(?!\d)/gu;
/** "August 3, 2014", "Aug 3 2014". */
const NAMED_DAY = /(?<!\p{L})(\p{L}{3,9})\.?\s{1,3}(\d{1,2})(?:st|nd|rd|th)?\s{0,2},?\s{1,3}(\d{4})(?!\d)/gu;

/** Words before three numbers that make them something else than a date. */
const NOT_A_DATE_BEFORE = /(\bv|version|tel\.?|phone|fax|pages?|pp\.?|room|no\.?|#)\s*$/i;

const fullYear = (y: number, digits: number) => (digits <= 2 ? (y < 70 ? 2000 + y : 1900 + y) : y);

/** The day as UTC milliseconds, or undefined when it is no calendar day of 1970-2099. */
function day(y: number, m: number, d: number): number | undefined {
  if (y < 1970 || y > 2099 || m < 1 || m > 12 || d < 1 || d > 31) return undefined;
  const t = Date.UTC(y, m - 1, d);
  return new Date(t).getUTCDate() === d ? t : undefined;
}

export const monthOf = (name: string) => MONTH_OF.get(name.toLowerCase());

/** Every day `text` names, each reading of an ambiguous one ("12-01-19") included. */
export function documentDates(text: string): number[] {
  const probe = text.slice(0, DATE_PROBE);
  const days: Array<number | undefined> = [];
  for (const m of probe.matchAll(NUMERIC)) {
    // A version, a phone, a page range or a room is no date ("v2.10.15", "Tel 06-12-34", "pages 10-12-14").
    if (NOT_A_DATE_BEFORE.test(probe.slice(Math.max(0, m.index - 12), m.index))) continue;
    const [, a, b, c] = m;
    const [x, y, z] = [Number(a), Number(b), Number(c)];
    if (a!.length === 4) days.push(day(x, y, z));
    else if (c!.length === 4 || c!.length === 2) {
      const year = fullYear(z, c!.length);
      days.push(day(year, y, x), day(year, x, y));
      if (a!.length === 2 && c!.length === 2) days.push(day(fullYear(x, 2), y, z));
    }
  }
  for (const [, d, name, y] of probe.matchAll(DAY_NAMED)) {
    const m = monthOf(name!);
    if (m) days.push(day(fullYear(Number(y), y!.length), m, Number(d)));
  }
  for (const [, name, d, y] of probe.matchAll(NAMED_DAY)) {
    const m = monthOf(name!);
    if (m) days.push(day(Number(y), m, Number(d)));
  }
  return days.filter((t): t is number => t !== undefined);
}
