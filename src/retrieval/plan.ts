// From a question to what each connector is asked: the words that matter, quoted phrases,
// dates and date ranges in words ("last month", "in March", "since 2001"; chrono-node with an
// injectable clock), amounts, e-mail addresses and names, and hints of the kind of source.

import * as chrono from "chrono-node";
import { INVISIBLE } from "../text";
import { amountValue } from "./amounts";
import { type Asked, askedOf } from "./asked";
import { type Country, countriesIn } from "./countries";
import { CURRENCIES, CURRENCY_CODE_WORDS, CURRENCY_CODES, CURRENCY_NAMES, CURRENCY_SIGNS, dotGroupsThousands } from "./language/currencies";
import { COMPARATOR, comparisonOf, countedNext } from "./language/grammar";
import { anyOf, wholeWords } from "./language/patterns";
import { ASKS_WHEN, all, OVER, UNDER } from "./language/words";
import { FILE_WORDS, MAIL_WORDS, ROW_WORDS } from "./record-kinds";
import { namesIn } from "./score";

/** The question as ranking, citing and answering read it (D32): what it asks (asked.ts), its words, conditions and names. */
export interface QueryPlan extends Asked {
  text: string;
  terms: string[];
  phrases: string[];
  dateFrom?: Date;
  /** Exclusive. */
  dateTo?: Date;
  /**
   * Whether the question asks for a time ("in June 2001", "since March", "last week"): only then
   * do the dates narrow. A date that is merely part of what is sought (a subject line such as
   * "Re: Meeting on Friday" or "Tokyo Presentation 15 May") stays a word to match (issue 16).
   */
  timeAsked: boolean;
  amounts: Array<{ value: number; currency?: string; comparison?: "over" | "under" }>;
  people: string[];
  addresses: string[];
  /** Countries the question names (countries.ts): their own names are searched too, their currency is evidence. */
  countries: Country[];
  /** "email" when the question asks for mail, "file" for documents (invoices, receipts), "row" for customers and orders. */
  sourceHint?: "email" | "file" | "row";
  /**
   * The question asks for the largest ("who spent the most", "highest total": desc) or the
   * smallest ("lowest", "least": asc) of a quantity its words name: tables sort by that column.
   */
  order?: "desc" | "asc";
  /** The words written as names ("Netpresse", "NANDO'S"), as the index folds them (score.ts namesIn). */
  names: string[];
}

const STOPWORDS = new Set(
  "a about above after again all am an and any are as at be because been before being below between both but by can could did do does doing down during each few for from further had has have having he her here hers him his how i if in into is it its itself just let me more most my no nor not of off on once only or other our ours out over own same she should so some such than that the their theirs them then there these they this those through to too under until up us very was we were what when where which while who whom why will with would you your yours show find give get tell list any anything everything did does please since until till during ago re fw fwd much many".split(
    " ",
  ),
);
/**
 * Terms (and, apart, phrases) a question is searched for at most, in the order asked: every
 * source's work grows with them, and a question of hundreds of words is no sharper for it (issue 13).
 */
export const MAX_QUERY_TERMS = 32;

/**
 * An amount in a question, compared or with its currency: a currency before the number ("€1000",
 * "EUR 1000", "RM 100", "Rs.500"; not the SNP "rs10818488") or after it ("1000 euros", "100
 * ringgit"), as a whole word: "Europe" is no euro, "1000 euros" leaves no "os" behind (outside attack).
 */
const AMOUNT = new RegExp(
  `(?:(?<![\\p{L}])(${COMPARATOR})|\\b)\\s*(${CURRENCY_SIGNS}|${CURRENCY_CODE_WORDS}\\.?(?=\\s\\d)|rs\\.(?=\\d))?\\s?(\\d{1,3}(?:[,.\\s]\\d{3})+(?:[.,]\\d+)?|\\d+(?:[.,]\\d+)?)\\s*(?:(${CURRENCY_NAMES})(?![\\p{L}]))?`,
  "giu",
);
/** Words of the comparison and its currency, never search terms. */
const AMOUNT_WORDS = new RegExp(
  `^${anyOf([...all(OVER), ...all(UNDER), ...CURRENCIES.flatMap((c) => [c.iso.toLowerCase(), ...c.names])])}$`,
  "i",
);
const LARGEST = /\b(most|highest|largest|biggest|greatest|maximum|top)\b/i;
const SMALLEST = /\b(least|lowest|smallest|fewest|minimum|cheapest)\b/i;
/** The question's currencies, as the records' are read. */

