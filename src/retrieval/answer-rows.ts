// Shape C's answers over a table's rows (D32): the first row of a table sorted for the largest or
// smallest asked, and the rows meeting an amount condition. A table's row is one fact with its
// columns; the statements of answer.ts are read from documents and mail.
import { ORDER_RANK, ORDERED_BY } from "../connectors/types";
import type { AnswerSource } from "./answer";

/** The most rows an answer says. */
const MAX_ROWS = 4;

/** A row's cells on one line: "Column: value; Column: value". */
const rowText = (s: AnswerSource) =>
  s.text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("; ");

/**
 * A question for the largest or smallest of something ("which customer in Brazil spent the
 * most") over a table that sorted its matching rows by the column the question names: its first
 * row is the answer, said with that column (an operator maps an aggregate view for such questions).
 */
export function orderedRowAnswer(order: "desc" | "asc", sources: AnswerSource[]): string | undefined {
  const i = sources.findIndex((s) => s.metadata?.[ORDER_RANK] === 1);
  if (i < 0) return undefined;
  return `The ${order === "asc" ? "lowest" : "highest"} ${String(sources[i]!.metadata![ORDERED_BY])} among the rows that match: ${rowText(sources[i]!)}. [${i + 1}]`;
}

/**
 * A question for the records meeting an amount condition ("Which Lisbon invoices were over 10
 * USD?"), its best source a table's row: each cited row that meets it, in the ranking's order, with
 * its cells. Not one row's amount as a single fact: two Lisbon invoices are over 10.
 */
export function meetingRowsAnswer(sources: AnswerSource[]): string | undefined {
  if (sources[0]?.metadata?.table === undefined) return undefined;
  const rows = sources.flatMap((s, i) => (s.metadata?.table !== undefined && s.meetsAmount === true ? [`${rowText(s)}. [${i + 1}]`] : []));
  return rows.length ? rows.slice(0, MAX_ROWS).join(" ") : undefined;
}
