// A journal file's transactions as records (D34), read in the reading worker (D31): one record
// per transaction, whose text reads like the journal entry (so that its words find it) and
// whose metadata holds the structured postings (JSON), from which transactionOf gives the
// transaction back for exact sums (sums.ts). Its id, path and address name the file and line.
import { gunzipSync } from "node:zlib";
import { EXPANDS_TOO_FAR, FileSkipped, MAX_EXPANDED_BYTES } from "../files/limits";
import type { SourceRecord } from "../types";
import { parseBeancount } from "./beancount";
import { type BookFormat, BookUnreadable, type OnTransaction, type ParsedBook } from "./format";
import { parseGnucash } from "./gnucash";
import { isSqlite, parseGnucashSqlite } from "./gnucash-sqlite";
import { parseLedger } from "./ledger";
import { parseOfx } from "./ofx";
import { parseQif } from "./qif";
import type { BookTransaction, Posting } from "./sums";

/** Transactions read from one file at most: past it, the file is skipped (each is a record in the index). */
export const MAX_BOOK_TRANSACTIONS = 500_000;
/**
 * Postings, tags and metadata of one transaction at most: past it, the file is skipped. A
 * transaction is one record, its postings held twice (its text and their JSON), which the serving
 * thread receives, seals and indexes whole (D31): one of 1,000,000 postings (a 30 MB journal)
 * held it 1.5 s in one turn; a line is bounded, but not how many lines or tags one holds.
 */
export const MAX_TRANSACTION_ENTRIES = 10_000;

const entriesOf = (t: BookTransaction) => t.postings.length + t.tags.length + Object.keys(t.meta).length;

/**
 * Transactions read between two words to the reader: each word crosses to the serving thread,
 * which reads the worker's CPU time from /proc for it; one per transaction (a few µs of parsing)
 * held that thread 0.6 s over a file of 500,000. The budget of a record (D31) then covers this
 * many, which take milliseconds.
 */
export const TRANSACTIONS_PER_BUDGET = 1024;

/** Where a journal file's records are found: its path in the folder, its address, its format. */
export interface BookPlace {
  file: string;
  url: string;
  format: BookFormat;
}

const PARSERS: Record<BookFormat, (text: string, file: string, onTransaction: OnTransaction) => ParsedBook> = {
  beancount: parseBeancount,
  ledger: parseLedger,
  qif: parseQif,
  ofx: parseOfx,
  gnucash: parseGnucash,
};

/** Each format as the status names it. */
export const FORMAT_NAMES: Record<BookFormat, string> = {
  beancount: "beancount",
  ledger: "Ledger journal",
  qif: "QIF",
  ofx: "OFX",
  gnucash: "GnuCash XML",
};

/** A gzip file (GnuCash's default) inflated, within MAX_EXPANDED_BYTES. */
function inflated(bytes: Uint8Array): Uint8Array {
  if (bytes[0] !== 0x1f || bytes[1] !== 0x8b) return bytes;
  try {
    return gunzipSync(bytes, { maxOutputLength: MAX_EXPANDED_BYTES });
  } catch (error) {
    if (error instanceof RangeError || (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new FileSkipped(EXPANDS_TOO_FAR);
    throw new Error("the gzip data is broken");
  }
}

/** UTF-8, else ISO-8859-1 (MS Money's French QIF files): every byte is some character in one of them. */
function decoded(bytes: Uint8Array): string {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "");
  } catch {
    return new TextDecoder("latin1").decode(bytes);
  }
}

/** A posting as a journal line: "  Expenses:Food:Restaurant  40.88 USD". */
const postingLine = (p: Posting) => `  ${p.account}  ${p.amount}${p.commodity ? ` ${p.commodity}` : ""}`;

