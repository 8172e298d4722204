// A local index for sources read from disk (mail folders, document folders): each record's
// words blinded (keyed hashes, index-terms.ts) in a contentless FTS5 table (BM25 and phrases,
// no copy of the text), the record itself sealed with its owner's key and bound to its row,
// chunk vectors rotated by the owner's secret rotation (D25). Entries are keyed by a keyed hash
// of the source path, with size and mtime, so a rescan re-reads only what changed; the source
// files are only ever read. Removed terms are purged from the index (secure-delete, merges).
//   migrations.ts  the tables          documents.ts  records, sealed    vectors.ts  chunks owed and their vectors
//   rank.ts        words and meaning   sync.ts       a scan brought in  maintenance.ts  whole indexes
//   skipped.ts     sources left out past a bound or their reading budget, until they change
//   candidates.ts  a question's SQL    searcher.ts   which runs in the search worker (search-worker.ts), off the serving thread
// That is the embedded store (EmbeddedIndex, below); the shared one (D33) is shared-index.ts over
// store-postgres.ts, behind the same LocalIndex interface, chosen once at start (IndexRoom).
import type { Database } from "bun:sqlite";
import type { Awaitable } from "../../store/shared";
import type { IndexProgress, RetrievalRequest, SearchHit, SourceRecord } from "../types";
import type { Chunker, IndexContext, IndexKeys } from "./context";
import {
  countRecords,
  knownSources,
  type PreparedRecords,
  prepareRecords,
  putRecords,
  reblindStale,
  removeSource,
  removeUnfinished,
} from "./documents";
import { dropIndex, forgetChunkVectors, indexOwesWork, owedChunks, purgeTerms } from "./maintenance";
import { rank, rankHere, search } from "./rank";
import { countSkipped, forgetSkipped, type SkippedNote, skippedNotes, skippedSources, skipSource } from "./skipped";
import type { ScanEntry } from "./sync";
import { embeddingProgress, type OwedChunk, pendingChunks, rotatedInTurns, setVectors } from "./vectors";

export { type Chunker, type IndexKeys, indexKeysFor } from "./context";
export { dropIndex, forgetChunkVectors, indexOwesWork, owedChunks, purgeTerms } from "./maintenance";

import { partitionIndexMigrations } from "../../vectors/partition-index";
import { indexMigrations as localIndexMigrations } from "./migrations";

/** The local index's tables, and those of its vectors' indexes (src/vectors/partition-index.ts). */
export const indexMigrations = [...localIndexMigrations, ...partitionIndexMigrations];
export { closeSearches } from "./searcher";
export type { SkippedNote } from "./skipped";
export { REWRITE_CHARS, rewriteStaleWords, type ScanEntry, type SyncProgress, scanEntry, syncIndex } from "./sync";

/** Records a store's prepare made ready for its put: how many are indexed by their words in part (RecordWords, D31). */
export interface Prepared {
  cutWords?: number;
}

/**
 * One connector's index, as its connector uses it (D33): its methods answer an Awaitable, at
 * once from the embedded store (EmbeddedIndex, the data folder's SQLite, searched in the search
 * worker), later from the shared one (SharedIndex, PostgreSQL: the serving thread never waits on
 * the network). `prepare`'s records go to the same index's `put`.
 */
