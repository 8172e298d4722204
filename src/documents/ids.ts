// The ids of documents and of the chunks cited from them (D36): the same across re-indexing of
// unchanged content, and revealing nothing. Each is a keyed hash (HMAC-SHA256, a key derived
// from the asking user's data key) of the connector's id, the record's id within it (a path, a
// Message-ID, a table's key) and the sha256 of what was ranked: the same record read again gives
// the same id (a Maildir message read or flagged since too: citedRecordId); a changed one a new
// id, while the archive keeps the old (archive/store.ts). No
// path or title is in an id, and two users never share one (another's id is simply unknown).
import { createHash, createHmac } from "node:crypto";
import { sheetRowCited } from "../connectors/files/sheets";
import type { SourceRecord } from "../connectors/types";
import { ID_PREFIX } from "../ids";
import { recordKind } from "./kinds";

/** What the citation key is derived for, from the user's data key (UserKeys.derive). */
export const CITATION_KEY_PURPOSE = "citation-ids";

/** Bytes of HMAC kept in an id: 128 bits, written as 32 hex digits. */
const ID_BYTES = 16;

/** The sha256 of a text (UTF-8), in hex: what a citation carries of the words it quotes. */
export const sha256Hex = (text: string): string => createHash("sha256").update(text, "utf8").digest("hex");

const keyed = (key: Buffer, ...parts: string[]) =>
  createHmac("sha256", key).update(parts.join("\u0000"), "utf8").digest().subarray(0, ID_BYTES).toString("hex");

export interface CitationIds {
  /** `doc_` and 32 hex digits. */
  documentId: string;
  /** 32 hex digits (REST writes it after `chnk_` or `chk_`, the MCP tools after `chnk_`). */
  chunkId: string;
  /** The sha256 of the chunk's text. */
  sha256: string;
  /** The record's own key, the same for all its versions: the archive keeps its newest few (archive/store.ts). */
  recordKey: string;
}

/**
 * A Maildir message's place as it changes when a mail client reads or flags it: moved from new/
 * to cur/, its flags written after ":2," in its name ("!2," or ";2," where ":" cannot be in a
 * file name). Maildir's own rules (https://cr.yp.to/proto/maildir.html): the unique name before
 * them stays for the message's life.
 */
const MAILDIR_PLACE = /^((?:.*\/)?)(?:cur|new)\/([^/:!;]+)(?:[:!;][12],[^/]*)?$/;

/** A books transaction's line in its file (records.ts: `<file>#L<line>`, `.<n>` for the n-th on one line). */
const BOOK_LINE = /#L\d+(?:\.\d+)?$/;

/**
 * The record's id as its citation ids take it (D36: unchanged content, the same id): a mail's
 * Maildir place without its new/ or cur/ and its flags, so that a message read or flagged since
 * keeps its ids; a books transaction's file and the sha256 of its text (`documentSha256`, of
 * citedText) instead of its line, so that one written above it in the journal does not
 * change its ids (the same transaction twice in a file is then one document); a spreadsheet
 * row's file and sheet, the sha256 of its text and its copy number (sheetRowCited) instead of
 * its row; every other record's own id.
 */
export function citedRecordId(record: Pick<SourceRecord, "id" | "type" | "title" | "metadata">, documentSha256: string): string {
  if (recordKind(record) === "books" && BOOK_LINE.test(record.id)) return `${record.id.replace(BOOK_LINE, "")}#${documentSha256}`;
  const row = sheetRowCited(record);
  if (row) return `${row.table}#${documentSha256}${row.copy > 1 ? `.${row.copy}` : ""}`;
  if (record.type !== "email") return record.id;
  const m = MAILDIR_PLACE.exec(record.id);
  return m ? `${m[1]}${m[2]}` : record.id;
}

/** What a document's id hashes of its record: its title and its whole content. */
export const documentText = (title: string, content: string) => `${title}\u0000${content}`;

/** What a record's document id hashes (documentText): a spreadsheet row's title without its row number (sheetRowCited). */
export function citedText(record: Pick<SourceRecord, "id" | "type" | "title" | "content" | "metadata">): string {
  return documentText(sheetRowCited(record)?.title ?? record.title, record.content);
}

/**
 * The ids of a chunk of a record and of the record, under the asking user's citation key;
 * `documentSha256`, when given, is the sha256 of documentText (remembered by the caller: a
 * record's whole text is up to 4 M characters, ~30 ms to hash).
 */
export function citationIds(
  key: Buffer,
  cited: { connectorId: string; recordId: string; title: string; content: string; chunkText: string; documentSha256?: string },
): CitationIds {
  const whole = cited.documentSha256 ?? sha256Hex(documentText(cited.title, cited.content));
  const documentId = `${ID_PREFIX.document}${keyed(key, "document", cited.connectorId, cited.recordId, whole)}`;
  const sha256 = sha256Hex(cited.chunkText);
  return {
    documentId,
    chunkId: keyed(key, "chunk", documentId, sha256),
    sha256,
    recordKey: keyed(key, "record", cited.connectorId, cited.recordId),
  };
}

/** An id as the tools and routes take it: a document's, or a chunk's (with or without its prefix). */
export type OpenableId = { document: string } | { chunk: string };

const DOCUMENT_ID = /^doc_[0-9a-f]{32}$/;
const CHUNK_ID = /^(?:chnk_|chk_)?([0-9a-f]{32})$/;

/** The id asked for, or undefined for anything that cannot be one (then "not found", as an unknown id). */
export function parseOpenableId(id: string): OpenableId | undefined {
  if (DOCUMENT_ID.test(id)) return { document: id };
  const chunk = CHUNK_ID.exec(id);
  return chunk ? { chunk: chunk[1]! } : undefined;
}

/** Longest id a caller may send (a prefix and 32 hex digits): the schemas' bound. */
export const OPENABLE_ID_MAX = 37;
