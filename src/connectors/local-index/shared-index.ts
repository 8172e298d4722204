// A connector's index in the shared PostgreSQL (D33): the LocalIndex the folder connectors use,
// over PostgresIndexRows (store-postgres.ts), so that a folder indexed through one node is
// searched through every other. This side holds the owner's keys: words are blinded, records and
// chunks sealed, vectors rotated and records opened here, on the node; PostgreSQL receives and
// returns only what the embedded index keeps at rest (D25). Every method answers a promise: the
// serving thread never waits on the network. Where the embedded index has work of its own and
// PostgreSQL none, it is said below (no hidden rows to clear: a put is one transaction; no FTS5
// segments to merge: the terms are rows, their space VACUUM's; no HNSW file beside the database:
// pgvector keeps its own HNSW index).
import type postgres from "postgres";
import { splitPartition } from "../../vectors/sqlite";
import { Turns } from "../turns";
import type { IndexProgress } from "../types";
import { needles, type RetrievalRequest, type SearchHit, type SourceRecord } from "../types";
import type { Chunker, IndexKeys } from "./context";
import { blindedWords, blindRecords, chunkRow, openRecord, openRecordsAt, sealedTo } from "./documents";
import type { IndexRoom, LocalIndex, Prepared } from "./index";
import { askedOf, quoted } from "./rank";
import { type SkippedNote, sealedAt } from "./skipped";
import type { IndexedRecord, PostgresIndexRows } from "./store-postgres";
import type { ScanEntry } from "./sync";
import { type OwedChunk, rotatedInTurns } from "./vectors";

/** Records made ready by SharedIndex.prepare: numbered from the shared sequence and sealed to their numbers. */
interface SharedPrepared extends Prepared {
  records: IndexedRecord[];
}

/** Where the opened-records memo keeps the shared index's records (documents.ts openRecordsAt): apart from any embedded database's. */
const MEMO_AT = "shared";

export class SharedIndex implements LocalIndex {
  readonly shared = true;
  private readonly owner: string;
  private readonly connector: string;
  /** The owner's keys as the index's helpers take them (documents.ts, vectors.ts, rank.ts). */
  private readonly ctx: { keys: IndexKeys; chunker: Chunker };

  constructor(
    private readonly rows: PostgresIndexRows,
    /** The connector's key, e.g. "alice/mail". */
    private readonly key: string,
    private readonly keys: IndexKeys,
    chunker: Chunker = () => [],
  ) {
    ({ owner: this.owner, connector: this.connector } = splitPartition(key));
    this.ctx = { keys, chunker };
  }

  sourceKey(source: string): string {
    return this.keys.blinder.source(source);
  }

  known(): Promise<Map<string, { size: number; mtime: number }>> {
    return this.rows.known(this.owner, this.connector);
  }

  /**
   * Words blinded and records sealed with turns of the event loop between (D31), each sealed to
   * a number taken from the shared sequence (never given again, on any node: what is sealed to it
   * is bound to its row wherever it is put).
   */
  async prepare(records: SourceRecord[], chunks?: string[][]): Promise<SharedPrepared> {
    const turns = new Turns();
    const { words, cutWords } = await blindRecords(this.ctx, records, turns, chunks);
    const docs = await this.rows.takeDocs(records.length);
    const out: IndexedRecord[] = [];
    for (const [i, r] of records.entries()) {
      const doc = docs[i]!;
      const w = words[i]!;
      out.push({ doc, date: r.date, title: w.title, content: w.content, ...sealedTo(this.keys, r, w.chunks, doc) });
      await turns.maybe();
    }
    return { records: out, cutWords };
  }

  /** One transaction: every node sees the source's old records or its new ones, never half. */
  async put(entry: ScanEntry, records: SourceRecord[], prepared?: SharedPrepared, stopped: () => boolean = () => false): Promise<boolean> {
    const ready = prepared ?? (await this.prepare(records));
    if (stopped()) return false;
    await this.rows.put(
      this.owner,
      this.connector,
      { source: this.sourceKey(entry.source), size: entry.size, mtime: entry.mtime },
      ready.records,
    );
    return true;
  }

  /** Nothing is ever left hidden: a put or a removal is one transaction, committed whole or not at all. */
  async removeUnfinished(stopped: () => boolean = () => false): Promise<boolean> {
    return !stopped();
  }

  /** Nothing to do: the terms are rows, whose space PostgreSQL's VACUUM takes back (no FTS5 segments to merge). */
  purgeRemoved(): void {}

  /** Records whose words are of an older format written again from the sealed record (documents.ts reblindStale). */
  async reblindStale(records: number, chars: number): Promise<number> {
    const stale = await this.rows.staleRecords(this.owner, this.connector, records);
    const rewritten: Array<{ doc: number; words?: { title: string; content: string } }> = [];
    let blinded = 0;
    for (const { doc, sealed } of stale) {
      if (rewritten.length > 0 && blinded >= chars) break;
      const r = openRecord(this.ctx, doc, sealed);
      rewritten.push({ doc, words: blindedWords(this.keys, r) });
      blinded += r.title.length + r.content.length;
    }
    await this.rows.rewriteWords(this.owner, this.connector, rewritten);
    return rewritten.length;
  }

  skipped(): Promise<Map<string, { size: number; mtime: number }>> {
    return this.rows.skipped(this.owner, this.connector);
  }