export interface LocalIndex {
  /** In the shared database (answers later), or the embedded one (at once). */
  readonly shared: boolean;
  /** The key a source is stored under: a keyed hash, so no path or file name is kept. */
  sourceKey(source: string): string;
  /** Known sources by their keys (sourceKey), with the size and mtime last read. */
  known(): Awaitable<Map<string, { size: number; mtime: number }>>;
  /** `records` made ready for put, the event loop turning whenever its budget is spent (D31); `chunks` as the reading worker cut them. */
  prepare(records: SourceRecord[], chunks?: string[][]): Promise<Prepared>;
  /** Replaces every record of `entry.source` with `records` (`prepared` by prepare); whether they were switched in (not once `stopped` said so). */
  put(entry: ScanEntry, records: SourceRecord[], prepared?: Prepared, stopped?: () => boolean): Promise<boolean>;
  /** Removes what a put or a removal stopped or killed on the way left hidden; false if stopped meanwhile. */
  removeUnfinished(stopped?: () => boolean): Promise<boolean>;
  /** After records were removed or replaced: their terms leave the index's segments. */
  purgeRemoved(): void;
  /** Records whose words are of an older format written again, up to `records` or `chars` of text; how many. */
  reblindStale(records: number, chars: number): Awaitable<number>;
  /** Sources skipped (past a bound or their reading budget) by their keys, with the size and mtime they were skipped at. */
  skipped(): Awaitable<Map<string, { size: number; mtime: number }>>;
  /** `entry` (of key `source`) is not read again until it changes; the status names it with `reason`. */
  skip(source: string, entry: ScanEntry, reason: string): Awaitable<void>;
  /** A skipped source (by its key) is read again at the next scan. */
  unskip(source: string): Awaitable<void>;
  /** How many sources are skipped, and the first `limit` of them named. */
  skippedNotes(limit: number): Awaitable<{ count: number; named: SkippedNote[] }>;
  /** Removes every record of a source, by its key (sourceKey); false if stopped meanwhile. */
  removeSource(source: string, stopped?: () => boolean): Promise<boolean>;
  /** Up to `limit` chunks still owed their vector, each with its text to embed. */
  pendingChunks(limit: number): Awaitable<Array<OwedChunk & { text: string }>>;
  /** Their vectors stored, rotated first with turns of the event loop between (D31). */
  storeVectors(chunks: OwedChunk[], vectors: Float32Array[]): Promise<void>;
  /** The vectors' rotation made ready in turns, before storeVectors needs it (D31). */
  prepareRotation(): Promise<void>;
  /** Chunks in all and those with their vector. */
  progress(): Awaitable<IndexProgress>;
  /** Candidates with scores, off the serving thread (the search worker, or the shared database). */
  rank(request: RetrievalRequest): Promise<SearchHit[]>;
  /** Records matching the request's words, best first (newest first without words). */
  search(request: RetrievalRequest): Awaitable<SourceRecord[]>;
  /** Records in the index. */
  count(): Awaitable<number>;
}

/** One connector's index in the embedded database (the data folder's SQLite). */
export class EmbeddedIndex implements LocalIndex {
  readonly shared = false;
  private readonly ctx: IndexContext;

  constructor(
    db: Database,
    /** The connector's key in the index, e.g. "alice/mail". */
    readonly owner: string,
    keys: IndexKeys,
    chunker: Chunker = () => [],
  ) {
    this.ctx = { db, owner, keys, chunker };
  }

  /** The key a source is stored under: a keyed hash, so no path or file name is kept. */
  sourceKey(source: string): string {
    return this.ctx.keys.blinder.source(source);
  }

  /** Known sources by their keys (sourceKey), with the size and mtime last read. */
  known(): Map<string, { size: number; mtime: number }> {
    return knownSources(this.ctx);
  }

  /** `records` made ready for put, the event loop turning whenever its budget is spent (prepareRecords, D31); `chunks` as the reading worker cut them. */
  prepare(records: SourceRecord[], chunks?: string[][]): Promise<PreparedRecords> {
    return prepareRecords(this.ctx, records, undefined, chunks);
  }

  /**
   * Replaces every record of `entry.source` with `records`, staged a bounded transaction at a time
   * and switched in at once (putRecords, D31); `prepared` are they from prepare(), else prepared
   * here. Whether they were switched in (not once `stopped` said so).
   */
  put(entry: ScanEntry, records: SourceRecord[], prepared?: PreparedRecords, stopped?: () => boolean): Promise<boolean> {
    return putRecords(this.ctx, entry, records, prepared, stopped);
  }

  /** Removes what a put or a removal stopped or killed on the way left hidden; false if stopped meanwhile. */
  removeUnfinished(stopped?: () => boolean): Promise<boolean> {
    return removeUnfinished(this.ctx, stopped);
  }

  /** After records were removed or replaced: their terms leave the index's segments. */
  purgeRemoved(): void {
    purgeTerms(this.ctx.db, false);
  }

  /** Records whose words are of an older format written again, up to `records` or `chars` of text; how many (documents.ts). */
  reblindStale(records: number, chars: number): number {
    return reblindStale(this.ctx, records, chars);
  }

  /** Sources skipped (past a bound or their reading budget) by their keys, with the size and mtime they were skipped at. */
  skipped(): Map<string, { size: number; mtime: number }> {
    return skippedSources(this.ctx);
  }

  /** `entry` (of key `source`) is not read again until it changes; the status names it with `reason`. */
  skip(source: string, entry: ScanEntry, reason: string): void {
    skipSource(this.ctx, source, entry, reason);
  }

  /** A skipped source (by its key) is read again at the next scan. */
  unskip(source: string): void {
    forgetSkipped(this.ctx, source);
  }

  /** How many sources are skipped, and the first `limit` of them named. */
  skippedNotes(limit: number): { count: number; named: SkippedNote[] } {
    return { count: countSkipped(this.ctx), named: skippedNotes(this.ctx, limit) };
  }

