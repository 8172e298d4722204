// How a document's text becomes statements (D32): its lines read as a mail's wrapped sentences
// joined again, a label with its value below it, a receipt's item with its quantity; the lines
// that carry no answer (headers, boilerplate, contacts) told apart. answer.ts scores them.
import type { SourceRecord } from "../connectors/types";
import { isTotalLine, PART_OF_TOTAL, TAX, TOTAL } from "./amounts";
import { startsQuote } from "./cite";
import { documentDates, MONTH_WORDS } from "./document-dates";
import { CURRENCY_CODE_WORDS, CURRENCY_CODES, CURRENCY_SIGNS, CURRENCY_WORDS } from "./language/currencies";
import { anyOf, wholeWords } from "./language/patterns";
import {
  ABBREVIATIONS,
  ADDRESS_LABELS,
  ADDRESS_WORDS,
  all,
  COLUMN_HEADERS,
  CONTACT_NOUNS,
  DATE_NOUNS,
  DISCOUNT_LABELS,
  IDENTIFIER_NOUNS,
  LABEL_MEANINGS,
  MAIL_HEADERS,
  NOT_AN_ITEM_LABELS,
  PAYMENT_MEANS,
  PERSON_LABELS,
  PHONE_LABELS,
  PREPOSITIONS,
  STREET_ENDINGS,
  STREET_WORDS,
  TAX_CODES,
  TOTAL_LABELS,
} from "./language/words";

/** What statements are read from: a source's text, and whether it is a mail. */
export interface StatementSource {
  text: string;
  /** A mail's lines are wrapped prose, joined again before sentences are cut. */
  type?: SourceRecord["type"];
}

/** A word as written, capitalised and in capitals ("incl", "Incl", "INCL"): as documents print it. */
const cased = (words: string[]) => words.flatMap((w) => [w, w.toUpperCase(), w.charAt(0).toUpperCase() + w.slice(1)]);
/**
 * Sentence ends: a stop before a capital, a digit or a quote, or a line break; not an
 * abbreviation's stop ("NO. 42/1", "incl. VAT"), an initial's, nor a day's ordinal stop before its
 * month and year ("Rechnungsdatum 7. Mai 2014": one date, as German writes it).
 */
export const SENTENCE = new RegExp(
  `(?<=[.!?])(?<!\\b(?:${anyOf(cased(all(ABBREVIATIONS)))}|[A-Z])\\.)(?<!(?<![\\d.])\\d{1,2}\\.(?=\\s+${anyOf(cased(MONTH_WORDS))}\\.?\\s+\\d))\\s+(?=["'(\\p{Lu}\\d])|\\n+`,
  "u",
);

/** A street's word ending a compound, as Dutch and German write a street's name ("Hauptstraße", "Uferweg"). */
const COMPOUND_STREET = anyOf([...STREET_WORDS.nl, ...STREET_WORDS.de]);
/** Lines that carry no answer: mail headers and quoting marks, signatures' phone lines, attachments; an invoice's address, phone, e-mail, web and page lines. */
// Bounded repeats, tried on a sentence's first SENTENCE_PROBE characters: a crafted sentence (a
// long run of letters, or of "a@") made the open-ended ones backtrack quadratically.
const BOILERPLATE = [
  new RegExp(`^\\s*(?:${anyOf(all(MAIL_HEADERS))}|x-[\\w-]+)\\s*:`, "i"),
  /-{3,}\s*(original message|forwarded by)/i,
  /^\s*>/,
  /<[^>\s@]{1,64}@[^>\s]{1,255}>/,
  /^[\s"]*[\w .'-]{1,80}["]?\s*<?[\w.+-]{1,64}@[\w.-]{1,255}>?\s+on\s+\d/i,
  // A phone number alone on its line; not a date written with dashes or dots ("8-9-2022").
  /^(?!\s*\d{1,4}[-.]\d{1,2}[-.]\d{1,4}\s*$)[\s\d()+.-]{7,}$/,
  /^\s*[\w .-]{1,200}\.(pdf|docx?|xlsx?|pptx?|zip|txt|htm)\s*$/i,
];
/** A phone number with its label, alone on its line ("Tel. +49 6051 916 44 10"), and an e-mail address alone. */
const PHONE_LINE = new RegExp(`^\\s*${anyOf(all(PHONE_LABELS))}\\.?\\s*:?\\s*[\\d()+][\\d\\s()+./-]{6,40}$`, "iu");
const EMAIL_LINE = /^\s*(e-?mail\s*:?\s*)?[\w.+-]{1,64}@[\w-]{1,63}(\.[\w-]{1,63}){1,8}\s*$/i;
/**
 * An invoice's or a signature's contact lines: address, phone, e-mail, web, page count. Never an
 * answer unless the question asks for one (where, a phone, an address, a website, a contact).
 */
