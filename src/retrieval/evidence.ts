// Soft signals of the question beyond words and meaning, added to a candidate's fused score:
// the kind of record asked for, the table a row is of, a table's order, people in mail headers,
// years in documents, amounts and countries (amounts.ts).
import { ORDER_RANK, type SourceRecord } from "../connectors/types";
import { amountSignal } from "./amounts";
import { words } from "./bm25";
import { documentDates } from "./document-dates";
import { all, PERSON_NAME_COLUMNS } from "./language/words";
import type { QueryPlan } from "./plan";
import { onDaysSaid } from "./question-dates";
import { RecordMemo } from "./record-memo";
import { isRow } from "./types";

const HINT_BOOST = 0.05;
/**
 * A row of the table the question names ("customers in Paris": Customer rows). 0.15 let the
 * Invoice rows billed to Paris, nearer the question by meaning once embedded, fill the shop's
 * ten; 0.3 on the train split of scripts/eval/business.ts: shop 0.833 -> 0.936, the rest unchanged.
 */
const TABLE_KIND_BOOST = 0.3;
/** A column's name as PERSON_NAME_COLUMNS are compared: "FirstName", "first_name" and "First name" alike. */
const columnKey = (column: string) => column.toLowerCase().replace(/[\s_-]+/g, "");
const PERSON_COLUMNS = new Set(all(PERSON_NAME_COLUMNS).map(columnKey));
/** Whether a row is a person's own (a customer, an employee): one of its columns holds a person's name. */
const isPersonRow = (r: SourceRecord) => Object.keys(r.metadata).some((c) => PERSON_COLUMNS.has(columnKey(c)));
/**
 * A row a table put first when sorted as the question asked ("spent the most"); halved, thirded…
 * for the next. 0.3 let documents naming "invoice", "total" and the year asked come above the
 * shop's largest invoice of 2024; 0.6 on the train half of answers.ts: shop 0.828 -> 0.897, the
 * rest unchanged.
 */
const ORDER_BOOST = 0.6;
/** A person named in the question found in the mail's sender (or, less, its recipients). */
const SENDER_BOOST = 0.15;
const RECIPIENT_BOOST = 0.05;
/**
 * A document whose own text names a day within the time asked for (its invoice or receipt date,
 * document-dates.ts), or failing one, a year of it: documents carry no record date.
 */
const DOCUMENT_DATE_BOOST = 0.1;

/**
 * What a document loses when every day its text names lies outside the time asked for: it is of
 * another time, whatever year its text mentions otherwise (a receipt of 30-06-2018 citing the
 * "GST ACT 2014" matched "invoices from 2014" by that year, and nine such came above three
 * invoices of 2014). The date boost's size, the other way: on the train half of business.ts
 * invoices 0.963 -> 0.972 at 0.1 (the same at 0.2), the rest unchanged.
 */
const OUT_OF_TIME = DOCUMENT_DATE_BOOST;

/**
 * A document whose title (its heading, else its file's name) holds a word the question writes as
 * a name ("the Free invoice": free_fiber.pdf). The rare-word signal (score.ts) misses a name that is also a common
 * word: "free" is in many mails, and once the SQL source gave each of its tracks named "Free…"
 * (whole words read past its limit) the word weighed less over the pool and the Free invoice fell
 * from fifth to seventh. Mail subjects and rows are not names given by the one who filed them.
 * SciFact's test half, whose titles are headings: 0.7447 -> 0.7466 in the same hour.
 */
const NAMED_DOCUMENT_BOOST = 0.1;
/** How much of a title is read for the question's names (a crafted one may be long). */
const TITLE_PROBE = 200;

/** Words of a person's name as they appear in addresses and display names. */
const nameParts = (name: string) =>
  name
    .toLowerCase()
    .split(/\s+/)
    .filter((x) => x.length > 1);

/** Days and years (and ENTRY_SIZE for each record's entry) the memo of documents' dates keeps. */
const DATES_KEPT = 200_000;
const ENTRY_SIZE = 8;
/** The days a document's text names (document-dates.ts), and the years it names. */
const timesIn = (content: string) => ({
  days: documentDates(content),
  years: [...new Set([...content.matchAll(/(?<!\d)(19\d\d|20\d\d)(?!\d)/g)].map((m) => Number(m[1])))],
});
/** A document's days and years, read once per version of its text (a frozen record met again: not hashed again). */
const contentOf = (r: SourceRecord) => r.content;
const documentTimes = new RecordMemo<ReturnType<typeof timesIn>>(DATES_KEPT, (t) => t.days.length + t.years.length + ENTRY_SIZE, timesIn);

