// A local index for sources read from disk (mail folders, document folders): each record's
// words blinded (keyed hashes, index-terms.ts) in a contentless FTS5 table (BM25 and phrases,
// no copy of the text), the record itself sealed with its owner's key and bound to its row,
// chunk vectors rotated by the owner's secret rotation (D25). Entries are keyed by a keyed hash
// of the source path, with size and mtime, so a rescan re-reads only what changed; the source
// files are only ever read. Removed terms are purged from the index (secure-delete, merges).
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { VectorRotation } from "../crypto/rotation";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { EMBEDDING_DIM } from "../embedding/embedder";
import type { Migration } from "../store/migrations";
import { isStorageError } from "../store/storage-errors";
import { TermBlinder } from "./index-terms";
import { type IndexProgress, needles, type RetrievalRequest, type SearchHit, type SourceRecord, SourceSkipped } from "./types";

export const indexMigrations: Migration[] = [
  {
    id: "connectors-001-local-index",
    up(db) {
      db.exec(`CREATE TABLE connector_docs (
        doc INTEGER PRIMARY KEY,
        owner TEXT NOT NULL,
        source TEXT NOT NULL,
        size INTEGER NOT NULL,
        mtime INTEGER NOT NULL,
        record_date TEXT,
        record BLOB NOT NULL
      )`);
      db.exec("CREATE INDEX connector_docs_source ON connector_docs (owner, source)");
      db.exec(
        "CREATE VIRTUAL TABLE connector_fts USING fts5(title, content, content='', contentless_delete=1, tokenize='porter unicode61 remove_diacritics 2')",
      );
    },
  },
  {
    id: "connectors-003-chunk-vectors",
    up(db) {
      db.exec(`CREATE TABLE connector_chunks (
        chunk INTEGER PRIMARY KEY,
        doc INTEGER NOT NULL,
        owner TEXT NOT NULL,
        ord INTEGER NOT NULL,
        embedded INTEGER NOT NULL DEFAULT 0
      )`);
      db.exec("CREATE INDEX connector_chunks_doc ON connector_chunks (doc)");
      db.exec("CREATE INDEX connector_chunks_pending ON connector_chunks (owner, embedded)");
      db.exec(
        `CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
    },
  },
  {
    // The first index kept words, paths and vectors as they are: all of it goes (freed pages are
    // overwritten, secure_delete) and every connector re-indexes into the blinded form.
    id: "connectors-004-blinded-index",
    up(db) {
      db.exec("DROP TABLE connector_fts");
      db.exec("DROP TABLE connector_vec");
      db.exec("DELETE FROM connector_chunks");
      db.exec("DELETE FROM connector_docs");
      db.exec(`CREATE VIRTUAL TABLE connector_terms USING fts5(title, content, content='', contentless_delete=1, tokenize='ascii')`);
      db.exec("INSERT INTO connector_terms (connector_terms, rank) VALUES ('secure-delete', 1)");
      db.exec(
        `CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`,
      );
    },
  },
  {
    // Chunks still owed a vector, counted and found at start without scanning the others (D29).
    id: "connectors-005-owed-chunks",
    up(db) {
      db.exec("CREATE INDEX connector_chunks_owed ON connector_chunks (owner) WHERE embedded = 0");
    },
  },
];

/**
 * Whether the index `owner` (e.g. "alice/mail") still owes work (D29): chunks without a vector,
 * or no record at all (a first scan that never got far, or an empty folder, cheap to scan again).
 */
export function indexOwesWork(db: Database, owner: string): boolean {
  const q = (sql: string) => db.query<{ n: number }, [string]>(sql).get(owner) !== null;
  return (
    q("SELECT 1 AS n FROM connector_chunks WHERE owner = ? AND embedded = 0 LIMIT 1") ||
    !q("SELECT 1 AS n FROM connector_docs WHERE owner = ? LIMIT 1")
  );
}

/** Chunks of every index still waiting for their vector (a scan of those only: the partial index). */
export function owedChunks(db: Database): number {
  return db
    .query<{ n: number }, []>("SELECT count(*) AS n FROM connector_chunks INDEXED BY connector_chunks_owed WHERE embedded = 0")
    .get()!.n;
}

/** Drops what removed records left in the word index's segments (bounded work; see purgeTerms). */
const MERGE_PAGES = 500;

/** Cuts a record into the texts that are embedded, in a stable order. */
export type Chunker = (record: SourceRecord) => string[];

/** The owner's secrets, as the index uses them. */
export interface IndexKeys {
  /** Seals a record; `row` binds it to its place. */
  seal(plaintext: string, row: string): Buffer;
  open(sealed: Uint8Array, row: string): string;
  blinder: TermBlinder;
  rotation(): VectorRotation;
}

export interface ScanEntry {
  source: string;
  size: number;
  mtime: number;
}

/**
 * The secrets of `owner`'s index of connector `id`, from their data key. Background indexing
 * passes `create` false: once a deletion destroyed the key, it writes nothing more.
 */
export function indexKeysFor(keys: UserKeys, owner: string, id: string, create: boolean): IndexKeys {
  const purpose = `connector-index/${id}`;
  return {
    seal: (text, row) => keys.sealFor(owner, text, `${purpose}/${row}`, create),
    open: (sealed, row) => keys.openFor(owner, sealed, `${purpose}/${row}`).toString("utf8"),
    blinder: new TermBlinder(() => keys.derive(owner, `word-index/${id}`, create)),
    rotation: () => keys.rotation(owner, `connector/${id}`, EMBEDDING_DIM, create),
  };
}

/** Removes a whole connector's index (its owner key, e.g. "alice/mail"); needs no key. */
export function dropIndex(db: Database, owner: string): number {
  const docs = db.query<{ doc: number }, [string]>("SELECT doc FROM connector_docs WHERE owner = ?").all(owner);
  db.transaction(() => {
    for (const { doc } of docs) removeDoc(db, doc);
  })();
  return docs.length;
}

function removeDoc(db: Database, doc: number): void {
  db.query("DELETE FROM connector_terms WHERE rowid = ?").run(doc);
  for (const { chunk } of db.query<{ chunk: number }, [number]>("SELECT chunk FROM connector_chunks WHERE doc = ?").all(doc)) {
    db.query("DELETE FROM connector_vec WHERE chunk_id = ?").run(chunk);
  }
  db.query("DELETE FROM connector_chunks WHERE doc = ?").run(doc);
  db.query("DELETE FROM connector_docs WHERE doc = ?").run(doc);
}

/**
 * Forgets every chunk vector (another embedding model made them: src/embedding/service.ts
 * adoptModel); the chunks stay, pending, and are embedded again as any pending chunk is.
 */
export function forgetChunkVectors(db: Database): number {
  db.exec("DELETE FROM connector_vec");
  return db.query("UPDATE connector_chunks SET embedded = 0 WHERE embedded = 1").run().changes;
}

/**
 * Purges the terms of removed records from the word index for good: `full` rewrites it whole
 * (a connector or a user removed), otherwise a bounded merge after a rescan removed records.
 */
export function purgeTerms(db: Database, full: boolean): void {
  if (full) db.exec("INSERT INTO connector_terms (connector_terms) VALUES ('optimize')");
  else db.exec(`INSERT INTO connector_terms (connector_terms, rank) VALUES ('merge', -${MERGE_PAGES})`);
}

/** The most neighbours sqlite-vec gives in one search. */
const MAX_KNN = 4096;

/** A record's date within the request's range, as SQL on connector_docs `d`, with its values. */
interface DateCondition {
  sql: string;
  params: string[];
}

function dateCondition(request: RetrievalRequest): DateCondition {
  const sql: string[] = [];
  const params: string[] = [];
  if (request.dateFrom) {
    sql.push(" AND d.record_date >= ?");
    params.push(request.dateFrom.toISOString());
  }
  if (request.dateTo) {
    sql.push(" AND d.record_date < ?");
    params.push(request.dateTo.toISOString());
  }
  return { sql: sql.join(""), params };
}

export class LocalIndex {
  constructor(
    private readonly db: Database,
    /** The connector's key in the index, e.g. "alice/mail". */
    readonly owner: string,
    private readonly keys: IndexKeys,
    private readonly chunker: Chunker = () => [],
  ) {}

  /** The key a source is stored under: a keyed hash, so no path or file name is kept. */
  sourceKey(source: string): string {
    return this.keys.blinder.source(source);
  }

  /** Known sources by their keys (sourceKey), with the size and mtime last read. */
  known(): Map<string, { size: number; mtime: number }> {
    const rows = this.db
      .query<{ source: string; size: number; mtime: number }, [string]>(
        "SELECT DISTINCT source, size, mtime FROM connector_docs WHERE owner = ?",
      )
      .all(this.owner);
    return new Map(rows.map((r) => [r.source, { size: r.size, mtime: r.mtime }]));
  }

  /** Replaces every record of `entry.source` with `records`. */
  put(entry: ScanEntry, records: SourceRecord[]): void {
    const source = this.sourceKey(entry.source);
    this.db.transaction(() => {
      this.removeSource(source);
      const insertDoc = this.db.query<{ doc: number }, [string, string, number, number, string | null]>(
        "INSERT INTO connector_docs (owner, source, size, mtime, record_date, record) VALUES (?, ?, ?, ?, ?, x'') RETURNING doc",
      );
      const sealDoc = this.db.query("UPDATE connector_docs SET record = ? WHERE doc = ?");
      const insertTerms = this.db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)");
      const insertChunk = this.db.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (?, ?, ?)");
      for (const r of records) {
        const { doc } = insertDoc.get(this.owner, source, entry.size, entry.mtime, r.date)!;
        sealDoc.run(this.keys.seal(JSON.stringify(r), `doc/${doc}`), doc);
        insertTerms.run(doc, this.keys.blinder.text(r.title), this.keys.blinder.text(r.content));
        const n = this.chunker(r).length;
        for (let ord = 0; ord < n; ord++) insertChunk.run(doc, this.owner, ord);
      }
    })();
  }

  /** After records were removed or replaced: their terms leave the index's segments. */
  purgeRemoved(): void {
    purgeTerms(this.db, false);
  }

  /** Removes every record of a source, by its key (sourceKey). */
  removeSource(source: string): void {
    const docs = this.db
      .query<{ doc: number }, [string, string]>("SELECT doc FROM connector_docs WHERE owner = ? AND source = ?")
      .all(this.owner, source);
    for (const { doc } of docs) removeDoc(this.db, doc);
  }

  private record(doc: number): SourceRecord | undefined {
    const row = this.db.query<{ record: Uint8Array }, [number]>("SELECT record FROM connector_docs WHERE doc = ?").get(doc);
    return row ? (JSON.parse(this.keys.open(row.record, `doc/${doc}`)) as SourceRecord) : undefined;
  }

  /**
   * Chunks still without a vector, with the text to embed: `limit` of them, and the rest of the
   * last record's. A record is cut into chunks on the request thread once per call, so one is
   * never split between two calls (cutting a long mail again for each batch of its 64 chunks was
   * a third of that thread's time while a maildir embedded).
   */
  pendingChunks(limit: number): Array<{ chunk: number; text: string }> {
    const rows = this.db
      .query<{ chunk: number; doc: number; ord: number }, [string, number]>(
        "SELECT chunk, doc, ord FROM connector_chunks WHERE owner = ? AND embedded = 0 ORDER BY chunk LIMIT ?",
      )
      .all(this.owner, limit);
    const last = rows.at(-1);
    if (last && rows.length === limit)
      rows.push(
        ...this.db
          .query<{ chunk: number; doc: number; ord: number }, [number, number]>(
            "SELECT chunk, doc, ord FROM connector_chunks WHERE doc = ? AND embedded = 0 AND chunk > ? ORDER BY chunk",
          )
          .all(last.doc, last.chunk),
      );
    const records = new Map<number, string[]>();
    const out: Array<{ chunk: number; text: string }> = [];
    for (const r of rows) {
      if (!records.has(r.doc)) {
        const rec = this.record(r.doc);
        records.set(r.doc, rec ? this.chunker(rec) : []);
      }
      const text = records.get(r.doc)![r.ord];
      if (text === undefined) this.db.query("DELETE FROM connector_chunks WHERE chunk = ?").run(r.chunk);
      else out.push({ chunk: r.chunk, text });
    }
    return out;
  }

  /** Stores vectors of chunks, rotated (those removed meanwhile are skipped). */
  setVectors(chunks: number[], vectors: Float32Array[]): void {
    const exists = this.db.query<{ n: number }, [number]>("SELECT 1 AS n FROM connector_chunks WHERE chunk = ?");
    const insert = this.db.query("INSERT OR REPLACE INTO connector_vec (chunk_id, owner, embedding) VALUES (?, ?, ?)");
    const mark = this.db.query("UPDATE connector_chunks SET embedded = 1 WHERE chunk = ?");
    const rotation = this.keys.rotation();
    this.db.transaction(() => {
      chunks.forEach((c, i) => {
        if (!exists.get(c)) return;
        insert.run(BigInt(c), this.owner, rotation.apply(vectors[i]!));
        mark.run(c);
      });
    })();
  }

  progress(): IndexProgress {
    const row = this.db
      .query<{ total: number; embedded: number | null }, [string]>(
        "SELECT count(*) AS total, sum(embedded) AS embedded FROM connector_chunks WHERE owner = ?",
      )
      .get(this.owner)!;
    return { total: row.total, embedded: row.embedded ?? 0 };
  }

  /**
   * Candidates with scores: the best BM25 matches of the words, and, given the question's
   * vector, the nearest chunks; a record found both ways carries both scores. A date range is
   * a condition of both searches (in SQL, on the record's date): the best in range, not the
   * best of all and then those in range, which lost the records a date-narrowed question asks for.
   */
  rank(request: RetrievalRequest): SearchHit[] {
    const dates = dateCondition(request);
    const found = new Map<number, Omit<SearchHit, "record">>();
    const match = this.keys.blinder.match(needles(request));
    if (match) {
      const rows = this.db
        .query<{ doc: number; score: number }, Array<string | number>>(
          `SELECT d.doc, -bm25(connector_terms) AS score FROM connector_terms f JOIN connector_docs d ON d.doc = f.rowid
           WHERE connector_terms MATCH ? AND d.owner = ?${dates.sql} ORDER BY bm25(connector_terms) LIMIT ?`,
        )
        .all(match, this.owner, ...dates.params, request.limit * 2);
      for (const r of rows) found.set(r.doc, { lexical: r.score });
    }
    if (request.vector) {
      // The question in the owner's rotated space: dot products, and so the ranking, are unchanged.
      const vector = this.keys.rotation().apply(request.vector);
      this.nearestChunks(vector, Math.min(request.limit * 4, MAX_KNN), dates, found);
      this.bestChunksOf(vector, found);
    }
    const records = this.records([...found.keys()]);
    const hits: SearchHit[] = [];
    for (const [doc, scores] of found) {
      const record = records.get(doc);
      if (record) hits.push({ record, ...scores });
    }
    return hits;
  }

  /** The `k` chunks nearest `vector` (of records in the date range), each record's nearest kept. */
  private nearestChunks(vector: Float32Array, k: number, dates: DateCondition, found: Map<number, Omit<SearchHit, "record">>): void {
    const inRange = dates.sql
      ? ` AND v.chunk_id IN (SELECT c.chunk FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc WHERE d.owner = ?${dates.sql})`
      : "";
    const rows = this.db
      .query<{ doc: number; ord: number; distance: number }, Array<Float32Array | string | number>>(
        `SELECT c.doc, c.ord, v.distance FROM connector_vec v JOIN connector_chunks c ON c.chunk = v.chunk_id
         WHERE v.embedding MATCH ? AND k = ? AND v.owner = ?${inRange} ORDER BY v.distance`,
      )
      .all(vector, k, this.owner, ...(dates.sql ? [this.owner, ...dates.params] : []));
    for (const r of rows) {
      const similarity = 1 - r.distance;
      const hit = found.get(r.doc);
      if (!hit) found.set(r.doc, { dense: similarity, chunk: r.ord });
      else if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk: r.ord });
    }
  }

  /**
   * Word matches the nearest-neighbour search did not reach: their best chunk's similarity, by a
   * search among their chunks only (vec0 reads them in its own order; a lookup per chunk was 3x slower).
   */
  private bestChunksOf(vector: Float32Array, found: Map<number, Omit<SearchHit, "record">>): void {
    const docs = [...found].filter(([, hit]) => hit.dense === undefined).map(([doc]) => doc);
    if (docs.length === 0) return;
    const chunks = this.db
      .query<{ chunk: number; doc: number; ord: number }, [string]>(
        "SELECT chunk, doc, ord FROM connector_chunks WHERE doc IN (SELECT value FROM json_each(?)) AND embedded = 1",
      )
      .all(JSON.stringify(docs));
    if (chunks.length === 0) return;
    const of = new Map(chunks.map((c) => [c.chunk, c]));
    const rows = this.db
      .query<{ chunk: number; distance: number }, [Float32Array, number, string, string]>(
        `SELECT chunk_id AS chunk, distance FROM connector_vec
         WHERE embedding MATCH ? AND k = ? AND owner = ? AND chunk_id IN (SELECT value FROM json_each(?))`,
      )
      .all(vector, Math.min(chunks.length, MAX_KNN), this.owner, JSON.stringify([...of.keys()]));
    for (const r of rows) {
      const c = of.get(r.chunk)!;
      const similarity = 1 - r.distance;
      const hit = found.get(c.doc)!;
      if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk: c.ord });
    }
  }

  /** Records by their doc, opened, in one read. */
  private records(docs: number[]): Map<number, SourceRecord> {
    const rows = this.db
      .query<{ doc: number; record: Uint8Array }, [string]>(
        "SELECT doc, record FROM connector_docs WHERE doc IN (SELECT value FROM json_each(?))",
      )
      .all(JSON.stringify(docs));
    return new Map(rows.map((r) => [r.doc, JSON.parse(this.keys.open(r.record, `doc/${r.doc}`)) as SourceRecord]));
  }

  count(): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?").get(this.owner)!.n;
  }

  /** Records matching any term or phrase, best BM25 first, within the date range. */
  search(request: RetrievalRequest): SourceRecord[] {
    const match = this.keys.blinder.match(needles(request));
    const dated = dateCondition(request);
    const dates = dated.sql;
    const params: Array<string | number> = [this.owner, ...dated.params];
    const rows = match
      ? this.db
          .query<{ doc: number; record: Uint8Array }, Array<string | number>>(
            `SELECT d.doc, d.record FROM connector_terms f JOIN connector_docs d ON d.doc = f.rowid
             WHERE connector_terms MATCH ? AND d.owner = ?${dates} ORDER BY bm25(connector_terms) LIMIT ?`,
          )
          .all(match, ...params, request.limit)
      : this.db
          .query<{ doc: number; record: Uint8Array }, Array<string | number>>(
            `SELECT d.doc, d.record FROM connector_docs d WHERE d.owner = ?${dates} ORDER BY d.record_date DESC LIMIT ?`,
          )
          .all(...params, request.limit);
    return rows.map((r) => JSON.parse(this.keys.open(r.record, `doc/${r.doc}`)) as SourceRecord);
  }
}

/** How far a sync has come: sources read (or failed) of those to read, told before the first and after each. */
export type SyncProgress = (done: number, total: number) => void;

/** Sources left out past a bound (SourceSkipped), by source, with why: not read again until they change. */
export type SkippedSources = Map<string, { size: number; mtime: number; reason: string }>;

/**
 * Brings the index up to date with `entries` (from a scan of the source): new or changed
 * sources are read with `read`, vanished ones removed. Returns how many were read. A source
 * `read` skips (SourceSkipped) goes to `skipped` and is not read again until it changes.
 */
export async function syncIndex(
  index: LocalIndex,
  entries: ScanEntry[],
  read: (e: ScanEntry) => Promise<SourceRecord[]>,
  onProgress: SyncProgress = () => {},
  skipped: SkippedSources = new Map(),
): Promise<{ read: number; removed: number; failed: string[]; skipped: string[] }> {
  const known = index.known();
  // What to read is decided first, so that progress has a total.
  const toRead: ScanEntry[] = [];
  let replaced = 0;
  const present = new Set<string>();
  for (const e of entries) {
    present.add(e.source);
    const source = index.sourceKey(e.source);
    const k = known.get(source);
    known.delete(source);
    if (k && k.size === e.size && k.mtime === e.mtime) continue;
    const s = skipped.get(e.source);
    if (s && s.size === e.size && s.mtime === e.mtime) continue;
    skipped.delete(e.source);
    if (k) replaced++;
    toRead.push(e);
  }
  for (const source of skipped.keys()) if (!present.has(source)) skipped.delete(source);
  let readCount = 0;
  const failed: string[] = [];
  const newlySkipped: string[] = [];
  onProgress(0, toRead.length);
  for (const [i, e] of toRead.entries()) {
    try {
      index.put(e, await read(e));
      readCount++;
    } catch (error) {
      // The owner was deleted meanwhile: nothing more of theirs is read or written.
      if (error instanceof NoUserKey) throw error;
      // A full disk is no unreadable file: the sync stops and is retried once writes succeed (D29).
      if (isStorageError(error)) throw error;
      if (error instanceof SourceSkipped) {
        // Its earlier records (if it changed into what is skipped) go.
        index.removeSource(index.sourceKey(e.source));
        skipped.set(e.source, { size: e.size, mtime: e.mtime, reason: error.message });
        newlySkipped.push(error.message);
      } else failed.push(e.source);
    }
    onProgress(i + 1, toRead.length);
  }
  for (const source of known.keys()) index.removeSource(source);
  if (replaced || known.size) index.purgeRemoved();
  return { read: readCount, removed: known.size, failed, skipped: newlySkipped };
}

export function scanEntry(path: string, source = path): ScanEntry {
  const st = statSync(path);
  return { source, size: st.size, mtime: Math.floor(st.mtimeMs) };
}
