// Amounts named in a question ("over 1,000 EUR", "under $50") as a soft signal: a record that
// holds an amount meeting the condition ranks a little higher, one that holds only amounts
// failing it a little lower. Amounts are read from the text and from numeric metadata.
import { SHEET_PLACE_FIELDS } from "../connectors/files/sheets";
import { isKeyColumn, type SourceRecord } from "../connectors/types";
import { billedIn } from "./countries";
import {
  CODES_AGAINST_NUMBER,
  CURRENCY_CODES,
  CURRENCY_CODES_ANYWHERE,
  CURRENCY_CODES_BEFORE,
  CURRENCY_SIGNS,
  CURRENCY_SIGNS_ANYWHERE,
} from "./language/currencies";
import { anyOf, wholeWords } from "./language/patterns";
import { all, INCLUDING, PART_OF_TOTAL_LABELS, PART_OF_TOTAL_WORDS, TAX_NOUNS, TOTAL_LABELS } from "./language/words";
import type { QueryPlan } from "./plan";
import { namesKind } from "./record-kinds";
import { RecordMemo } from "./record-memo";

/** Larger than a hint: a question such as "invoices over 1000" says little else. */
export const AMOUNT_BOOST = 0.15;
/**
 * When the amount is all a question says beyond the kind of record ("Which invoices are over
 * 1000 EUR?"): the one invoice over it, in Dutch and so near nothing else of the question,
 * was not in the first five at AMOUNT_BOOST (outside walkthrough).
 */
export const AMOUNT_ONLY_BOOST = 0.5;

/** How much of a record is read for its amounts: an invoice states its total on its first pages. */
export const AMOUNT_PROBE = 50_000;

/** How far before an amount its line is read for a total's label ("Total TTC : 56,02 €"). */
const TOTAL_LABEL_REACH = 80;

export { CURRENCY_CODES, CURRENCY_NAMES } from "./language/currencies";

/** A total (what "how much" asks), in the languages invoices and receipts here are written in. */
export const TOTAL = new RegExp(wholeWords(all(TOTAL_LABELS)), "iu");
/**
 * Part of a total, before tax, or a total of something else (items, points, savings, the change
 * given): an answer to "how much" only when nothing better is there. Outside attack, 625 SROIE
 * receipts: 130 answers quoted "TOTAL QTY", "TAX TOTAL", "TOTAL SAVINGS" or "TOTAL POINTS".
 */
export const PART_OF_TOTAL = new RegExp(`\\b${anyOf(all(PART_OF_TOTAL_LABELS))}|\\b${anyOf(all(PART_OF_TOTAL_WORDS))}\\b`, "i");
/** Tax: part of a total, unless the question asks for it ("how much VAT"); not a total "including GST". */
// Without the u flag: a tax line is tested on every line of a record, and \\b is as good for these words.
export const TAX = new RegExp(`(?<!\\b${anyOf(all(INCLUDING))}[\\s,(]{0,3})\\b${anyOf(all(TAX_NOUNS))}\\b(?![\\s)]{0,2}incl)`, "i");

/** A line of a record that states its total (not a subtotal, tax or a total of items). */
export const isTotalLine = (line: string) => TOTAL.test(line) && !PART_OF_TOTAL.test(line) && !TAX.test(line);

/** An amount and its currency, where the text says it (or the one currency the record is written in). */
export interface Amount {
  value: number;
  currency?: string;
  /** Stated on a total's line ("Totaal € 4.904,94"), not a line item's, a tax's or the share capital's. */
  total?: boolean;
}

/**
 * Numbers written as amounts: with cents (1,250.00 / 1.250,00 / 12.50) or beside a currency
 * (€ 2.321 / 1939 INR / Rs. 1939); never bare digits, which are account, phone and order numbers.
 * An amount without its own currency takes the record's most written one.
 */