/** chrono's components can be assigned; its published type leaves that out. */
const assign = (c: chrono.ParsedComponents, unit: "year", value: number) =>
  (c as unknown as { assign(u: string, v: number): void }).assign(unit, value);

function startOfDayUtc(d: Date): Date {
  return new Date(Date.UTC(d.getFullYear(), d.getMonth(), d.getDate()));
}

/** The date range of the question, if it names one. */
/** Words before a date that make it the time asked for; relative dates ask for a time by themselves. */
const TIME_CUE = /\b(in|during|since|after|before|until|till|from|between|within|dated)(\s+the)?\s*$/i;
const RELATIVE = /\b(last|this|past|previous|next|ago|yesterday|today|tomorrow|recent)\b/i;
/** A question that is a subject line (a reply or forward) names dates as words, never as a time asked. */
const SUBJECT_LINE = /^\s*(re|fw|fwd|aw|wg)\s*:/i;
/**
 * A question asking when something is names the time of what it asks about, not of the records
 * that tell it: "When is the Board of Directors meeting in August 2001?" is answered by the notice
 * sent in July (outside walkthrough: the date narrowed the mail to August and lost it).
 */
const ASKS_WHEN_FIRST = new RegExp(`^\\s*${wholeWords(all(ASKS_WHEN))}`, "iu");
/** A kind of record and the word that dates it, just before the date: "invoices in", "receipts from", "mail since". */
const RECORDS_DATED = new RegExp(
  `(${[MAIL_WORDS, FILE_WORDS, ROW_WORDS].map((r) => r.source).join("|")})\\s+(in|from|of|during|since|dated)(\\s+the)?\\s*$`,
  "i",
);

/** A date a Date can hold, or none: a range's end past the last day one holds is no date (it would throw where it is written). */
const held = (d: Date | undefined) => (d && !Number.isNaN(d.getTime()) ? d : undefined);

export function dateRange(text: string, now: Date): { from?: Date; to?: Date; spans: Array<[number, number]>; asked: boolean } {
  const found = dateRangeOf(text, now);
  const r = { ...found, from: held(found.from), to: held(found.to) };
  if (!r.spans.length || SUBJECT_LINE.test(text)) return { ...r, asked: false };
  const [a, b] = r.spans[0]!;
  // Unless the date is of the records asked for ("When did I pay invoices in March 2023?") or follows "when in".
  if (ASKS_WHEN_FIRST.test(text) && !RECORDS_DATED.test(text.slice(0, a)) && !/^\s*when\s+((in|during|since)\s*)?$/i.test(text.slice(0, a)))
    return { ...r, asked: false };
  const said = text.slice(a, b);
  const on = /\bon\s*$/i.test(text.slice(0, a)) && /\b(19|20)\d\d\b/.test(said);
  const asked =
    on || TIME_CUE.test(text.slice(0, a)) || RELATIVE.test(said) || /^\s*(since|after|before|until|from|in|during|between)\b/i.test(said);
  return { ...r, asked };
}

/** "12.06.2001": day first, as where dates are written with dots (chrono reads it month first). */
const DOTTED_DATE = /(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4})(?![\d.])/g;
/** "from 2000 to 2001", "between 2000 and 2001", "1999-2001": every year of it. */
const YEAR_RANGE = /\b(?:(?:from|between|in|during)\s+)?((?:19|20)\d\d)\s*(?:to|until|till|and|-|–)\s*((?:19|20)\d\d)\b/i;

