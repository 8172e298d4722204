// Chunks of records seen recently: cutting a long record costs more than ranking it. Keyed by
// owner, connector and record, and kept only while the text is the same (its hash: never
// shared between records).
import type { SourceRecord } from "../connectors/types";
import type { WordPieceTokenizer } from "../embedding/tokenizer";
import { CHUNKED_CHARS, recordChunks } from "./chunk";
import { RecordMemo, recordKey } from "./record-memo";

/**
 * Characters the chunk cache holds (records' chunks, and a digest of each record): ~4 MB.
 * A count of 4,096 records grew the request thread's heap by tens of MB over the questions asked
 * while a mail folder embedded (records of 5-50 kB each); cutting a kept result again costs ~1 ms.
 */
export const CHUNK_CACHE_CHARS = 4_000_000;

/**
 * Cut once per version of the title and of the part of the content chunks are cut from (chunk.ts
 * CHUNKED_CHARS): keyed by that text itself, 20 rows of 1 MB overfilled the cache, and each
 * question cut every one of them again (issue 35). A bounded memo as the other per-record reads
 * (record-memo.ts), sized by the characters of the chunks.
 */
export class ChunkCache {
  private readonly memo = new RecordMemo<string[]>(CHUNK_CACHE_CHARS, (chunks) => chunks.reduce((n, c) => n + c.length, 0));

  constructor(private readonly tokenizer: () => WordPieceTokenizer) {}

  chunksOf(owner: string, connectorId: string, record: SourceRecord): string[] {
    // Chunks come from the start of the content only: a 1 MB row is cut once, not on every question (D31).
    const read = `${record.title}\u0000${record.content.slice(0, CHUNKED_CHARS)}`;
    return this.memo.get(recordKey(owner, connectorId, record.id), read, () => recordChunks(record, this.tokenizer()));
  }

  /** Characters held now. */
  get chars(): number {
    return this.memo.size;
  }
}
