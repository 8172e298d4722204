// What the archive keeps of an answer: its question and the chunks that were returned,
// with the text their vectors are looked up by. One place for /v1/query and corpus_search.

import { embeddingText } from "../retrieval/chunk";
import type { RankedChunk } from "../retrieval/search";
import type { Archive, ArchivedChunk } from "./store";

export function archivedChunk(c: RankedChunk, chunkId: string): ArchivedChunk {
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
  };
}

/** D12: called before the response is sent. */
export function archiveAnswer(
  archive: Archive,
  user: string,
  queryId: string,
  question: string,
  chunks: Array<{ c: RankedChunk; chunkId: string }>,
): void {
  archive.record(
    user,
    queryId,
    question,
    chunks.map(({ c, chunkId }) => ({
      chunk: archivedChunk(c, chunkId),
      embedText: embeddingText(c.record.title, c.text),
      owner: c.owner,
    })),
  );
}