function dateRangeOf(text: string, now: Date): { from?: Date; to?: Date; spans: Array<[number, number]> } {
  // Rewritten as year-month-day of the same length, so that what chrono finds is where it was said.
  const dayFirst = text.replace(DOTTED_DATE, (all, d: string, m: string, y: string) =>
    Number(d) >= 1 && Number(d) <= 31 && Number(m) >= 1 && Number(m) <= 12 ? `${y}-${m}-${d}` : all,
  );
  const results = chrono.parse(dayFirst, { instant: now, timezone: 0 }, { forwardDate: false });
  if (results.length === 0) {
    const years = YEAR_RANGE.exec(text);
    if (years && Number(years[2]) >= Number(years[1]))
      return {
        from: new Date(Date.UTC(Number(years[1]), 0, 1)),
        to: new Date(Date.UTC(Number(years[2]) + 1, 0, 1)),
        spans: [[years.index, years.index + years[0].length]],
      };
    // "since 2001", "in 2001", "before 2002": a bare year chrono leaves alone.
    const year = /\b(since|after|before|until|in|during)?\s*((?:19|20)\d\d)\b/i.exec(text);
    if (!year) return { spans: [] };
    const y = Number(year[2]);
    const word = year[1]?.toLowerCase();
    const start = new Date(Date.UTC(y, 0, 1));
    const end = new Date(Date.UTC(y + 1, 0, 1));
    const spans: Array<[number, number]> = [[year.index, year.index + year[0].length]];
    if (word === "since" || word === "after") return { from: word === "since" ? start : end, spans };
    if (word === "before" || word === "until") return { to: word === "until" ? end : start, spans };
    return { from: start, to: end, spans };
  }
  const r = results[0]!;
  const spans: Array<[number, number]> = [[r.index, r.index + r.text.length]];
  const before = text.slice(Math.max(0, r.index - 8), r.index).toLowerCase();
  // "between March 1 and March 15 2024": two dates joined by and/to make a range.
  const second = results[1];
  if (!r.end && second && /^\s*(and|to|until|-|–)\s*$/i.test(text.slice(r.index + r.text.length, second.index))) {
    const year = second.start.get("year")!;
    if (!r.start.isCertain("year")) assign(r.start, "year", year);
    spans.push([second.index, second.index + second.text.length]);
    // "Between March and May 2023" ends with May.
    const end = second.start;
    const to =
      !end.isCertain("day") && end.isCertain("month")
        ? Date.UTC(year, end.get("month")!, 1)
        : startOfDayUtc(end.date()).getTime() + 86_400_000;
    return { from: startOfDayUtc(r.start.date()), to: new Date(to), spans };
  }
  // A month or day without a year means the last one, not the next.
  if (!r.start.isCertain("year") && r.start.date() > now) assign(r.start, "year", r.start.get("year")! - 1);
  const start = r.start.date();
  // The unit the words name: a day unless only a month or year was given.
  const known = (c: "day" | "month" | "year") => r.start.isCertain(c);
  let from = startOfDayUtc(start);
  let to: Date;
  // An end named by its month or year runs to that month's or year's end ("from April to June 2014").
  if (r.end && !r.end.isCertain("day") && r.end.isCertain("month")) to = new Date(Date.UTC(r.end.get("year")!, r.end.get("month")!, 1));
  else if (r.end && !r.end.isCertain("day") && !r.end.isCertain("month") && r.end.isCertain("year"))
    to = new Date(Date.UTC(r.end.get("year")! + 1, 0, 1));
  else if (r.end) to = new Date(startOfDayUtc(r.end.date()).getTime() + 86_400_000);
  else if (!known("day") && known("month")) {
    from = new Date(Date.UTC(start.getFullYear(), start.getMonth(), 1));
    to = new Date(Date.UTC(start.getFullYear(), start.getMonth() + 1, 1));
  } else if (!known("day") && !known("month") && known("year")) {
    from = new Date(Date.UTC(start.getFullYear(), 0, 1));
    to = new Date(Date.UTC(start.getFullYear() + 1, 0, 1));
  } else if (/last month|this month|next month/i.test(r.text)) {
    from = new Date(Date.UTC(start.getFullYear(), start.getMonth(), 1));
    to = new Date(Date.UTC(start.getFullYear(), start.getMonth() + 1, 1));
  } else if (/last year|this year/i.test(r.text)) {
    from = new Date(Date.UTC(start.getFullYear(), 0, 1));
    to = new Date(Date.UTC(start.getFullYear() + 1, 0, 1));
  } else if (/last week|this week/i.test(r.text)) {
    to = new Date(from.getTime() + 7 * 86_400_000);
  } else to = new Date(from.getTime() + 86_400_000);
  // "Since" and "after" leave the end open; "invoices from April 2014" are April's (outside walkthrough: read as since).
  // "From March onwards", "from March to date", "starting from March" leave it open too.
  const afterDate = text.slice(r.index + r.text.length, r.index + r.text.length + 24);
  const openEnded =
    /since|after/.test(before) ||
    (/from/.test(before) &&
      (/^\s*(onwards?|on\b|forward|to date|to now|until now|till now|to the end)/i.test(afterDate) ||
        /starting\s+from\s*$/i.test(text.slice(0, r.index))));
  if (openEnded && !r.end) return { from, spans };
  if (/before|until/.test(before) && !r.end) return { to: /until/.test(before) ? to : from, spans };
  return { from, to, spans };
}

