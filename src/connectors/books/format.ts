// The journal formats of the books kind (D34), told by the file's name, and what their parsers
// share: the transaction type (sums.ts), amounts made into plain decimals, and the error a
// broken file is refused with (its line, never its content).
import { extname } from "node:path";
import { type BookTransaction, isZeroDecimal, negateDecimal, type Posting, sumPostings } from "./sums";

export const BOOK_FORMATS = {
  ".beancount": "beancount",
  ".bean": "beancount",
  ".ledger": "ledger",
  ".journal": "ledger",
  ".hledger": "ledger",
  ".dat": "ledger",
  ".qif": "qif",
  ".ofx": "ofx",
  ".qfx": "ofx",
  ".gnucash": "gnucash",
} as const;

export type BookFormat = (typeof BOOK_FORMATS)[keyof typeof BOOK_FORMATS];

export const bookFormatOf = (path: string): BookFormat | undefined =>
  BOOK_FORMATS[extname(path).toLowerCase() as keyof typeof BOOK_FORMATS];

/** A file its parser cannot read: the line, and what was expected there (never the line's text). */
export class BookUnreadable extends Error {
  constructor(line: number, what: string) {
    super(`line ${line}: ${what}`);
  }
}

/**
 * Characters of one line of a line-based journal (beancount, Ledger, QIF), at most: a longer one
 * refuses the file. A journal's lines are tens of characters; megabytes on one line only make
 * its patterns work harder.
 */
export const MAX_LINE_CHARS = 64 * 1024;

/** The line at `index` (0-based), refused past MAX_LINE_CHARS. */
export function boundedLine(lines: string[], index: number): string {
  const line = lines[index]!;
  if (line.length > MAX_LINE_CHARS) throw new BookUnreadable(index + 1, `a line is longer than ${MAX_LINE_CHARS} characters`);
  return line;
}

/** A parser's result: the transactions, and how many other entries (accounts, categories) it read. */
export interface ParsedBook {
  transactions: BookTransaction[];
  /** Entries that are not transactions (a QIF file's accounts, categories, classes, memorized ones). */
  otherEntries: number;
}

/** Told after each transaction read, so that each has a CPU budget of its own (D31). */
export type OnTransaction = () => void;

/**
 * Digits of one amount, at most: more than any money holds (10^30 units with 10 decimals), and
 * a bigint of 60,000 digits took ~60 ms to turn back into text.
 */
export const MAX_AMOUNT_DIGITS = 40;

/** "1,234.50", "+5", ".5", "-0.10" as a plain decimal ("1234.50", "5", "0.5", "-0.10"); undefined when not a number. */
export function plainDecimal(text: string, decimalComma = false): string | undefined {
  let s = text.trim().replace(/\s+/g, "");
  if (decimalComma) s = s.replace(/\./g, "").replace(",", ".");
  else s = s.replace(/,(?=\d{3}(\D|$))/g, "");
  const m = /^([+-]?)(\d*)(?:\.(\d*))?$/.exec(s);
  if (!m || (!m[2] && !m[3]) || (m[2] ?? "").length + (m[3] ?? "").length > MAX_AMOUNT_DIGITS) return undefined;
  const whole = (m[2] ?? "").replace(/^0+(?=\d)/, "") || "0";
  return `${m[1] === "-" ? "-" : ""}${whole}${m[3] ? `.${m[3]}` : ""}`;
}

/**
 * Counts lines up to each offset asked, in increasing order, in one pass over the text: the next
 * line break is remembered, since looking for it afresh from each offset read to the end of a
 * text without one (an OFX file on one line) each time.
 */
export class LineCounter {
  private line = 1;
  private next: number;
  /** Characters looked at to find line breaks, in all (at most the text's length; tests count it). */
  looked: number;
  constructor(private readonly text: string) {
    this.next = text.indexOf("\n");
    this.looked = this.next < 0 ? text.length : this.next + 1;
  }
  lineAt(offset: number): number {
    while (this.next >= 0 && this.next < offset) {
      this.line++;
      const from = this.next + 1;
      this.next = this.text.indexOf("\n", from);
      this.looked += (this.next < 0 ? this.text.length : this.next + 1) - from;
    }
    return this.line;
  }
}

/**
 * A transaction's one posting written without an amount takes what balances the others, per
 * commodity (Ledger's and beancount's rule); more than one such posting is no transaction.
 */
export function balanceElided(t: BookTransaction, weights: Posting[], elided: string[]): void {
  if (elided.length > 1) throw new BookUnreadable(t.line, "a transaction leaves out more than one posting's amount");
  if (elided.length === 0) return;
  for (const [commodity, sum] of Object.entries(sumPostings(weights)))
    if (!isZeroDecimal(sum)) t.postings.push({ account: elided[0]!, amount: negateDecimal(sum), commodity });
}

/** A transaction being read: its postings' weights and the accounts left without an amount, kept until it ends. */
export type OpenTransaction = BookTransaction & { weights: Posting[]; elided: string[] };

/** An open transaction ended: its left-out amount balanced, kept with the others, counted. */
export function endTransaction(open: OpenTransaction, transactions: BookTransaction[], onTransaction: OnTransaction): void {
  const { weights, elided, ...t } = open;
  balanceElided(t, weights, elided);
  transactions.push(t);
  onTransaction();
}