export const CONTACT = [
  PHONE_LINE,
  // A number and a capitalised street ("4557 De Silva St"), a street and a number ("Hauptstrasse 12").
  new RegExp(
    `^\\s*\\d{1,6}[\\w/-]{0,6}\\s+(\\p{Lu}[\\p{L}.'-]{0,29}\\s+){1,4}${anyOf(cased([...all(STREET_WORDS), ...all(STREET_ENDINGS)]))}(?![\\p{L}])`,
    "u",
  ),
  new RegExp(`^\\s*\\p{Lu}[\\p{L}.'-]{1,40}${COMPOUND_STREET}\\s+\\d{1,5}\\w?\\b`, "u"),
  // A town with its state and ZIP ("Fremont CA 94538"), a Dutch postcode and town alone, a comma-separated address ending in a postcode.
  /\b\p{Lu}[\p{L}.'-]{1,40},?\s+[A-Z]{2}\s+\d{5}(-\d{4})?\s*$/u,
  /^\s*\d{4}\s?[A-Z]{2}\s+\p{Lu}\p{Ll}{1,40}\s*$/u,
  /,.{0,120},\s*\p{Lu}[\p{L} .'-]{1,40}[-–\s]*\d{5,6}\s*$/u,
  EMAIL_LINE,
  /^\s*(web(site)?\s*:?\s*)?(https?:\/\/|www\.)\S{1,300}\s*$/i,
  /^\s*page\s*:?\s*\d{1,4}\s*(\/|of)\s*\d{1,4}\s*$/i,
];
/** Contacts inside a line: a phone number, an e-mail address, a web address (each bounded). */
export const CONTACTS_IN_LINE = [
  /\(\d{3}\)[\s-]?\d{3}[\s.-]?\d{4}|\+\d[\d\s().-]{7,18}\d/,
  /[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,255}/,
  // A web address, also without its scheme when a path follows its host ("aws.amazon.com/contact-us/").
  /\b(https?:\/\/|www\.)[\w-]|\b[a-z][\w-]{1,62}(?:\.[a-z][\w-]{1,62})*\.[a-z]{2,6}\/[\w-]/i,
];
export const SENTENCE_PROBE = 400;
/** A document's own "Date:" line: its date, not a mail header (a document is no mail). */
const DOCUMENT_DATE_LINE = /^\s*date\s*:/i;
/** A forwarded message's sender and time as Notes writes them in a mail ("Rosalee Fleming on 04/02/2001 10:52:12 AM", or the time alone). */
const FORWARDED_AT = /^[\s"]*([\w .'@/-]{1,80}\s+on\s+)?\d{1,2}\/\d{1,2}\/\d{2,4}\s+\d{1,2}:\d{2}(:\d{2})?\s*([AP]M)?\s*$/i;
export const isBoilerplate = (s: string, contactWanted = false, document = false) => {
  // In a document ">" quotes nothing ("> VISA" on a receipt).
  const probe = (document ? s.replace(/^\s*>\s*/, "") : s).slice(0, SENTENCE_PROBE);
  if (!(document && DOCUMENT_DATE_LINE.test(probe)) && BOILERPLATE.some((re) => re.test(probe))) return true;
  if (!document && FORWARDED_AT.test(probe)) return true;
  if (contactWanted) return false;
  // A letterhead's line of several contacts ("Azure Interior. (870)-931-0505 azure@example.com http://…").
  return CONTACT.some((re) => re.test(probe)) || CONTACTS_IN_LINE.filter((re) => re.test(probe)).length >= 2;
};

// Bounded, and a number's run starts where a number does: a line of 100,000 digits was tried from
// each digit (quadratic: 11 s of the request thread per source, outside attack).
/** Money: a currency before or after a number ("€ 717,97", "56,02 €", "316,83 PLN", "RM 538.00"), or a number with cents. */
// Without the u flag, as before: case-insensitive Unicode matching made each line's test slower.
export const MONEY = new RegExp(
  `${CURRENCY_SIGNS}\\s?\\d|(?<![\\d.,])\\d[\\d.,]{0,30}\\s?(${CURRENCY_SIGNS}|${CURRENCY_WORDS}\\b)|\\b${CURRENCY_CODE_WORDS}\\.?\\s?\\d|(?<![\\d.,])\\d{1,3}(?:[.,\\s]?\\d{3}){0,4}[.,]\\d{2}(?![\\d%]|[.,/-]\\d)`,
  "i",
);

/** A long statement's last sentence when it is unfinished and the next line goes on with it (of its last SENTENCE_PROBE characters). */
function unfinishedSentence(last: string, line: string, contactWanted: boolean): string | undefined {
  const tail = last.slice(-SENTENCE_PROBE);
  if (!WRAPPED.test(tail) || !GOES_ON.test(line) || isBoilerplate(line, contactWanted)) return undefined;
  const sentences = tail.split(SENTENCE);
  return sentences.length > 1 ? sentences.at(-1) : undefined;
}
/** A mail's line wrapped before its sentence ended: a long line without an end, and a next line going on. */
const WRAPPED = /^.{40,}[^.!?:]$/u;
const GOES_ON = /^[\p{L}\d("']/u;
/** A line that is only an amount ("593.10", "RM 538.00"), or a currency alone ("RM"): on a receipt, the value of the label above it. */
// Before the number a currency only ("MILO 3.50" is an item, not the value of the line above); after it a currency or a tax code ("36.00 SR").
const SIGN_OR_CODE = `(\\p{Sc}|${CURRENCY_CODE_WORDS})`;
const AMOUNT_ONLY = new RegExp(`^${SIGN_OR_CODE}?\\.?\\s?-?\\d[\\d.,]{0,20}\\s?[\\p{Sc}A-Za-z]{0,4}$|^${SIGN_OR_CODE}$`, "iu");

/** A quantity times a price, or a price times a quantity ("7.90 * 3", "3.00 X 3.00", "18 @ 1.98"). */
const QUANTITY = /^\d[\d.,]{0,12}\s?[x*@]\s?\d[\d.,]{0,12}$/i;
/** The longest line taken as the value of a "Label:" line above it. */
const LABELLED_VALUE = 40;
/** The longest line taken as a date alone ("22-9-2022", "28 MAR 2018"). */
const DATE_ALONE = 12;

/**
 * What a statement holds, as its layout says: an item's row, the total, a tax, a part of the
 * total, a payment, a person, an address, a person with their address under a person's label
 * ("Bill to Address: ATTN: iViveLabs Limited …"); "other" is any other line of a document whose layout has item rows.
 */
export type Holds = "item" | "total" | "tax" | "part" | "payment" | "person" | "address" | "addressee" | "other";

/** A statement of a source: its text, the label its value is under, what it holds, and whether a mail quotes it. */
export interface Statement {
  text: string;
  label?: string;
  /** What its label means, whatever its language (LABEL_MEANINGS: "Vervaldatum" is due, "Total" total). */
  meanings?: string[];
  holds?: Holds;
  quoted: boolean;
}

/** A priced line that is no item, by its first word ("NAME CARD", "PRO BALANCE" are items). */
export const NOT_AN_ITEM = new RegExp(`^[^a-z]*${anyOf(all(NOT_AN_ITEM_LABELS))}\\b`, "i");
const PERSON_LABEL = new RegExp(`^${anyOf(all(PERSON_LABELS))}\\.?$`, "iu");
const PERSON_LABEL_START = new RegExp(`^${anyOf(all(PERSON_LABELS))}(?![\\p{L}])`, "iu");

const MEANING_PATTERNS = Object.entries(LABEL_MEANINGS).map(
  ([meaning, table]) => [meaning, new RegExp(`(?<![\\p{L}])${anyOf(all(table))}(?![\\p{L}])`, "iu")] as const,
);
/** The meanings a label's or a question's words hold, in any language of the tables (of its first SENTENCE_PROBE characters). */
export const meaningsOf = (text: string): string[] => {
  const probe = text.slice(0, SENTENCE_PROBE).replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2");
  return MEANING_PATTERNS.filter(([, re]) => re.test(probe)).map(([meaning]) => meaning);
};

/** What a label's value is, by the label's words ("TOTAL", "GST PAYABLE", "CHANGE", "VISA", "SERVER"). */
export function holdsOf(label: string): Holds | undefined {
  const probe = label.slice(0, SENTENCE_PROBE);
  // The whole label a person's ("CASHIER" is no "cash").
  if (PERSON_LABEL.test(probe.replace(/\s*:$/, "").trim())) return "person";
  if (TAX_RATE.test(probe)) return "tax";
  if (isTotalLine(probe)) return "total";
  if (TAX.test(probe)) return "tax";
  if (PART_OF_TOTAL.test(probe)) return "part";
  if (NOT_AN_ITEM.test(probe)) return "payment";
  return undefined;
}

// The layout reader (D32): OCR and PDF text give a table's cells one a line, a column at a time
// ("SALMON TERIYAKI" … "1 X" … "25.90" … "SR"), and a block of labels beside a block of values
// ("TOTAL (EXCLUDING GST):" … "CHANGE :" then "353.00" … "25.80"). It pairs them back into rows.

/** The longest line read as a table's cell ("100.00 ZRL", "15*BAG *", "RM 5.83"). */
const CELL_CHARS = 24;
/** The most rows read as one table of cells, and the most cells a row has: what is tried stays bounded. */
const MAX_TABLE_ROWS = 40;
const MAX_ROW_CELLS = 6;
const TAX_CODE_WORDS = anyOf(all(TAX_CODES));
/** A tax summary's row: a tax code and its rate ("SR = 6%", "S- 6% GST", "SR @ 6%"), no item bought. */
const TAX_RATE = new RegExp(`^\\(?${TAX_CODE_WORDS}\\s?[-=@:(]{0,2}\\s?@?\\s?\\d{1,2}(?:[.,]\\d{1,2})?\\s?%`, "i");
type CellKind = "money" | "count" | "rate" | "code";
const CELLS: Array<[CellKind, RegExp]> = [
  [
    "money",
    new RegExp(
      `^${SIGN_OR_CODE}?\\.?\\s?-?\\d{1,3}(?:[.,\\s]?\\d{3}){0,4}[.,]\\d{2,3}\\s?(?:${TAX_CODE_WORDS}|\\p{Sc}|${CURRENCY_CODE_WORDS})?$`,
      "iu",
    ),
  ],
  ["rate", /^\d{1,2}(?:[.,]\d{1,2})?\s?%\s?:?$/u],
  // A quantity, with its unit or a times sign ("1", "10 *", "1 X", "4@", "15*BAG *", "0+0", "3.00 X 3.00", "122 PCS @ 18.90").
  [
    "count",
    /^\d{1,3}(?:[.,]\d{1,3})?(?:\s?[x*@]|\s?\*?\s?\p{L}{1,8}\s?\*?)?$|^\d{1,3}\+\d{1,3}$|^\d[\d.,]{0,12}\s?(?:\p{L}{1,5}\s?)?[x*@]\s?\d[\d.,]{0,12}$/iu,
  ],
  ["code", new RegExp(`^${TAX_CODE_WORDS}$`, "i")],
];
const cellKind = (line: string): CellKind | undefined =>
  line.length > CELL_CHARS ? undefined : CELLS.find(([, re]) => re.test(line))?.[0];
/**
 * An article's or a barcode's number, a tax code beside it ("2000001592021", "GTG02", "SR0 9555544201198", "#1011801-5"
 * under "PAYMENT VOUCHER UEW"): it belongs to the item beside it. A dash only after a "#": "13-09-2017" is a day.
 */
const ID = /^(?=[A-Z\d]*\d)[A-Z\d]{4,20}$|^#\d{4,20}(?:-\d{1,4})?$/;
/** A name ending in its "#" article number is an item's ("PAYMENT VOUCHER UEW 6\" X 7\" #1011801-5"), never a summary's label. */
const ARTICLE_END = /\s#\d{4,20}(?:-\d{1,4})?$/;
const TAX_CODE = new RegExp(`^${TAX_CODE_WORDS}$`, "i");
const isCode = (line: string) => {
  if (line.length > 40) return false;
  const tokens = line.split(" ");
  return tokens.some((t) => ID.test(t)) && tokens.every((t) => ID.test(t) || TAX_CODE.test(t));
};
const HEADER_WORDS = new Set([...all(COLUMN_HEADERS), ...Object.keys(CURRENCY_CODES)].map((w) => w.toLowerCase()));
/** A total's word heads a column after another header ("QTY U.PRICE RM(TOTAL)"); first, it is a label ("TOTAL QTY"). */
const TOTAL_WORDS = new Set(all(TOTAL_LABELS).filter((w) => !w.includes(" ")));
/** A line of column headers only ("QTY", "U/P(RM)DISC(%)AMT+GST(RM)", "Item Quantity Rate Amount"). */
const isHeader = (line: string) => {
  if (line.length > 60) return false;
  const tokens = line.toLowerCase().match(/\p{L}+/gu);
  return tokens?.every((t, i) => HEADER_WORDS.has(t) || (i > 0 && TOTAL_WORDS.has(t)));
};
/** A discount's label alone on its line, under the item it takes off from ("@DISC", "Korting:"). */
const DISCOUNT_LINE = new RegExp(`^[@*#\\s-]{0,3}${anyOf(all(DISCOUNT_LABELS))}\\.?\\s?:?$`, "iu");
/** The most cells a discount's label takes below it: a rate and an amount. */
const DISCOUNT_CELLS = 2;
/** A label naming a number or a code, alone on its line without a colon ("Booking ID", "Invoice Number"): the code under it is its value. */
const IDENTIFIER_LABEL = new RegExp(`^\\p{L}[\\p{L} ]{0,30}\\s${anyOf(all(IDENTIFIER_NOUNS))}$`, "iu");
/** A label alone on its line, its value elsewhere ("Due Date:", "CHANGE :"). */
const LABEL_ONLY = /^\p{L}[^:]{0,38}:$/u;
/** A summary's label, each taking one value: a total, a part of it, a tax, a payment. */
const isSummary = (line: string) => {
  const probe = line.slice(0, SENTENCE_PROBE);
  return TOTAL.test(probe) || PART_OF_TOTAL.test(probe) || TAX.test(probe) || NOT_AN_ITEM.test(probe);
};

const ITEM_NAME = /\p{L}{3}/u;
/** A piece of the layout: a line as it is, or a row or a label's pair the layout reader made. */
type Piece = { line: string } | { statement: Omit<Statement, "quoted"> };
const pair = (label: string, value: string): Piece => {
  const name = label.replace(/\s*:$/, "");
  const holds = holdsOf(name);
  return { statement: { text: `${label} ${value}`, label: name, ...(holds ? { holds } : {}) } };
};

/**
 * Labels printed in a block beside their values' block ("Date:" … "Balance Due:" after "Jan 1,
 * 2022" … "$127.50", or before "353.00" … "25.80"): each label with its value, in order. Returns
 * the value each label takes, by the label's place; the values taken are marked.
 */
function labelBlocks(lines: string[], taken: boolean[]): Map<number, string> {
  const values = new Map<number, string>();
  const valueLike = (i: number) =>
    !taken[i] && lines[i]!.length <= LABELLED_VALUE && !lines[i]!.includes(":") && !isHeader(lines[i]!) && !isSummary(lines[i]!);
  for (let a = 0; a < lines.length; ) {
    let b = a;
    while (b < lines.length && lines[b]!.length <= 40 && LABEL_ONLY.test(lines[b]!)) b++;
    const k = b - a;
    if (k < 2) {
      a = Math.max(b, a + 1);
      continue;
    }
    let after = 0;
    while (after < k && b + after < lines.length && valueLike(b + after)) after++;
    // Values before the labels only when no cells follow them: a receipt's labels ("PAYMENT :" …
    // "CHANGE") are followed by their column of values.
    let beyond = b;
    while (beyond < lines.length && beyond - b < k && isSummary(lines[beyond]!)) beyond++;
    const cellsAfter = beyond < lines.length && cellKind(lines[beyond]!) !== undefined;
    let before = 0;
    while (!cellsAfter && before < k && a - before - 1 >= 0 && valueLike(a - before - 1)) before++;
    // After the labels when each has its value there; else the values before them, as many as there are.
    const [from, n] = after === k ? [b, k] : before >= 2 ? [a - before, before] : [-1, 0];
    for (let j = 0; j < n; j++) {
      values.set(a + j, lines[from + j]!);
      taken[from + j] = true;
    }
    a = b;
  }
  return values;
}

/** A means of paying, or a label saying how it was paid ("> VISA", "Betaalwijze", "Zapłacono:"): how something was paid. */
export const PAID_WITH = new RegExp(wholeWords([...all(PAYMENT_MEANS), ...all(LABEL_MEANINGS.paidBy!)]), "iu");
/** A label's words of each kind of value, the first kind a label names deciding ("Adresse email": an e-mail, "Id.client": a number). */
const LABEL_KINDS: Array<[LabelKind, RegExp]> = (
  [
    ["contact", CONTACT_NOUNS, false],
    ["identifier", IDENTIFIER_NOUNS, true],
    ["date", DATE_NOUNS, true],
    ["address", ADDRESS_LABELS, false],
    ["person", PERSON_LABELS, false],
  ] as const
).map(([kind, table, compound]) => [
  kind,
  // Dutch and German write a label as a compound ("Rechnungsdatum", "Klantnummer"): its noun is the word's end.
  new RegExp(
    `(?<![\\p{L}])${anyOf(all(table))}\\.?(?![\\p{L}])${compound ? `|${anyOf([...table.nl, ...table.de])}(?![\\p{L}])` : ""}`,
    "iu",
  ),
]);
type LabelKind = "contact" | "identifier" | "date" | "address" | "person";
/** A label alone on its line, without a digit ("Rechnungsdatum", "Numéro de ligne Id.client", "Nom de l'abonné"). */
const LABEL_ALONE = /^\p{L}[\p{L} .'’/-]{1,38}:?$/u;
/** Whether a line is a value of a label's kind: an e-mail or a phone, a code, a date, an address's line, a name. */
const VALUE_OF: Record<LabelKind, (line: string) => boolean> = {
  contact: (line) => PHONE_LINE.test(line) || EMAIL_LINE.test(line),
  identifier: (line) => isCode(line),
  date: (line) => line.length <= LABELLED_VALUE && !LABEL_THEN_VALUE.test(line) && documentDates(line).length > 0,
  address: (line) => ADDRESS.test(line) || TOWN.test(line),
  person: (line) => PERSON_NAME.test(line) && !isSummary(line) && !LABEL_KINDS.some(([, re]) => re.test(line)),
};
/** A name: two to five words of letters, one capitalised at least ("de Lattre Alexis", "GŁÓWNY URZĄD STATYSTYCZNY"). */
const PERSON_NAME = /^(?=[^\p{Lu}]*\p{Lu})[\p{L}.'’-]{1,30}(?:\s[\p{L}.'’-]{1,30}){1,4}$/u;
/** A line of a label and its value ("DATE: 2018-03-23"): no value of another label. */
const LABEL_THEN_VALUE = /^\p{L}[^:]{0,38}:/u;
/** The fewest labels of a block whose values follow it among other lines. */
const BLOCK_LABELS = 3;
/** How far below a label its value may be printed: a block of labels, then their values after another block's. */
const LABEL_REACH = 8;

/**
 * Labels printed in a block whose values follow in the same order but among other lines
 * ("Numéro de ligne Id.client" / "Nom de l'abonné" / "Adresse de l'installation" / "Free Service
 * Abonné" / … / "FO10479674 10577874" / "de Lattre Alexis" / "35 RUE du logiciel libre"), or a
 * label whose value is a line or two below another's ("Rechnungsdatum" / "Kundennr.30064443" / "7.
 * Mai 2014"): each label takes the first free line of its kind after the value the label above it
 * took. An address's value goes on to its town's line. Returns each label's statement by its place.
 */
function typedLabels(lines: string[], taken: boolean[], values: Map<number, string>): Map<number, Piece> {
  const pieces = new Map<number, Piece>();
  // Not a column's header ("CODE/DESC"), nor a label whose value is past a lone ":" (statementLines joins those).
  const kindOf = (i: number) =>
    taken[i] || values.has(i) || !LABEL_ALONE.test(lines[i]!) || isSummary(lines[i]!) || isHeader(lines[i]!) || lines[i + 1] === ":"
      ? undefined
      : LABEL_KINDS.find(([, re]) => re.test(lines[i]!))?.[0];
  let from = 0;
  let start = 0;
  let previous: LabelKind | undefined;
  for (let i = 0; i < lines.length; i++) {
    const kind = kindOf(i);
    const above = previous;
    previous = kind;
    if (kind === undefined) continue;
    // Under another label of the block, this one's value is after the value that one took.
    if (above === undefined) [from, start] = [i + 1, i];
    let end = i + 1;
    while (end < lines.length && end <= i + LABEL_REACH && kindOf(end) !== undefined) end++;
    // Outside a block of labels, only a date's label looks past the line under it: an address's takes its
    // lines (joinAddresses: a name first), a code under a receipt's "CODE" is an item's, "NAME CARD" is an item.
    if (kind !== "date" && end - start < BLOCK_LABELS) continue;
    let j = Math.max(from, i + 1);
    // Not past another label of its kind below the block: the value there is that label's.
    const mine = (k: number) => k < lines.length && k <= i + LABEL_REACH && !(k >= end && kindOf(k) === kind);
    while (mine(j) && (taken[j] || values.has(j) || kindOf(j) !== undefined || !VALUE_OF[kind](lines[j]!))) j++;
    if (!mine(j)) continue;
    const parts = [lines[j]!];
    taken[j] = true;
    while (kind === "address" && !TOWN.test(parts.at(-1)!) && parts.length < ADDRESS_LINES && j + 1 < lines.length && !taken[j + 1]) {
      if (!(ADDRESS.test(lines[j + 1]!) || TOWN.test(lines[j + 1]!))) break;
      parts.push(lines[++j]!);
      taken[j] = true;
    }
    const label = lines[i]!.replace(/\s*:$/, "");
    pieces.set(
      i,
      kind === "address" ? { statement: { text: `${lines[i]} ${parts.join(" ")}`, label, holds: "address" } } : pair(lines[i]!, parts[0]!),
    );
    from = j + 1;
  }
  return pieces;
}

/**
 * A run of text lines followed by a run of cells, as pieces: summary labels each with one value
 * (aligned at the end when values are more, at the start when fewer), or item rows when the cells
 * are whole columns of the last rows (each column of one kind, one of them money).
 */
/** A label ending in its own whole number ("ITEM COUNT 12", "TOTAL QTY: 2"), not a rate's ("GST @6"). */
const OWN_COUNT = /[\p{L})]\s?:?\s?\d{1,4}$/u;
function tableRows(units: string[], cells: string[], out: Piece[]): void {
  const k = units.length;
  const m = cells.length;
  const plain = (xs: string[]) => {
    for (const line of xs) out.push({ line });
  };
  if (k === 0 || m === 0) {
    plain([...units, ...cells]);
    return;
  }
  let s = 0;
  while (s < k && s < MAX_TABLE_ROWS && isSummary(units[k - 1 - s]!) && !ARTICLE_END.test(units[k - 1 - s]!)) s++;
  if (s > 0) {
    plain(units.slice(0, k - s));
    const labels = units.slice(k - s);
    // A label holding its own count ("ITEM COUNT 12" among "CASH" and "CHANGE AMT") takes no value of the column.
    const wanting = labels.filter((l) => !OWN_COUNT.test(l)).length;
    let c = Math.max(0, m - wanting);
    plain(cells.slice(0, c));
    for (const l of labels) out.push(OWN_COUNT.test(l) || c >= m ? { line: l } : pair(l, cells[c++]!));
    return;
  }
  const kinds = cells.map((c) => cellKind(c)!);
  // Whole columns of r cells first; then also the first cells of one more, where a chunk's end cut
  // the table; then the last name with all the cells (an item and its cells one after another).
  for (const [cut, least] of [
    [false, 2],
    [true, 2],
    [false, 1],
  ] as const)
    for (let r = Math.min(k, MAX_TABLE_ROWS); r >= least; r--) {
      const columns = Math.ceil(m / r);
      if (columns > MAX_ROW_CELLS || m < r || (m % r !== 0) !== cut) continue;
      let money = false;
      let same = true;
      for (let c = 0; c < columns && same; c++) {
        const kind = kinds[c * r]!;
        for (let i = c * r + 1; i < Math.min(m, (c + 1) * r) && same; i++) same = kinds[i] === kind;
        money ||= kind === "money";
      }
      // An item is named by a word ("* : 6%" or a date above amounts is a summary's or a footer's line).
      if (!same || !money || units.slice(k - r).some((u) => !ITEM_NAME.test(u.slice(0, SENTENCE_PROBE)))) continue;
      plain(units.slice(0, k - r));
      for (let i = 0; i < r; i++) {
        const row = [units[k - r + i]!];
        for (let c = 0; c < columns && c * r + i < m; c++) row.push(cells[c * r + i]!);
        out.push({ statement: { text: row.join(" "), holds: "item" } });
      }
      return;
    }
  plain([...units, ...cells]);
}

/** The longest line read for a value and a label printed against each other. */
const GLUED_CHARS = 200;
/** A value printed against its label after it ("29 maart 2014Orderdatum:", "992288600Factuurnummer:", "WS Retail Services Pvt. Ltd.,Sold By :", "29670869006VAT/TIN:"). */
const VALUE_THEN_LABEL = /^(.{1,80}?[\d).,])(\p{Lu}(?:\p{Ll}{2,}|\p{Lu}{2,})[\p{L} ./#]{0,30}?)\s?:$/u;
/** Two pairs printed against each other ("Subtotaal € 4.904,94Exclusief BTW € 4.053,67"): an amount, then a capitalised word. */
const PAIRS_GLUED = /(?<=\d)(?=\p{Lu}\p{Ll}{2,})/u;
/** An amount glued before the words labelling it, no colon ("5.00TVA 20% payée sur les encaissements"): a column of amounts printed against its labels' column. */
const AMOUNT_THEN_LABEL = /^(\d{1,3}(?:[.,\s]?\d{3})*[.,]\d{2})(\p{Lu}\p{L}{2}[^:]{0,80})$/u;
/** A PDF's line as its columns meant it: a value glued before its label as "Label: value", glued pairs apart. */
const unglued = (line: string): string[] => {
  if (line.length > GLUED_CHARS) return [line];
  const valueThenLabel = VALUE_THEN_LABEL.exec(line) ?? AMOUNT_THEN_LABEL.exec(line);
  if (valueThenLabel) return [`${valueThenLabel[2]}: ${valueThenLabel[1]!.replace(/,$/, "")}`];
  return line.split(PAIRS_GLUED);
};

/**
 * Fields a letterhead or a footer prints on one line, set apart by a dash or a bar between spaces
 * ("Siège social : 16 rue Mollien - 92100 BOULOGNE – Tél : 01 71 17 61 67"), or two columns of a
 * text's layout, a run of spaces before the second's label ("Faktura nr: F 1234   Data wystawienia: 2021-01-01").
 */
const FIELD_SEPARATOR = /\s+(?:[–—−|•]|\|\|)\s+|\s{3,}(?=\p{L}[\p{L} .]{0,30}:)/u;

/** A document's lines as the layout reader pieces them: label blocks paired, cell runs made rows. */
function layoutPieces(read: string[]): Piece[] {
  // A footer's line is short: a longer one is not split (what is tried of it stays bounded).
  const lines = read.flatMap((line) => (line.length > SENTENCE_PROBE ? [line] : line.split(FIELD_SEPARATOR))).flatMap(unglued);
  const taken = lines.map(() => false);
  const values = labelBlocks(lines, taken);
  const typed = typedLabels(lines, taken, values);
  const out: Piece[] = [];
  let units: string[] = [];
  let cells: string[] = [];
  const flush = () => {
    tableRows(units, cells, out);
    units = [];
    cells = [];
  };
  let code: string | undefined;
  let lead: string | undefined;
  const next = (i: number) => {
    let j = i + 1;
    while (j < lines.length && taken[j]) j++;
    return lines[j];
  };
  const isText = (line: string | undefined) =>
    line !== undefined &&
    /[\p{L}\d]/u.test(line.slice(0, SENTENCE_PROBE)) &&
    cellKind(line) === undefined &&
    !isCode(line) &&
    !isHeader(line) &&
    !LABEL_ONLY.test(line);
  for (let i = 0; i < lines.length; i++) {
    if (taken[i]) continue;
    const line = lines[i]!;
    const value = values.get(i);
    const labelled = typed.get(i) ?? (value !== undefined ? pair(line, value) : undefined);
    if (labelled !== undefined) {
      flush();
      out.push(labelled);
      continue;
    }
    if (cellKind(line) !== undefined && (units.length > 0 || cells.length > 0)) {
      cells.push(line);
      continue;
    }
    if (cells.length > 0) {
      // An item's code and cells printed before its name ("E8318" "1" "80.91" "80.91" "SR" "ELEGANT SCHTR BAG 15").
      if (units.length === 1 && isCode(units[0]!) && isText(line) && !isSummary(line) && cells.some((c) => cellKind(c) === "money")) {
        out.push({ statement: { text: `${line} ${units[0]} ${cells.join(" ")}`, holds: "item" } });
        units = [];
        cells = [];
        continue;
      }
      // A quantity printed before its item's name, the price after it ("1" / "KUO POH" / "6.00" / "2" / "TEA"): the next item's.
      if (
        cells.length >= 2 &&
        cellKind(cells.at(-1)!) === "count" &&
        cellKind(cells.at(-2)!) === "money" &&
        isText(line) &&
        !isSummary(line)
      ) {
        const after = i + 1 < lines.length && !values.has(i + 1) ? cellKind(lines[i + 1]!) : undefined;
        if (after === "money") lead = cells.pop();
      }
      flush();
    }
    // A discount's label and its cells belong to the item row above them ("@DISC" / "10.00%" / "-5.59").
    if (DISCOUNT_LINE.test(line.slice(0, SENTENCE_PROBE))) {
      flush();
      const item = out.at(-1);
      if (item && "statement" in item && item.statement.holds === "item") {
        const taken: string[] = [line];
        while (taken.length <= DISCOUNT_CELLS && i + 1 < lines.length && !values.has(i + 1) && cellKind(lines[i + 1]!) !== undefined)
          taken.push(lines[++i]!);
        item.statement.text = `${item.statement.text} ${taken.join(" ")}`;
        continue;
      }
    }
    // A lone ":" between a label and its value ("TOTAL" / ":" / "27.55") belongs to the label.
    if (line === ":" && units.length > 0) units[units.length - 1] = `${units.at(-1)}:`;
    // A summary's label alone ("ROUNDING :"), or a tax's header under a total ("TOTAL" / "( GST"), waits for its value with the labels above.
    else if (
      (LABEL_ONLY.test(line) && isSummary(line)) ||
      (isHeader(line) && cells.length === 0 && units.length > 0 && isSummary(units.at(-1)!))
    )
      units.push(line);
    else if (isCode(line)) {
      // A code under a label alone is its value ("Reference:" / "CUSTREF123"); before an item's name
      // it is its prefix, after it its suffix; before cells, the code of an item named after them.
      if (i > 0 && !taken[i - 1] && LABEL_ONLY.test(lines[i - 1]!)) out.push({ line });
      else if (isText(next(i)) && !(units.length > 0 && IDENTIFIER_LABEL.test(units.at(-1)!))) code = code ? `${code} ${line}` : line;
      else if (units.length > 0) units[units.length - 1] = `${units.at(-1)} ${line}`;
      else if (cellKind(next(i) ?? "") !== undefined) units.push(line);
      else out.push({ line });
    } else if (isText(line)) {
      const named = code ? `${code} ${line}` : line;
      units.push(lead ? `${lead} ${named}` : named);
      code = undefined;
      lead = undefined;
    } else {
      flush();
      out.push({ line });
    }
  }
  flush();
  return out;
}

/** A sentence of three words or more ending in a preposition, in any language of the tables. */
const CUT_AFTER = new RegExp(`^\\p{L}.*\\s\\S+\\s(?<![\\p{L}'’])${anyOf(all(PREPOSITIONS))}$`, "iu");
/** A line of two or more columns' names, no value among them ("BTW % Grondslag BTW bedrag Totaal"). */
const COLUMN_NAMES = /^\p{L}[\p{L}%./()' -]{2,60}$/u;
/** A line of values, no word among them ("21 % 41,31 8,68 49,99"). */
const COLUMN_VALUES = /^[^\p{L}]{3,80}$/u;
/** The fewest values of such a row: fewer under a line of words are a sentence's figures. */
const ROW_VALUES = 3;
/** A row of values under its columns' names: as many names as values at most twice over ("BTW bedrag" is one column's). */
function valuesUnderNames(names: string, values: string): boolean {
  if (!COLUMN_NAMES.test(names) || !COLUMN_VALUES.test(values)) return false;
  const cells = values.split(/\s+/).filter((v) => /\d/.test(v)).length;
  return cells >= ROW_VALUES && names.split(/\s+/).length <= 2 * cells;
}

/**
 * A source's statements: a mail's wrapped lines joined again (a place or a time cut at a line's
 * end was half a sentence); a document's layout read back into rows and label pairs, then a label
 * and the amount on the line below it as one.
 */
export function statementLines(s: StatementSource, contactWanted: boolean): Statement[] {
  const lines = s.text
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);
  const document = s.type !== "email";
  const pieces: Piece[] = document ? layoutPieces(lines) : lines.map((line) => ({ line }));
  const out: Statement[] = [];
  let quoted = false;
  // A row or a pair the layout made takes no line after it.
  let fixed = false;
  for (const piece of pieces) {
    if ("statement" in piece) {
      out.push({ ...piece.statement, quoted });
      fixed = true;
      continue;
    }
    const line = piece.line;
    // In a mail, what follows a quoted or forwarded message's first line is that message's, not the mail's own.
    if (s.type === "email" && startsQuote(line)) quoted = true;
    // A statement grows to SENTENCE_PROBE characters at most: what is tested of it stays bounded
    // (a label followed by 50,000 amount lines was re-read at each: quadratic, outside attack).
    const lastStatement = fixed ? undefined : out.at(-1);
    fixed = false;
    const last = lastStatement?.text;
    // A lone ":" between a label and its value ("TOTAL" / ":" / "27.55") belongs to the label.
    if (line === ":" && lastStatement && last !== undefined && last.length < SENTENCE_PROBE) {
      lastStatement.text = `${last}:`;
      continue;
    }
    const joinable = last !== undefined && last.length < SENTENCE_PROBE && !isBoilerplate(last, contactWanted, document);
    const wrapped =
      joinable &&
      ((s.type === "email" && WRAPPED.test(last) && GOES_ON.test(line) && !isBoilerplate(line, contactWanted)) ||
        // A document's sentence cut after its preposition ("All Payment to be made in favor of" / "Oravel Stays Pvt. Ltd."): its object is below.
        (document && CUT_AFTER.test(last) && line.length <= ADDRESS_CHARS && !isBoilerplate(line, contactWanted, document)));
    // A mail's paragraph longer than SENTENCE_PROBE goes on in a new statement from its unfinished
    // sentence: cut at the line's end, "… no" / "later than noon, August 28th." said neither whole.
    const unfinished =
      lastStatement && last !== undefined && last.length >= SENTENCE_PROBE && s.type === "email" && !lastStatement.quoted === !quoted
        ? unfinishedSentence(last, line, contactWanted)
        : undefined;
    if (lastStatement && unfinished !== undefined) {
      lastStatement.text = last!.slice(0, last!.length - unfinished.length).trimEnd();
      out.push({ text: `${unfinished} ${line}`, quoted });
      continue;
    }
    // A label takes the amount below it once ("TOTAL QTY" took its 1, then the next line's 80.91).
    const labelled =
      joinable &&
      ((AMOUNT_ONLY.test(line) && /\p{L}/u.test(last) && !/\d$/.test(last) && !MONEY.test(last)) ||
        // A label and its value below it, as PDFs lay them out ("Invoice Date:" / "03/20/2023", "BILL TO :" / "SUCI ALAM JAYA TRANSPORT").
        (/\p{L}\s?:$/u.test(last) && line.length <= LABELLED_VALUE && !/:$/.test(line)) ||
        // A label alone, its value under it after a colon, as receipts print them ("CASHIER" / ": NORLIDA MOHD RASHDI").
        (/^:\s*[\p{L}\d]/u.test(line) && LABEL_ALONE.test(last) && !/:$/.test(last) && line.length <= LABELLED_VALUE) ||
        // A receipt's quantity under its item ("DOLE PINEAPPLE PCS" / "7.90 * 3").
        (QUANTITY.test(line) && /\p{L}/u.test(last) && !MONEY.test(last)) ||
        // A date alone under a short label without a colon ("Vervaldatum" / "22-9-2022").
        (line.length <= DATE_ALONE && /^\p{L}{3,20}( \p{L}{2,20})?$/u.test(last) && documentDates(line).length > 0) ||
        // A row of values under its columns' names ("BTW % Grondslag BTW bedrag Totaal" / "21 % 41,31 8,68 49,99"): the names are its label.
        valuesUnderNames(last, line));
    if (lastStatement && (wrapped || labelled)) {
      lastStatement.text = `${last} ${line}`;
      // A label is words (a rate at most): "999900245 IKEA RETAI" above its price is an item, not a label.
      if (labelled && !/\d/.test(last!.replace(/\d+(?:[.,]\d+)?\s?%/g, ""))) {
        lastStatement.label = last!.replace(/\s*:$/, "");
        const holds = holdsOf(lastStatement.label);
        if (holds) lastStatement.holds = holds;
      }
    } else {
      // A document's line of a label and its value ("SERVER: PETER", "CASH 50.00") holds what its label says.
      const labelled = document ? LABELLED.exec(line.slice(0, SENTENCE_PROBE)) : null;
      const holds = labelled ? holdsOf(labelled[1] ?? labelled[2] ?? "") : undefined;
      out.push({ text: line, quoted, ...(holds ? { holds } : {}) });
    }
  }
  if (document) joinAddresses(out);
  // A party's block ("Nabywca: …" / "NIP: …" / "Adres: …"): the labelled lines under a seller's or a
  // buyer's label are that party's too, up to PARTY_LINES of them or the next party's label.
  let party: string | undefined;
  let partyLines = 0;
  for (const st of out) {
    const label = st.label ?? (document ? LABELLED.exec(st.text.slice(0, SENTENCE_PROBE))?.slice(1).find(Boolean) : undefined);
    const meanings = label === undefined ? [] : meaningsOf(label);
    const own = meanings.find((m) => PARTIES.includes(m));
    if (own !== undefined) [party, partyLines] = [own, 0];
    else if (party !== undefined && label !== undefined && ++partyLines <= PARTY_LINES) meanings.push(party);
    if (meanings.length) st.meanings = meanings;
  }
  // Where the layout read item rows, the document's items are those rows, not its other lines (the shop's name, its address).
  if (out.some((st) => st.holds === "item")) for (const st of out) st.holds ??= "other";
  return out;
}

/** The meanings of a party to a sale, whose block of labelled lines follows its label; and the most lines of one. */
const PARTIES = ["seller", "buyer"];
const PARTY_LINES = 4;
/** The longest line read as a line of an address, and the most lines an address has. */
const ADDRESS_CHARS = 80;
const ADDRESS_LINES = 5;
/** A street's word ("JALAN", "Weena", "rue"), a street named with one ("Uferweg", "Hauptstraße"), or a postcode before a town ("47800 P.JAYA"). */
const ADDRESS = new RegExp(
  `(?<![\\p{L}])${anyOf(all(ADDRESS_WORDS))}\\.?(?![\\p{L}])|\\p{L}{2}${COMPOUND_STREET}(?![\\p{L}])|(?<![\\p{L}\\d.,])\\d{4,6}\\s?,?\\s*\\p{Lu}\\.?\\p{Lu}`,
  "iu",
);
/**
 * A town with its postcode as each country writes it ("Fremont CA 94538", "3500 MJ Utrecht",
 * "58-100 Słotwina", "D-63571 Gelnhausen", "New Delhi - 110001"): an address's last line but its
 * country or state.
 */
const TOWN =
  /^\s*(?:[A-Z]{1,2}-)?(?:\d{2}-\d{3}|\d{4}\s?[A-Z]{2}|\d{4,6})\s+\p{Lu}\p{L}|\p{Lu}\p{Ll}[\p{L}.'-]{0,40},?\s+(?:[A-Z]{2}\s+\d{5}(?:-\d{4})?|[-–]\s?\d{6})\s*$/u;
/** A street named before its number ("Weena 664", "Fakestreet 46", "Chemików 7"): a line of an address above its town's line. */
const STREET_NUMBERED = /^\p{Lu}[\p{L}.' -]{1,40}\s\d{1,5}\s?[a-z]?$/u;
/** A country's or a state's name under a town ("United States", "Nederland", "SELANGOR."): one to three capitalised words. */
const COUNTRY_LINE = /^\p{Lu}[\p{L}'-]{1,20}(?:\s\p{Lu}[\p{L}'-]{1,20}){0,2}\.?$/u;
/** A company's or a person's name above its address ("Azure Interior", "Coolblue B.V."): capitalised, without a digit. */
const NAME_ABOVE = /^\p{Lu}[\p{L}&.,'()-]{0,30}(?:\s[\p{L}&.,'()-]{1,30}){0,5}$/u;
/** A label whose value is an address ("Shipping Address", "Siège social", "Adres"). */
const ADDRESS_LABEL = new RegExp(`(?<![\\p{L}])${anyOf(all(ADDRESS_LABELS))}(?![\\p{L}])`, "iu");
const CONTACT_LABEL = new RegExp(`(?<![\\p{L}])${anyOf(all(CONTACT_NOUNS))}(?![\\p{L}])`, "iu");
/** The most words of an address's label alone on its line ("Adresse de l'installation", "Factuuradres Afleveradres"). */
const ADDRESS_LABEL_WORDS = 4;
/** Prose, not an address: a sentence naming a street ("We moved the pallets to Main Street") has several words in small letters. */
const SMALL_WORD = /(?<![\p{L}])\p{Ll}{2,}(?![\p{L}])/gu;
const PROSE_WORDS = 4;
/** A line free to be read into an address: nothing the layout read, no value of a label, no amount, no header. */
const isFree = (st: Statement) =>
  st.holds === undefined && st.label === undefined && st.text.length <= ADDRESS_CHARS && !MONEY.test(st.text) && !isHeader(st.text);
/** A line's label, when it is "Label: value". */
const colonLabel = (text: string) => /^(\p{L}[\p{L}\d .()/&'-]{0,38}?)\s?:/u.exec(text)?.[1];
const isAddressLine = (st: Statement) => {
  if (!isFree(st)) return false;
  // "Incoterm: DPU - DELIVERED AT PLACE UNLOADED" names a place word under a label of something else.
  const label = colonLabel(st.text);
  if (label !== undefined && !ADDRESS_LABEL.test(label)) return false;
  return (ADDRESS.test(st.text) || TOWN.test(st.text)) && (st.text.match(SMALL_WORD)?.length ?? 0) < PROSE_WORDS;
};
/** An address's label alone on its line ("Shipping Address", "Factuuradres Afleveradres"), its value on the lines below. */
const isAddressLabel = (st: Statement) =>
  isFree(st) &&
  st.text.length <= 40 &&
  !/\d/.test(st.text) &&
  ADDRESS_LABEL.test(st.text) &&
  !CONTACT_LABEL.test(st.text) &&
  st.text.split(/\s+/).length <= ADDRESS_LABEL_WORDS;
/** A line "Label: value" whose label is an address's ("Adres: Chemików 7 09-411 Płock", "Siège social : 16 rue Mollien"). */
const addressLabelOf = (st: Statement): string | undefined => {
  if (st.holds !== undefined && st.holds !== "other") return undefined;
  const label = st.label ?? colonLabel(st.text.slice(0, SENTENCE_PROBE));
  return label !== undefined && ADDRESS_LABEL.test(label) && !CONTACT_LABEL.test(label) ? label.trim() : undefined;
};
/** A line going on with an address under its label: free, no label's ("Phone: …", "N° de TVA : …" end it), no contact. */
const goesOnAddress = (st: Statement) =>
  isFree(st) && !st.text.includes(":") && !CONTACTS_IN_LINE.some((re) => re.test(st.text)) && !PHONE_LINE.test(st.text);

/**
 * A document's address printed over several lines ("LOT S319, 2ND FLOOR," / "1 UTAMA SHOPPING
 * CENTRE," / "NO1, LEBUH BANDAR UTAMA,47800 P.JAYA") as one statement holding an address: a line
 * between two of its lines belongs to it, a street's line above its town's and the name above
 * them too, and a country under it. Under an address's label ("Shipping Address", "Adres:") the
 * lines below are its value, up to its town's line.
 */
function joinAddresses(out: Statement[]): void {
  let to = 0;
  for (let i = 0; i < out.length; i++) {
    const st = out[i]!;
    const labelled = isAddressLabel(st) ? st.text.replace(/\s*:$/, "") : addressLabelOf(st);
    if (labelled === undefined && !isAddressLine(st)) {
      out[to++] = st;
      continue;
    }
    const parts = [st.text];
    let j = i + 1;
    if (labelled !== undefined) {
      // The label's value below it, up to its town's line (and the country under that).
      // A label alone is no line of the address.
      const alone = isAddressLabel(st);
      let town = TOWN.test(st.text) && !alone;
      while (!town && parts.length < ADDRESS_LINES + (alone ? 1 : 0) && j < out.length && goesOnAddress(out[j]!)) {
        town = TOWN.test(out[j]!.text);
        parts.push(out[j++]!.text);
      }
    } else {
      // A street's line above the town's, and the name above the address.
      if (TOWN.test(st.text) && to > 0 && isFree(out[to - 1]!) && STREET_NUMBERED.test(out[to - 1]!.text)) parts.unshift(out[--to]!.text);
      if (to > 0 && isFree(out[to - 1]!) && out[to - 1]!.text.length <= 40 && NAME_ABOVE.test(out[to - 1]!.text))
        parts.unshift(out[--to]!.text);
      while (parts.length < ADDRESS_LINES + 2 && j < out.length) {
        if (isAddressLine(out[j]!)) parts.push(out[j++]!.text);
        else if (j + 1 < out.length && isFree(out[j]!) && isAddressLine(out[j + 1]!)) {
          parts.push(out[j]!.text, out[j + 1]!.text);
          j += 2;
        } else break;
      }
    }
    if (j < out.length && TOWN.test(parts.at(-1)!) && isFree(out[j]!) && COUNTRY_LINE.test(out[j]!.text)) parts.push(out[j++]!.text);
    // Under a person's label ("Bill to Address", "Customer address") the address is whose it names too.
    const holds = labelled !== undefined && PERSON_LABEL_START.test(labelled) ? "addressee" : "address";
    out[to++] = { text: parts.join(" "), holds, quoted: st.quoted, ...(labelled !== undefined ? { label: labelled } : {}) };
    i = j - 1;
  }
  out.length = to;
}

/** A labelled line's label, as documents write it ("Invoice Date: 03/20/2023", "Total TTC : 56,02 €"). */
export const LABELLED = /^(\p{L}[\p{L}\d .()/&'-]{0,38}?)\s?:\s*\S|^(\p{L}[\p{L} .()/&'-]{0,30}?)\s+(?=[-€$£(]?\s?\d)/u;
