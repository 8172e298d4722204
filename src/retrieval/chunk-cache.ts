// Chunks of records seen recently: cutting a long record costs more than ranking it. Keyed by
// owner, connector and record, and kept only while the text is the same (its digest: never
// shared between records by hash).
import type { SourceRecord } from "../connectors/types";
import type { WordPieceTokenizer } from "../embedding/tokenizer";
import { CHUNKED_CHARS, recordChunks } from "./chunk";

/**
 * Characters the chunk cache holds (records' chunks, and a digest of each record): ~4 MB.
 * A count of 4,096 records grew the request thread's heap by tens of MB over the questions asked
 * while a mail folder embedded (records of 5-50 kB each); cutting a kept result again costs ~1 ms.
 */
export const CHUNK_CACHE_CHARS = 4_000_000;

interface CachedChunks {
  /**
   * The sha256 of the title and of the part of the content chunks are cut from (chunk.ts
   * CHUNKED_CHARS): holding that text itself, 20 rows of 1 MB overfilled the cache, and each
   * question cut every one of them again (issue 35).
   */
  digest: string;
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
    const digest = new Bun.CryptoHasher("sha256")
      .update(record.title)
      .update("\u0000")
      .update(record.content.slice(0, CHUNKED_CHARS))
      .digest("hex");
    if (cached && cached.digest === digest) return cached.chunks;
    const chunks = recordChunks(record, this.tokenizer());
    this.forget(key);
    const chars = digest.length + chunks.reduce((n, c) => n + c.length, 0);
    if (chars > CHUNK_CACHE_CHARS / 4) return chunks;
    while (this.heldChars + chars > CHUNK_CACHE_CHARS) this.forget(this.entries.keys().next().value!);
    this.entries.set(key, { digest, chunks, chars });
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
