// What the archive keeps of an answer: its question, the chunks that were returned (with the
// text their vectors are looked up by, their stable ids and the sha256 of their text), and the
// records they were cited from, as ranked (D36). One place for /v1/query and the MCP tools.

import type { SourceRecord } from "../connectors/types";
import { type CitationIds, citationIds, citedRecordId, citedText, sha256Hex } from "../documents/ids";
import { recordKind } from "../documents/kinds";
import { embeddingText } from "../retrieval/chunk";
import { RecordMemo, recordKey } from "../retrieval/record-memo";
import type { RankedChunk } from "../retrieval/search";
import type { Awaitable } from "../store/shared";
import type { Archive, ArchivedChunk, ArchivedDocument, ArchiveTransaction } from "./store";

/** A returned chunk with its ids (documents/ids.ts). */
export interface CitedRanked extends CitationIds {
  c: RankedChunk;
}

/** Records' sha256 remembered, at most: 4,096 of them (64 hex digits each). */
const REMEMBERED_DIGESTS = 4096;

/**
 * The sha256 of each cited record's whole text (what its document id is made of), once per
 * version (a wyhash of the text tells it is the same, as the other per-record reads,
 * record-memo.ts; a frozen record met again is not hashed again): a question citing 100 records of 4 M characters hashed 400 MB on the serving
 * thread (~30 ms each), at every question. Kept per asking user, operator records too (D25: no
 * user's question is told by another's being faster).
 */
const documentDigests = new RecordMemo<string>(REMEMBERED_DIGESTS * 64, (digest) => digest.length, sha256Hex);

/**
 * A frozen record's cited chunks' ids (a local index's, opened once per version: documents.ts), by
 * the citation key object the user's keys keep (a key made anew is another object: nothing is
 * given under an old one) and by chunk text and connector: a sha256 and three HMACs per returned
 * chunk on every question were ~2% of the serving thread's CPU (issue 36). Held while the record
 * and the key are: as bounded as the opened records are.
 */
const citedIds = new WeakMap<Buffer, WeakMap<SourceRecord, Map<string, { connectorId: string; ids: CitationIds }>>>();
/** Chunks whose ids were made (not found in citedIds) so far (tests count the work). */
export const citationsMade = { count: 0 };

/** The ids of `chunks` under `user`'s citation key. */
export function citeChunks(archive: Archive, user: string, chunks: RankedChunk[]): CitedRanked[] {
  if (chunks.length === 0) return [];
  const key = archive.citationKey(user);
  let byRecord = citedIds.get(key);
  if (!byRecord) citedIds.set(key, (byRecord = new WeakMap()));
  return chunks.map((c) => {
    const record = c.record;
    const frozen = Object.isFrozen(record) && Object.isFrozen(record.metadata);
    // By the chunk's own text (no copy of it made): a record's chunks are its text's.
    let byText = frozen ? byRecord.get(record) : undefined;
    const known = byText?.get(c.text);
    if (known?.connectorId === c.connectorId) return { c, ...known.ids };
    const ids = idsOf(key, user, c);
    if (frozen) {
      if (!byText) byRecord.set(record, (byText = new Map()));
      byText.set(c.text, { connectorId: c.connectorId, ids });
    }
    return { c, ...ids };
  });
}

function idsOf(key: Buffer, user: string, c: RankedChunk): CitationIds {
  citationsMade.count++;
  const documentSha256 = documentDigests.getOfRecord(recordKey(user, c.connectorId, c.record.id), c.record, citedText);
  return citationIds(key, {
    connectorId: c.connectorId,
    recordId: citedRecordId(c.record, documentSha256),
    title: c.record.title,
    content: c.record.content,
    chunkText: c.text,
    documentSha256,
  });
}

export function archivedChunk({ c, chunkId, documentId, sha256 }: CitedRanked): ArchivedChunk {
  return {
    chunk_id: chunkId,
    connector: c.connectorId,
    title: c.record.title,
    content: c.text,
    source_url: c.record.source_url,
    type: c.record.type,
    path: c.record.path,
    ...(c.record.metadata.message_id ? { message_id: String(c.record.metadata.message_id) } : {}),
    date: c.record.date,
    doc_id: documentId,
    sha256,
  };
}

export function archivedDocument({ c, documentId }: CitedRanked): ArchivedDocument {
  return {
    doc_id: documentId,
    connector: c.connectorId,
    connector_label: c.connectorLabel,
    title: c.record.title,
    text: c.record.content,
    source_url: c.record.source_url,
    type: c.record.type,
    kind: recordKind(c.record),
    path: c.record.path,
    date: c.record.date,
    metadata: c.record.metadata,
  };
}

/** D12: called, and awaited, before the response is sent. */
export function archiveAnswer(
  archive: Archive,
  user: string,
  queryId: string,
  question: string,
  chunks: CitedRanked[],
  into?: ArchiveTransaction,
): Awaitable<void> {
  return archive.record(
    user,
    queryId,
    question,
    chunks.map((cited) => ({
      chunk: archivedChunk(cited),
      embedText: embeddingText(cited.c.record.title, cited.c.text),
      owner: cited.c.owner,
      document: archivedDocument(cited),
      recordKey: cited.recordKey,
    })),
    into,
  );
}