export function amountsWithCurrency(record: SourceRecord): Amount[] {
  const out: Amount[] = [];
  // A table row's numeric columns other than its keys and, in a spreadsheet, its place (row number, file size).
  const place = record.metadata.sheet !== undefined ? SHEET_PLACE_FIELDS : undefined;
  if (record.metadata.table !== undefined)
    for (const [k, v] of Object.entries(record.metadata))
      if (typeof v === "number" && Number.isFinite(v) && !isKeyColumn(k) && !place?.has(k)) out.push({ value: v });
  // A currency code against its number is read as written apart.
  const text = `${record.title} ${record.content}`.slice(0, AMOUNT_PROBE).replace(CODE_AGAINST_NUMBER, "$1 ");
  // Where each line starts, found once (a search back per amount was quadratic on one long line: outside attack).
  const breaks: number[] = [];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) breaks.push(i);
  let nextBreak = 0;
  let lineStart = 0;
  let previousLineStart = 0;
  const written = new Map<string, number>();
  let totalLineStart = -1;
  let previousEnd = 0;
  // Not parts of dates or times (2026-03-12, 03/12, 10:30), nor percentages (21%).
  // Thousands grouped by a space (no-break, narrow or thin too) within a line, never across one
  // ("TOTAL:" / "24" / "473.30" is no 24,473.30: outside attack).
  for (const m of text.matchAll(
    /(?<![\w.,\-/:])(\d{1,3}(?:[., \u00a0\u202f\u2009]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\w\-/:%]|\s%)/g,
  )) {
    while (nextBreak < breaks.length && breaks[nextBreak]! < m.index!) {
      previousLineStart = lineStart;
      lineStart = breaks[nextBreak++]! + 1;
    }
    const cents = /[.,]\d{2}$/.test(m[1]!);
    const before = CURRENCY_BEFORE.exec(text.slice(Math.max(lineStart, m.index! - 8), m.index!));
    const after = CURRENCY_AFTER.exec(text.slice(m.index! + m[0].length, m.index! + m[0].length + 5));
    if (!cents && !before && !after) continue;
    const n = amountValue(m[1]!);
    if (!Number.isFinite(n)) continue;
    const currency = currencyCode(before?.[1] ?? after?.[1] ?? "");
    if (currency) written.set(currency, (written.get(currency) ?? 0) + 1);
    // An amount alone on its line (a currency at most before it) under a line that is only a
    // total's label is that total, as receipts print it ("GRAND TOTAL :" then "20.00"): 416 more of
    // the 625 SROIE receipts' totals read, about one in ten wrongly (a tax summary's "TOTAL :").
    // Lengths are checked before any pattern runs: a long run of spaces before an amount made the
    // test quadratic (27 s on 25 KB: outside attack).
    const end = m.index! + m[0].length;
    const lineEnd = nextBreak < breaks.length ? breaks[nextBreak]! : text.length;
    const alone =
      lineStart > 0 &&
      m.index! - lineStart <= ALONE_REACH &&
      lineEnd - end <= ALONE_REACH &&
      lineStart - previousLineStart <= LABEL_CHARS + 1 &&
      currencyOrNothing(text.slice(lineStart, m.index!).trim()) &&
      currencyOrNothing(text.slice(end, lineEnd).trim());
    const above = alone ? text.slice(previousLineStart, lineStart - 1) : "";
    const line =
      alone && isLabelOnly(above) && isTotalLine(above) ? above : text.slice(Math.max(lineStart, m.index! - TOTAL_LABEL_REACH), m.index!);
    // A total's line states it last, in its rightmost column ("Total 1 278.61 40.39 319.00": 319.00),
    // unless another total's label comes between ("Total 1.452,00 € Balance due 0,00 €": both).
    const previous = out.at(-1);
    const labelBetween = TOTAL.test(text.slice(Math.max(previousEnd, m.index! - TOTAL_LABEL_REACH), m.index!));
    if (previous?.total && lineStart === totalLineStart && !labelBetween) delete previous.total;
    const total = isTotalLine(line);
    if (total) totalLineStart = lineStart;
    previousEnd = m.index! + m[0].length;
    out.push({ value: n, currency, ...(total ? { total: true } : {}) });
  }
  // No amount with its currency beside it: the currency the record names elsewhere ("AMOUNT (RM)",
  // "RM" on a line of its own, as receipts print it): 1,000.00 cash tendered in ringgit is no euro amount.
  if (written.size === 0)
    for (const m of text.matchAll(CURRENCY_ALONE)) {
      const code = currencyCode(m[1]!);
      if (code) written.set(code, (written.get(code) ?? 0) + 1);
    }
  const usual = [...written].sort((a, b) => b[1] - a[1])[0]?.[0];
  return usual ? out.map((a) => (a.currency ? a : { ...a, currency: usual })) : out;
}