/** The record of one transaction. */
export function transactionRecord(t: BookTransaction, place: BookPlace, id: string): SourceRecord {
  const head = [t.date, t.payee, t.narration].filter(Boolean).join(" ");
  const tags = t.tags.length ? ` ${t.tags.map((x) => `#${x}`).join(" ")}` : "";
  const meta = Object.entries(t.meta).map(([k, v]) => `  ${k}: ${v}`);
  return {
    id,
    title: [t.payee, t.narration].filter(Boolean).join(": ") || t.postings[0]?.account || t.date,
    content: [`${head}${tags}`, ...meta, ...t.postings.map(postingLine)].join("\n"),
    source_url: `${place.url}#L${t.line}`,
    date: `${t.date}T00:00:00.000Z`,
    type: "file",
    path: id,
    metadata: {
      book_format: place.format,
      file: t.file,
      line: t.line,
      payee: t.payee,
      narration: t.narration,
      accounts: [...new Set(t.postings.map((p) => p.account))].join(", "),
      commodities: [...new Set(t.postings.map((p) => p.commodity).filter(Boolean))].join(", "),
      tags: t.tags.join(" "),
      postings: JSON.stringify(t.postings),
      transaction_meta: JSON.stringify(t.meta),
    },
  };
}

/** The transaction a books record holds (undefined for a record of another kind): what sums.ts adds up. */
export function transactionOf(record: SourceRecord): BookTransaction | undefined {
  const m = record.metadata;
  if (typeof m.book_format !== "string" || typeof m.postings !== "string" || typeof m.file !== "string" || typeof m.line !== "number")
    return undefined;
  return {
    date: (record.date ?? "").slice(0, 10),
    payee: String(m.payee ?? ""),
    narration: String(m.narration ?? ""),
    postings: JSON.parse(m.postings) as Posting[],
    tags: typeof m.tags === "string" && m.tags ? m.tags.split(" ") : [],
    meta: typeof m.transaction_meta === "string" ? (JSON.parse(m.transaction_meta) as Record<string, string>) : {},
    file: m.file,
    line: m.line,
  };
}

/** The records of a journal file, one per transaction; `onRecord` is told after each TRANSACTIONS_PER_BUDGET transactions read. */
export function bookRecords(bytes: Uint8Array, place: BookPlace, onRecord: () => void = () => {}): SourceRecord[] {
  let read = 0;
  let transactions: BookTransaction[];
  const onTransaction = () => {
    if (++read > MAX_BOOK_TRANSACTIONS) throw new FileSkipped(`holds more than ${MAX_BOOK_TRANSACTIONS} transactions`);
    if (read % TRANSACTIONS_PER_BUDGET === 0) onRecord();
  };
  // GnuCash names its SQLite books `.gnucash` too: told by their first bytes.
  const sqlite = place.format === "gnucash" && isSqlite(bytes);
  try {
    ({ transactions } = sqlite
      ? parseGnucashSqlite(bytes, place.file, onTransaction)
      : PARSERS[place.format](decoded(inflated(bytes)), place.file, onTransaction));
  } catch (error) {
    // The parsers' words name a line and what it lacks, never its text: the status may show them.
    if (error instanceof BookUnreadable)
      throw new FileSkipped(`is not a readable ${sqlite ? "GnuCash SQLite" : FORMAT_NAMES[place.format]} file (${error.message})`);
    throw error;
  }
  const seen = new Map<string, number>();
  const crowded = transactions.find((t) => entriesOf(t) > MAX_TRANSACTION_ENTRIES);
  if (crowded)
    throw new FileSkipped(`holds a transaction of more than ${MAX_TRANSACTION_ENTRIES} postings, tags and metadata (line ${crowded.line})`);
  return transactions.map((t) => {
    // Transactions on one line (an OFX file's, often) are told apart by their place on it.
    const at = `${place.file}#L${t.line}`;
    const n = (seen.get(at) ?? 0) + 1;
    seen.set(at, n);
    return transactionRecord(t, place, n === 1 ? at : `${at}.${n}`);
  });
}