const OTHER_DIGIT = /(?![0-9])\p{Nd}/u;

/** `word` with every decimal digit of another script as its Latin digit (digits come in runs of ten, zero first). */
function latinDigits(word: string): string {
  return word.replace(/\p{Nd}/gu, (d) => {
    let cp = d.codePointAt(0)!;
    let value = 0;
    while (value < 60 && /\p{Nd}/u.test(String.fromCodePoint(cp - 1))) {
      cp--;
      value++;
    }
    return String(value % 10);
  });
}

/** An e-mail address: each run of its characters tried once, from its start, and bounded (no backtracking over a long run). */
const ADDRESS = /(?<![\w.+-])[\w.+-]{1,64}@[\w-]{1,255}(?:\.[\w-]{1,63})+/g;
/** Full-width Latin (an East Asian keyboard's "ｇｅｒｍａｎｙ") and Latin ligatures ("ﬁ"): plain letters to every source. */
const WIDE_OR_LIGATURE = /[\uFF01-\uFF5E\uFB00-\uFB06]/g;

export function planQuery(question: string, now: Date = new Date()): QueryPlan {
  // As the sources write it: composed (a pasted "résumé" in decomposed form), full-width Latin
  // and ligatures as plain letters ("ｇｅｒｍａｎｙ" is "germany"), nothing invisible. Not all of
  // NFKC: it glues "№4711" into "No4711" and "Acme™" into "AcmeTM", which no source holds.
  const text = question
    .normalize("NFC")
    .replace(WIDE_OR_LIGATURE, (c) => c.normalize("NFKC"))
    .replace(INVISIBLE, "")
    .trim();
  const phrases = [...text.matchAll(/"([^"]{2,})"/g)].map((m) => m[1]!.trim()).slice(0, MAX_QUERY_TERMS);
  const { from, to, spans, asked } = dateRange(text, now);
  // Words inside a date asked for are not search terms; a date that is not asked for is.
  let rest = text;
  if (asked) for (const [a, b] of spans.sort((x, y) => y[0] - x[0])) rest = `${rest.slice(0, a)} ${rest.slice(b)}`;
  rest = rest.replace(/"[^"]*"/g, " ");

  const addresses = [...text.matchAll(ADDRESS)].map((m) => m[0].toLowerCase());
  let amounts: QueryPlan["amounts"] = [];
  let counted = false;
  const amountSpans: Array<[number, number]> = [];
  for (const m of rest.matchAll(AMOUNT)) {
    if (!m[2] && !m[4] && !m[1]) continue;
    // A lower-case code before a number, nothing compared, is words to find ("rs 12345" a SNP,
    // "rm 101" a room, "which invoice was eur 4.904,94" its figures), not an amount.
    if (!m[1] && !m[4] && m[2] && /^[a-z]/.test(m[2])) continue;
    const currency = CURRENCY_CODES[(m[2] ?? m[4] ?? "").toLowerCase()];
    // "1.000 EUR" is a thousand; "$3.459" and "4.125%" keep their decimal point.
    const value = amountValue(m[3]!, { dotGroupsThousands: dotGroupsThousands(currency) });
    if (!Number.isFinite(value)) continue;
    const cmp = m[1]?.toLowerCase();
    // A compared number followed by what it counts is no amount ("more than 5 orders", "2 days", "10%").
    if (cmp && !m[2] && !m[4] && countedNext(rest.slice(m.index! + m[0].length))) {
      counted = true;
      continue;
    }
    amountSpans.push([m.index!, m.index! + m[0].length]);
    amounts.push({
      value,
      currency,
      comparison: cmp ? comparisonOf(cmp) : undefined,
    });
  }
  // "more than 3 and fewer than 10 items": a count by either, as comparesMoney reads it (grammar.ts).
  if (counted) amounts = amounts.filter((a) => a.currency !== undefined || a.comparison === undefined);
  for (const [a, b] of amountSpans.reverse()) rest = `${rest.slice(0, a)} ${rest.slice(b)}`;
  const people = [...rest.matchAll(/(?<![\p{L}\p{N}])(?:from|by|to|with|cc)\s+(\p{Lu}\p{Ll}+(?:\s+\p{Lu}\p{Ll}+)?)/gu)].map((m) => m[1]!);
  const words = [
    ...new Set(
      // Words as written, accents kept: sources that match substrings (SQL, IMAP) are asked for
      // "são", not "sao"; the index folds them as it folds its own. A combining mark is part of
      // its word, never a cut (a decomposed "résumé", Hindi's vowel signs).
      rest
        .toLowerCase()
        .replace(ADDRESS, " ")
        .split(/[^\p{L}\p{M}\p{N}]+/u)
        .filter((w) => w.length > 1 && !STOPWORDS.has(w) && !AMOUNT_WORDS.test(w)),
    ),
  ];
  // A number in another script's digits ("٤٧١١") is also asked in Latin digits, as most text writes it.
  for (const w of [...words]) if (OTHER_DIGIT.test(w) && !words.includes(latinDigits(w))) words.push(latinDigits(w));
  // Addresses are the sharpest terms: kept first when the words are too many.
  const kept = addresses.slice(0, MAX_QUERY_TERMS);
  const terms = [...words.slice(0, MAX_QUERY_TERMS - kept.length), ...kept];
  // A country's own names, for sources written in its language ("Poland": Polska, polski).
  const countries = countriesIn(words);
  for (const name of countries.flatMap((c) => c.ownNames)) if (terms.length < MAX_QUERY_TERMS && !terms.includes(name)) terms.push(name);
  const sourceHint = MAIL_WORDS.test(text) ? "email" : FILE_WORDS.test(text) ? "file" : ROW_WORDS.test(text) ? "row" : undefined;
  // A year asked for is also a word to find in documents, whose dates are in their text.
  const wholeYear =
    from && to && from.getUTCMonth() === 0 && from.getUTCDate() === 1 && to.getTime() === Date.UTC(from.getUTCFullYear() + 1, 0, 1);
  if (asked && wholeYear && !/\b(last|this|next|past)\s+year\b/i.test(text) && terms.length < MAX_QUERY_TERMS)
    terms.push(String(from.getUTCFullYear()));
  // "most recent" asks for a time, not a quantity.
  const order = SMALLEST.test(text) ? "asc" : LARGEST.test(text) && !/\bmost\s+recent/i.test(text) ? "desc" : undefined;
  return {
    text,
    ...askedOf(text),
    names: [...namesIn(text)],
    terms,
    phrases,
    ...(asked ? { dateFrom: from, dateTo: to } : {}),
    timeAsked: asked,
    amounts,
    people,
    addresses,
    countries,
    sourceHint,
    ...(order ? { order } : {}),
  };
}