/**
 * The ISO code of a currency as a record writes it. Ringgit only as receipts print it, "RM": "Rm
 * 1204" in an address is a room (outside attack: a euro invoice read as in ringgit).
 */
function currencyCode(written: string): string | undefined {
  if (/^rm$/i.test(written) && written !== "RM") return undefined;
  return CURRENCY_CODES[written.toLowerCase()];
}

/**
 * A number as written in an amount, in either convention (1,234.56 / 1.234,56 / 1 234,56 /
 * 1.000): the last separator followed by one or two digits is the decimal mark, the others
 * group thousands (a lone dot before three digits too, unless `dotGroupsThousands` is false).
 * NaN when it is no number.
 */
export function amountValue(written: string, { dotGroupsThousands = true } = {}): number {
  const s = written.replace(/\s/g, "");
  // One dot and three digits ("3.459") is read as a decimal where the convention says so.
  if (!dotGroupsThousands && /^\d+\.\d{3}$/.test(s)) return Number(s);
  const dec = /[.,](\d{1,2})$/.exec(s);
  const whole = dec ? s.slice(0, s.length - dec[0].length) : s;
  return Number(whole.replace(/[.,]/g, "") + (dec ? `.${dec[1]}` : ""));
}

/** How far before or after an amount its line is read to tell it alone there (a currency at most). */
const ALONE_REACH = 12;
/** The longest line read as a total's label alone. */
const LABEL_CHARS = 40;
/**
 * A line that is only a total's label, a currency, a rate and a colon at most ("GRAND TOTAL :",
 * "TOTAL (RM)", "TOTAL INCL. GST@6%"): no other number, nothing paid, tendered or counted.
 */
const TOTAL_LABEL_LINE = /^(?!.*\b(paid|accepted|tender|cash|qty|items?)\b)[\p{L}\s().:/@%-]+$/iu;
/** Nothing, or a currency alone ("RM", "€", "(EUR)"): what may stand beside an amount alone on its line. */
const currencyOrNothing = (x: string) => x === "" || SIGN_ONLY.test(x) || currencyCode(x.replace(/[():]/g, "")) !== undefined;
const isLabelOnly = (line: string) => TOTAL_LABEL_LINE.test(line.replace(/\d+(?:[.,]\d+)?\s?%/g, ""));

const SIGN_ONLY = new RegExp(`^${CURRENCY_SIGNS}$`, "u");
/** As receipts print them against their number ("RM39.00", "Rs.500"); not a gene's "rs10818488". */
const CODE_AGAINST_NUMBER = new RegExp(`(?<![\\p{L}])(${CODES_AGAINST_NUMBER})(?=\\d)`, "gu");
/** A currency named on its own, anywhere in a record. */
const CURRENCY_ALONE = new RegExp(`(?<![\\p{L}])(${CURRENCY_SIGNS_ANYWHERE}|${CURRENCY_CODES_ANYWHERE})(?![\\p{L}])`, "giu");
// Not the currency written after the amount before ("1.452,00 EUR 2": the 2 is no euro amount).
const CURRENCY_BEFORE = new RegExp(`(?<![\\d.,]\\s{0,2})(${CURRENCY_SIGNS}|(?<![\\p{L}])${CURRENCY_CODES_BEFORE})\\s*$`, "iu");
// After a number no "$" ("4.904,94 €"): "$" after a number starts the next amount.
const CURRENCY_AFTER = new RegExp(`^\\s*(${CURRENCY_SIGNS_ANYWHERE}|${CURRENCY_CODES_ANYWHERE}(?![\\p{L}]))`, "iu");

/** A record billed in the currency of a country the question names ("from Poland": PLN) is likely from there. */
export const COUNTRY_CURRENCY_BOOST = 0.1;

