// From a question to what each connector is asked: the words that matter, quoted phrases, the
// time asked for (question-dates.ts), amounts, e-mail addresses and names, and hints of the kind of source.

import { oneSpaced } from "../connectors/types";
import { INVISIBLE } from "../text";
import { amountValue } from "./amounts";
import { type Asked, askedOf, notSearched, type QuestionMeaning } from "./asked";
import { queryWords } from "./bm25";
import { type Country, countriesIn } from "./countries";
import { CURRENCIES, CURRENCY_CODE_WORDS, CURRENCY_CODES, CURRENCY_NAMES, CURRENCY_SIGNS, dotGroupsThousands } from "./language/currencies";
import { COMPARATOR, comparisonOf, countedNext, rangesAsComparisons } from "./language/grammar";
import { anyOf, wholeWords } from "./language/patterns";
import { all, LARGEST, MOST_RECENT, OVER, SMALLEST, UNDER } from "./language/words";
import { type DaysSaid, dateRange } from "./question-dates";
import { namesIn } from "./rare-words";
import { FILE_WORDS, MAIL_WORDS, ROW_WORDS } from "./record-kinds";

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
  /** The days said, by question-dates.ts's grammar: a document dated on them wins (evidence.ts). */
  days?: DaysSaid;
  /** The words of the days asked as documents write them ("21 November 2016"): searched, but not what the question is about (rare-words.ts). */
  dayWords?: string[];
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
const LARGEST_ASKED = new RegExp(wholeWords(all(LARGEST)), "iu");
const SMALLEST_ASKED = new RegExp(wholeWords(all(SMALLEST)), "iu");
const MOST_RECENT_ASKED = new RegExp(wholeWords(all(MOST_RECENT)), "iu");
const COMPARATORS = new RegExp(wholeWords([...all(OVER), ...all(UNDER)]), "giu");

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

/** `meaning`: the question's vector, with which the model reads what the tables do not (asked.ts askedOf). */
export function planQuery(question: string, now: Date = new Date(), meaning?: QuestionMeaning): QueryPlan {
  // As the sources write it: composed (a pasted "résumé" in decomposed form), full-width Latin
  // and ligatures as plain letters ("ｇｅｒｍａｎｙ" is "germany"), nothing invisible. Not all of
  // NFKC: it glues "№4711" into "No4711" and "Acme™" into "AcmeTM", which no source holds.
  const text = question
    .normalize("NFC")
    .replace(WIDE_OR_LIGATURE, (c) => c.normalize("NFKC"))
    .replace(INVISIBLE, "")
    .trim();
  // A control character in a phrase is a space, as everywhere else in the question (search.ts);
  // one of spaces alone is none (an empty phrase named something: the newest records were given).
  const phrases = [...text.matchAll(/"([^"]{2,})"/g)]
    .map((m) => oneSpaced(m[1]!))
    .filter(Boolean)
    .slice(0, MAX_QUERY_TERMS);
  const reading = askedOf(text, meaning);
  const { from, to, spans, asked, days } = dateRange(text, now, reading.language);
  // Words inside a date asked for are not search terms, but of a day written as documents write it; a date not asked for is.
  let rest = text;
  if (asked && !days?.written) for (const [a, b] of spans.sort((x, y) => y[0] - x[0])) rest = `${rest.slice(0, a)} ${rest.slice(b)}`;
  const dayWords = asked && days?.written ? spans.map(([a, b]) => text.slice(a, b).toLowerCase()) : [];
  const dayNames = new Set(queryWords(dayWords));
  rest = rangesAsComparisons(rest.replace(/"[^"]*"/g, " "));

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
        .filter((w) => w.length > 1 && !STOPWORDS.has(w) && !AMOUNT_WORDS.test(w) && !notSearched(w, reading.language)),
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
  // "most recent" asks for a time, not a quantity; a comparator ("at least 100", "co najmniej") is a condition.
  const said = text.replace(COMPARATORS, " ");
  const order = SMALLEST_ASKED.test(said) ? "asc" : LARGEST_ASKED.test(said) && !MOST_RECENT_ASKED.test(said) ? "desc" : undefined;
  return {
    text,
    ...reading,
    // A month's name is no vendor's: the receipt of 22 April 2018 writes 22/04/2018.
    names: [...namesIn(text, reading.language)].filter((n) => !dayNames.has(n)),
    terms,
    phrases,
    ...(asked ? { dateFrom: from, dateTo: to } : {}),
    ...(days ? { days } : {}),
    ...(dayWords.length ? { dayWords } : {}),
    timeAsked: asked,
    amounts,
    people,
    addresses,
    countries,
    sourceHint,
    ...(order ? { order } : {}),
  };
}