  skip(source: string, entry: ScanEntry, reason: string): Promise<void> {
    const note = this.keys.seal(JSON.stringify({ name: entry.source, reason } satisfies SkippedNote), sealedAt(source));
    return this.rows.skip(this.owner, this.connector, source, entry, note);
  }

  unskip(source: string): Promise<void> {
    return this.rows.unskip(this.owner, this.connector, source);
  }

  async skippedNotes(limit: number): Promise<{ count: number; named: SkippedNote[] }> {
    const { count, named } = await this.rows.skippedNotes(this.owner, this.connector, limit);
    return { count, named: named.map((n) => JSON.parse(this.keys.open(n.note, sealedAt(n.source))) as SkippedNote) };
  }

  async removeSource(source: string, stopped: () => boolean = () => false): Promise<boolean> {
    if (stopped()) return false;
    await this.rows.removeSource(this.owner, this.connector, source);
    return true;
  }

  /**
   * Chunks owed their vector with their texts opened (sealed as the reading worker cut them).
   * `sealed` is the chunk's sealed text: record numbers are never given again, so the store
   * checks a chunk by its number, record and place (PostgresIndexRows.setVectors).
   */
  async pendingChunks(limit: number): Promise<Array<OwedChunk & { text: string }>> {
    const owed = await this.rows.owedChunks(this.owner, this.connector, limit);
    return owed.map((c) => ({
      chunk: c.chunk,
      doc: c.doc,
      ord: c.ord,
      sealed: c.sealed,
      text: this.keys.open(c.sealed, chunkRow(c.doc, c.ord)),
    }));
  }

  async storeVectors(chunks: OwedChunk[], vectors: Float32Array[]): Promise<void> {
    const rotated = await rotatedInTurns(this.ctx, vectors);
    await this.rows.setVectors(
      this.owner,
      this.connector,
      chunks.map((c, i) => ({ chunk: c.chunk, doc: c.doc, ord: c.ord, vector: rotated[i]! })),
    );
  }

  async prepareRotation(): Promise<void> {
    await this.keys.prepareRotation();
  }

  progress(): Promise<IndexProgress> {
    return this.rows.progress(this.owner, this.connector);
  }

  /**
   * Candidates found by PostgreSQL in one read-only snapshot (PostgresIndexRows.candidates: BM25
   * of this index's own statistics, pgvector's HNSW filtered by owner and connector), opened here.
   * Their chunks are not read with them (a record cited is cut by the question's chunk cache).
   */
  async rank(request: RetrievalRequest): Promise<SearchHit[]> {
    const rotating = request.vector && this.keys.prepareRotation();
    if (rotating) await rotating;
    const found = await this.rows.candidates(this.owner, this.connector, askedOf(this.ctx, request));
    const records = openRecordsAt(`${MEMO_AT}\u0000${this.key}\u0000`, this.ctx, found.sealed);
    const hits: SearchHit[] = [];
    for (const [doc, scores] of found.found) {
      const record = records.get(doc);
      if (record) hits.push({ record, ...scores });
    }
    return hits;
  }

  /** Best first by BM25 over this index's own rows; newest first without words (rank.ts search). */
  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    const parts = this.keys.blinder.matchParts(needles(request), quoted(request));
    const dates = { dateFrom: request.dateFrom?.toISOString(), dateTo: request.dateTo?.toISOString() };
    const found =
      parts.length === 0
        ? await this.rows.newest(this.owner, this.connector, request.limit, dates)
        : await this.rows.bestByWords(this.owner, this.connector, parts, request.limit, dates);
    const sealed = await this.rows.sealed(
      this.owner,
      this.connector,
      found.map((f) => f.doc),
    );
    return found.flatMap(({ doc }) => {
      const s = sealed.get(doc);
      return s ? [openRecord(this.ctx, doc, s)] : [];
    });
  }

  count(): Promise<number> {
    return this.rows.count(this.owner, this.connector);
  }
}

/** Every connector's index in the shared PostgreSQL. */
export class SharedIndexes implements IndexRoom {
  readonly shared = true;
  constructor(readonly rows: PostgresIndexRows) {}

  /** The room bound to `tx` (a user's deletion, one transaction of every shared room, D33). */
  within(tx: postgres.TransactionSql): SharedIndexes {
    return new SharedIndexes(this.rows.within(tx));
  }

  open(key: string, keys: IndexKeys, chunker?: Chunker): SharedIndex {
    return new SharedIndex(this.rows, key, keys, chunker);
  }

  drop(key: string): Promise<number> {
    const { owner, connector } = splitPartition(key);
    return this.rows.dropConnector(owner, connector);
  }

  owesWork(key: string): Promise<boolean> {
    const { owner, connector } = splitPartition(key);
    return this.rows.owesWork(owner, connector);
  }

  owedChunks(): Promise<number> {
    return this.rows.owedChunkCount();
  }

  /** Nothing to do: no FTS5 segments in PostgreSQL (the terms are rows; VACUUM takes their space back). */
  purgeTerms(): void {}

  forgetVectors(): Promise<number> {
    return this.rows.forgetVectors();
  }

  /** Erases every index row of `user` (D13): in the deletion's transaction when bound to it (within). */
  forget(user: string): Promise<number> {
    return this.rows.forget(user);
  }

  rowsOf(user: string): Promise<number> {
    return this.rows.rowsOf(user);
  }
}
