// The kinds of record a user tells apart (D36): mail, documents, rows of a table, and
// transactions of accounting books (D34). What a document's metadata says it is, and what the
// tools' `kinds` filter names.
import type { SourceRecord } from "../connectors/types";

export const RECORD_KINDS = ["mail", "document", "row", "books"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** A record's kind: mail by its type (D8), a books transaction or a table's row by what its connector wrote in its metadata. */
export function recordKind(r: Pick<SourceRecord, "type" | "metadata">): RecordKind {
  if (r.type === "email") return "mail";
  if (typeof r.metadata.book_format === "string") return "books";
  if (r.metadata.table !== undefined) return "row";
  return "document";
}