/** Amounts (and ENTRY_SIZE for each record's entry) the memo of records' amounts keeps. */
const AMOUNTS_KEPT = 200_000;
const ENTRY_SIZE = 8;
const recordAmounts = new RecordMemo<Amount[]>(AMOUNTS_KEPT, (a) => a.length + ENTRY_SIZE);

/**
 * amountsWithCurrency, read once per version of what it reads (a table's columns, the title and the
 * content's first AMOUNT_PROBE characters) for the record of `key` (record-memo.ts recordKey);
 * read again without one. An amount condition weighs every candidate of every question by them
 * (a frozen record met again: neither read nor hashed again, record-memo.ts getOfRecord).
 */
export function amountsOf(record: SourceRecord, key?: string): Amount[] {
  if (key === undefined) return amountsWithCurrency(record);
  return recordAmounts.getOfRecord(key, record, amountsRead, () => amountsWithCurrency(record));
}

/** What amountsWithCurrency reads of a record: a table's columns, the title, the content's first AMOUNT_PROBE characters. */
function amountsRead(record: SourceRecord): string {
  const columns = record.metadata.table !== undefined ? JSON.stringify(record.metadata) : "";
  return `${columns}\u0000${record.title}\u0000${record.content.slice(0, AMOUNT_PROBE)}`;
}

/** The amount conditions' signal, and the currency of the countries named; `key` remembers the record's amounts (amountsOf). */
export function amountSignal(plan: QueryPlan, record: SourceRecord, key?: string): number {
  return conditionSignal(plan, record, key) + currencySignal(plan, record);
}

function currencySignal(plan: QueryPlan, record: SourceRecord): number {
  if (plan.countries.length === 0 || record.metadata.table !== undefined) return 0;
  const text = `${record.title} ${record.content}`;
  return plan.countries.some((c) => billedIn(text, c)) ? COUNTRY_CURRENCY_BOOST : 0;
}

/** Whether a record's amounts do not fail the question's amount conditions (none asked, none stated, or met). */
export const meetsAmountConditions = (plan: QueryPlan, record: SourceRecord): boolean => conditionSignal(plan, record) >= 0;

/** +AMOUNT_BOOST, 0 or -AMOUNT_BOOST for a record against the question's amount conditions. */
function conditionSignal(plan: QueryPlan, record: SourceRecord, key?: string): number {
  const conditions = plan.amounts.filter((a) => a.comparison);
  if (conditions.length === 0) return 0;
  // An invoice is over or under an amount by its total where it states one: its share capital
  // ("capital de 10 000€") or a line item is not what it bills.
  const all = amountsOf(record, key);
  const totals = all.filter((a) => a.total);
  const found = totals.length ? totals : all;
  // "Over 1000 EUR" is about amounts in euros (or of no stated currency): 1,939 INR is not over it
  // (outside walkthrough: an invoice in rupees came first). A record is judged by the conditions in
  // a currency it states amounts in ("over $1000 or over 1000 EUR"); one whose total is stated only
  // in other currencies is not what the question asks for, as one below it is not (outside attack:
  // receipts in ringgit printing "TAX INVOICE" came before the one invoice over 1000 EUR); one
  // stating no total in them is not judged unless it is a document (a mail naming a fee in dollars:
  // second outside attack).
  const inCurrency = (c: (typeof conditions)[number]) => found.filter((a) => !c.currency || !a.currency || a.currency === c.currency);
  const boost = plan.terms.every(namesKind) ? AMOUNT_ONLY_BOOST : AMOUNT_BOOST;
  const judged = conditions.filter((c) => inCurrency(c).length > 0);
  if (judged.length === 0) return found.length > 0 && (totals.length > 0 || record.type === "file") ? -boost : 0;
  // By its total, the largest a total's line states ("Balance due 0,00 €" under "Total 1.452,00 €"); else by any amount.
  const meetsOne = (c: (typeof conditions)[number], values: number[]) =>
    c.comparison === "over" ? values.some((v) => v > c.value) : values.some((v) => v < c.value);
  const meets = judged.every((c) => {
    const values = inCurrency(c).map((a) => a.value);
    return meetsOne(c, totals.length ? [Math.max(...values)] : values);
  });
  return meets ? boost : -boost;
}
