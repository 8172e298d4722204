// Chunks of records seen recently: cutting a long record costs more than ranking it. Keyed by
// owner, connector and record, and kept only while the text is the same (never shared by hash).
import type { SourceRecord } from "../connectors/types";
import type { WordPieceTokenizer } from "../embedding/tokenizer";
import { CHUNKED_CHARS, recordChunks } from "./chunk";

/**
 * Characters the chunk cache holds (records' text and their chunks, about twice the text): ~4 MB.
 * A count of 4,096 records grew the request thread's heap by tens of MB over the questions asked
 * while a mail folder embedded (records of 5-50 kB each); cutting a kept result again costs ~1 ms.
 */
export const CHUNK_CACHE_CHARS = 4_000_000;

interface CachedChunks {
  title: string;
  /** The part of the content its chunks are cut from (chunk.ts CHUNKED_CHARS), a copy of its own. */
  content: string;
  chunks: string[];
  chars: number;
}

export class ChunkCache {
  private readonly entries = new Map<string, CachedChunks>();
  private heldChars = 0;

  constructor(private readonly tokenizer: () => WordPieceTokenizer) {}

  chunksOf(owner: string, connectorId: string, record: SourceRecord): string[] {
    const key = `${owner}\u0000${connectorId}\u0000${record.id}`;
    const cached = this.entries.get(key);
    // Chunks come from the start of the content only: a 1 MB row is cut once, not on every question (D31).
    const chunked = record.content.slice(0, CHUNKED_CHARS);
    if (cached && cached.title === record.title && cached.content === chunked) return cached.chunks;
    const chunks = recordChunks(record, this.tokenizer());
    this.forget(key);
    const chars = record.title.length + chunked.length + chunks.reduce((n, c) => n + c.length, 0);
    if (chars > CHUNK_CACHE_CHARS / 4) return chunks;
    while (this.heldChars + chars > CHUNK_CACHE_CHARS) this.forget(this.entries.keys().next().value!);
    // A slice shares its whole string: the part kept is copied, so a long record is not held whole.
    const content = chunked.length < record.content.length ? Buffer.from(chunked, "utf16le").toString("utf16le") : chunked;
    this.entries.set(key, { title: record.title, content, chunks, chars });
    this.heldChars += chars;
    return chunks;
  }

  /** Characters held now. */
  get chars(): number {
    return this.heldChars;
  }

  private forget(key: string): void {
    const gone = this.entries.get(key);
    if (!gone) return;
    this.entries.delete(key);
    this.heldChars -= gone.chars;
  }
}
