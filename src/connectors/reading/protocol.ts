// Messages between the thread that serves requests (reader.ts) and the reading worker
// (worker.ts), which turns a source's bytes into text or records (D31). One job at a time.
import type { BookPlace } from "../books/records";
import type { DocumentType, Extracted } from "../files/extract";
import type { SheetPlace } from "../files/sheets";
import type { MailPlace } from "../maildir/message";
import type { SourceRecord } from "../types";

// Read for an index, a job also asks for its records' chunks (`chunk`; a document's, `chunkTitle`):
// cut here, each record's within its own budget, so that the serving thread never cuts (D31).
export type ToReader =
  /** A document's text (files/extract.ts); with `chunkTitle` (its name), its record's chunks (files/extract.ts fileTexts). */
  | { type: "file"; seq: number; bytes: Uint8Array; fileType: DocumentType; chunkTitle?: string }
  /** A spreadsheet's records (files/sheets.ts): one per row. */
  | { type: "sheet"; seq: number; bytes: Uint8Array; place: SheetPlace; chunk?: boolean }
  /** A mail file's records (maildir/message.ts): one message, or each of an mbox's. */
  | { type: "mail"; seq: number; raw: Uint8Array; place: MailPlace; chunk?: boolean }
  /** A journal file's records (books/records.ts): one per transaction. */
  | { type: "books"; seq: number; bytes: Uint8Array; place: BookPlace; chunk?: boolean }
  /** Records read elsewhere (a SQL source's rows, embedded ahead) cut into their chunks. */
  | { type: "chunks"; seq: number; records: Array<{ title: string; content: string }> };

export type FromReader =
  /** Started: `thread` is its thread's id, whose CPU time the reader watches (0 when unknown). */
  | { type: "ready"; thread: number }
  | { type: "file"; seq: number; extracted: Extracted; chunks?: string[] }
  | { type: "mail"; seq: number; records: SourceRecord[]; chunks?: string[][] }
  | { type: "books"; seq: number; records: SourceRecord[]; chunks?: string[][] }
  | { type: "sheet"; seq: number; records: SourceRecord[]; chunks?: string[][] }
  | { type: "chunks"; seq: number; chunks: string[][] }
  /** One record of the job is read: the next one has a budget of its own. */
  | { type: "record"; seq: number }
  /** Left out past a bound (files/limits.ts), with the reason. */
  | { type: "skipped"; seq: number; reason: string; again?: boolean }
  /** Could not be read (broken data); the message is the parser's. */
  | { type: "failed"; seq: number; message: string };