/**
 * Whether a document is of the days the question asks (plan.days): a day its text names is one of
 * them, or failing any day, a year of them (false: its days are all of another time); undefined
 * when no day is asked or it names no time. The answer reads it too: another day's receipt is no answer.
 */
export function datedAsAsked(plan: Pick<QueryPlan, "days">, r: SourceRecord, key?: string): boolean | undefined {
  const said = plan.days;
  if (!said) return undefined;
  const [from, to] = said.ranges[0]!;
  const lo = Number.isFinite(from) ? new Date(from).getUTCFullYear() : 1900;
  const hi = Number.isFinite(to) ? new Date(to - 1).getUTCFullYear() : 2100;
  // A document whose days are all outside the time (a receipt of 3 April 2018 for "in March 2018")
  // does not count by its year: its own dates say it is not of the time (outside walkthrough).
  const { days, years } = key === undefined ? timesIn(r.content) : documentTimes.getOfRecord(key, r, contentOf);
  if (days.some((t) => onDaysSaid(t, said)) || (days.length === 0 && !said.anyYear && years.some((y) => y >= lo && y <= hi))) return true;
  return days.length > 0 ? false : undefined;
}

/**
 * Soft signals of the question beyond words and meaning: kind, people, amounts, dates in
 * documents; `key` (record-memo.ts recordKey) remembers what is read from the record's text.
 */
export function evidence(plan: QueryPlan, r: SourceRecord, key?: string): number {
  let s = 0;
  // A hint is about the kind of record: documents are files, not rows of a table named "invoice".
  const kind = r.type === "email" ? "email" : isRow(r) ? "row" : "file";
  if (plan.sourceHint && kind === plan.sourceHint) s += HINT_BOOST;
  // A row is of the kind its table names: a "Customer" row is the customer asked for, more
  // than another table's row that mentions the same city; not when documents are asked for
  // ("fuel invoice from Poland" wants the invoice, not the shop's Invoice rows billed to Warsaw).
  if (
    kind === "row" &&
    plan.sourceHint !== "file" &&
    (plan.terms.some((t) => t.replace(/s$/, "") === String(r.metadata.table).toLowerCase()) ||
      // A question asking who ("Who lives at Barbarossastrasse 19?") asks for a person's own row,
      // the same kind, more than the invoices billed to that address: the SQL source gives every
      // row holding the words whole, its six invoices outranked the customer by their repeated
      // address, and the five rows a source may show were all invoices (the customer seventh).
      // Not when mail is asked for ("Who sent …?": its sender).
      (plan.asks === "person" && plan.sourceHint !== "email" && isPersonRow(r)))
  )
    s += TABLE_KIND_BOOST;
  // A table sorted as the question asked ("which customer spent the most"): its first rows answer it.
  const rank = r.metadata[ORDER_RANK];
  if (plan.order && typeof rank === "number" && rank >= 1) s += ORDER_BOOST / rank;
  if (kind === "file" && plan.names.length) {
    const titled = words(r.title.slice(0, TITLE_PROBE));
    if (plan.names.some((n) => titled.includes(n))) s += NAMED_DOCUMENT_BOOST;
  }
  if (r.type === "email" && plan.people.length) {
    const from = String(r.metadata.from ?? "").toLowerCase();
    const others = `${r.metadata.to ?? ""} ${r.metadata.cc ?? ""}`.toLowerCase();
    for (const p of plan.people) {
      const parts = nameParts(p);
      const last = parts[parts.length - 1]!;
      if (from.includes(last)) s += SENDER_BOOST;
      else if (others.includes(last)) s += RECIPIENT_BOOST;
    }
  }
  const dated = kind === "file" ? datedAsAsked(plan, r, key) : undefined;
  if (dated !== undefined) s += dated ? DOCUMENT_DATE_BOOST : -OUT_OF_TIME;
  return s + amountSignal(plan, r, key);
}
