// A document opened by its id (D36): the record an answer cited, exactly as it was ranked, from
// the asking user's archive. One opener for the MCP `fetch` tool, `resources/read` of
// corpus://doc/<id>, GET /v1/documents/{id} and the page /d/<id>: each asks with the caller's own
// user, and an id that user was never given (another user's, a deleted user's, a made-up one)
// is "not found" alike, never "forbidden" (that would say it exists).
import type { Archive, ArchivedDocument } from "../archive/store";
import { ID_PREFIX } from "../ids";
import { parseOpenableId, sha256Hex } from "./ids";

/** The one answer to an id that does not open, on every wire. */
export const DOCUMENT_NOT_FOUND = "Document not found";

/** The page of a document under the public URL (CORPUS_OAUTH_RESOURCE_URL, D4): what a citation's url is. */
export const DOCUMENT_PAGE_PATH = "/d";
export const documentPageUrl = (publicUrl: string, id: string) => `${publicUrl}${DOCUMENT_PAGE_PATH}/${id}`;

/** The MCP resource of a document (2026-07-28 resource_link, resources/read). */
export const DOCUMENT_URI_PREFIX = "corpus://doc/";
export const documentUri = (id: string) => `${DOCUMENT_URI_PREFIX}${id}`;

/** The chunk a chunk id names, as it was returned: its exact text and the sha256 of it. */
export interface CitedPart {
  chunk_id: string;
  text: string;
  sha256: string;
  /** When it was returned (the archived query's time). */
  cited_at: string;
}

export interface OpenedDocument {
  /** The id asked for. */
  id: string;
  document: ArchivedDocument;
  /** When the id was a chunk's. */
  cited?: CitedPart;
}

/** The user's document or cited chunk `id`; undefined when it is not theirs to open. */
export async function openDocument(archive: Archive, user: string, id: string): Promise<OpenedDocument | undefined> {
  const parsed = parseOpenableId(id);
  if (!parsed) return undefined;
  if ("document" in parsed) {
    const document = await archive.document(user, parsed.document);
    return document ? { id, document } : undefined;
  }
  const found = await archive.citedChunk(user, parsed.chunk);
  // Chunks archived before documents were kept have no document to open.
  if (!found?.chunk.doc_id || !found.chunk.sha256) return undefined;
  const document = await archive.document(user, found.chunk.doc_id);
  if (!document) return undefined;
  return {
    id,
    document,
    cited: {
      chunk_id: `${ID_PREFIX.chunk}${found.chunk.chunk_id}`,
      text: found.chunk.content,
      sha256: found.chunk.sha256,
      cited_at: found.queried_at,
    },
  };
}

export type DocumentMetadata = Record<string, string | number | boolean | null>;

/**
 * What is said of a document besides its text (OpenAI's fetch `metadata`, REST's): the record's
 * own metadata, then where it comes from, its kind and dates, the connector, and the cited
 * chunk with its sha256 (these win over a record field of the same name).
 */
export function documentMetadata(opened: OpenedDocument): DocumentMetadata {
  const d = opened.document;
  return {
    ...d.metadata,
    source: d.source_url,
    connector: d.connector,
    connector_label: d.connector_label,
    kind: d.kind,
    type: d.type,
    path: d.path,
    date: d.date,
    document_id: d.doc_id,
    document_sha256: sha256Hex(d.text),
    ...(opened.cited
      ? {
          chunk_id: opened.cited.chunk_id,
          cited_text: opened.cited.text,
          chunk_sha256: opened.cited.sha256,
          cited_at: opened.cited.cited_at,
        }
      : {}),
  };
}

/** A document as fetch and GET /v1/documents/{id} return it (OpenAI's fetch shape: id, title, text, url, metadata). */
export function documentView(opened: OpenedDocument, publicUrl: string) {
  return {
    id: opened.id,
    title: opened.document.title,
    text: opened.document.text,
    url: documentPageUrl(publicUrl, opened.id),
    metadata: documentMetadata(opened),
  };
}

/** Words of a cited passage matched in the document, at most: a regular expression of a chunk's words stays small. */
const SPAN_WORDS = 400;

/**
 * Where the cited passage lies in the document's text: the chunker joined its words with
 * single spaces (retrieval/chunk.ts), so it is found with any white space between them.
 */
export function citedSpan(text: string, cited: string): { start: number; end: number } | undefined {
  const exact = text.indexOf(cited);
  if (exact >= 0) return { start: exact, end: exact + cited.length };
  const words = cited.split(/\s+/).filter(Boolean);
  if (words.length === 0 || words.length > SPAN_WORDS) return undefined;
  const m = new RegExp(words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("\\s+")).exec(text);
  return m ? { start: m.index, end: m.index + m[0].length } : undefined;
}

/** A path of a document's page, as a sign-in may lead back to (oauth/routes.ts). */
export const isDocumentPagePath = (path: string): boolean => {
  const prefix = `${DOCUMENT_PAGE_PATH}/`;
  return path.startsWith(prefix) && parseOpenableId(path.slice(prefix.length)) !== undefined;
};