  /** Removes every record of a source, by its key (sourceKey): hidden at once, removed a bounded transaction at a time; false if stopped meanwhile. */
  removeSource(source: string, stopped?: () => boolean): Promise<boolean> {
    return removeSource(this.ctx, source, stopped);
  }

  pendingChunks(limit: number): Array<OwedChunk & { text: string }> {
    return pendingChunks(this.ctx, limit);
  }

  setVectors(chunks: OwedChunk[], vectors: Float32Array[]): void {
    setVectors(this.ctx, chunks, vectors);
  }

  /** The same, the vectors rotated first with turns of the event loop between (rotatedInTurns, D31): the transaction only writes. */
  async storeVectors(chunks: OwedChunk[], vectors: Float32Array[]): Promise<void> {
    setVectors(this.ctx, chunks, vectors, await rotatedInTurns(this.ctx, vectors));
  }

  /** The vectors' rotation made ready in turns, before setVectors needs it (D31). */
  async prepareRotation(): Promise<void> {
    await this.ctx.keys.prepareRotation();
  }

  progress(): IndexProgress {
    return embeddingProgress(this.ctx);
  }

  /** Candidates with scores: their SQL in the search worker, off the serving thread (rank.ts). */
  rank(request: RetrievalRequest): Promise<SearchHit[]> {
    return rank(this.ctx, request);
  }

  /** The same found on this thread, in this turn (rank.ts rankHere). */
  rankHere(request: RetrievalRequest): SearchHit[] {
    return rankHere(this.ctx, request);
  }

  search(request: RetrievalRequest): SourceRecord[] {
    return search(this.ctx, request);
  }

  count(): number {
    return countRecords(this.ctx);
  }
}

/**
 * The room of every connector's index (D33): what the registry, the owed work and a user's
 * deletion ask of all of them at once. Indexes are keyed as the registry keys its connectors
 * (`<owner>/<id>`, e.g. "alice/mail").
 */
export interface IndexRoom {
  /** Where the index lives: the embedded database, or the shared one. */
  readonly shared: boolean;
  /** The index of connector `key`, with its owner's keys. */
  open(key: string, keys: IndexKeys, chunker?: Chunker): LocalIndex;
  /** Removes a whole connector's index; how many records. Embedded: inside the caller's transaction. */
  drop(key: string): Awaitable<number>;
  /** Whether connector `key`'s index still owes work (D29): chunks without a vector, or no record at all. */
  owesWork(key: string): Awaitable<boolean>;
  /** Chunks of every index still waiting for their vector (D29). */
  owedChunks(): Awaitable<number>;
  /** After indexes were dropped: their terms leave the word index for good. */
  purgeTerms(): void;
  /** Every chunk vector forgotten (another model made them); the chunks stay, owed. How many. */
  forgetVectors(): Awaitable<number>;
  /** Erases every index of `user`'s connectors (D13); how many records. Embedded: inside the caller's transaction. */
  forget(user: string): Awaitable<number>;
  /** The index rows of `user`'s connectors (a deletion checks none is left). */
  rowsOf(user: string): Awaitable<number>;
}

/** Every index in the embedded database. */
export class EmbeddedIndexes implements IndexRoom {
  readonly shared = false;
  constructor(private readonly db: Database) {}

  open(key: string, keys: IndexKeys, chunker?: Chunker): EmbeddedIndex {
    return new EmbeddedIndex(this.db, key, keys, chunker);
  }

  drop(key: string): number {
    return dropIndex(this.db, key);
  }

  owesWork(key: string): boolean {
    return indexOwesWork(this.db, key);
  }

  owedChunks(): number {
    return owedChunks(this.db);
  }

  purgeTerms(): void {
    purgeTerms(this.db, true);
  }

  forgetVectors(): number {
    return forgetChunkVectors(this.db);
  }

  forget(user: string): number {
    const keys = this.db
      .query<{ owner: string }, [string]>(
        `SELECT owner FROM connector_docs WHERE substr(owner, 1, length(?1) + 1) = ?1 || '/'
         UNION SELECT owner FROM connector_skipped WHERE substr(owner, 1, length(?1) + 1) = ?1 || '/'`,
      )
      .all(user);
    return keys.reduce((n, k) => n + dropIndex(this.db, k.owner), 0);
  }

  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        `SELECT (SELECT count(*) FROM connector_docs WHERE substr(owner, 1, length(?1) + 1) = ?1 || '/')
              + (SELECT count(*) FROM connector_skipped WHERE substr(owner, 1, length(?1) + 1) = ?1 || '/') AS n`,
      )
      .get(user)!.n;
  }
}
