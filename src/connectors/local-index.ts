// A local index for sources read from disk (mail folders, document folders): each record's
// text in a contentless FTS5 table (BM25 over the words, no copy of the text), the record
// itself sealed with its owner's key. Entries are keyed by source path, size and mtime, so
// a rescan re-reads only what changed; the source files are only ever read.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Migration } from "../store/migrations";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { needles, type IndexProgress, type RetrievalRequest, type SearchHit, type SourceRecord } from "./types";

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
      db.exec(`CREATE VIRTUAL TABLE connector_vec USING vec0(chunk_id integer primary key, owner text partition key, embedding float[${EMBEDDING_DIM}] distance_metric=cosine)`);
    },
  },
];

/** Cuts a record into the texts that are embedded, in a stable order. */
export type Chunker = (record: SourceRecord) => string[];

export interface Sealer {
  seal(plaintext: string): Buffer;
  open(sealed: Uint8Array): string;
}

export interface ScanEntry {
  source: string;
  size: number;
  mtime: number;
}

/** FTS5 query from terms and phrases: any of them, each quoted so user text is never syntax. */
export function ftsQuery(request: RetrievalRequest): string | undefined {
  const parts = needles(request).map((n) => `"${n.replaceAll('"', '""')}"`);
  return parts.length ? parts.join(" OR ") : undefined;
}

export class LocalIndex {
  constructor(
    private readonly db: Database,
    /** The connector's key in the index, e.g. "alice/mail". */
    readonly owner: string,
    private readonly sealer: Sealer,
    private readonly chunker: Chunker = () => [],
  ) {}

  known(): Map<string, { size: number; mtime: number }> {
    const rows = this.db
      .query<{ source: string; size: number; mtime: number }, [string]>("SELECT DISTINCT source, size, mtime FROM connector_docs WHERE owner = ?")
      .all(this.owner);
    return new Map(rows.map((r) => [r.source, { size: r.size, mtime: r.mtime }]));
  }

  /** Replaces every record of `entry.source` with `records`. */
  put(entry: ScanEntry, records: SourceRecord[]): void {
    this.db.transaction(() => {
      this.remove(entry.source);
      const insertDoc = this.db.query<{ doc: number }, [string, string, number, number, string | null, Buffer]>(
        "INSERT INTO connector_docs (owner, source, size, mtime, record_date, record) VALUES (?, ?, ?, ?, ?, ?) RETURNING doc",
      );
      const insertFts = this.db.query("INSERT INTO connector_fts (rowid, title, content) VALUES (?, ?, ?)");
      const insertChunk = this.db.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (?, ?, ?)");
      for (const r of records) {
        const { doc } = insertDoc.get(this.owner, entry.source, entry.size, entry.mtime, r.date, this.sealer.seal(JSON.stringify(r)))!;
        insertFts.run(doc, r.title, r.content);
        const n = this.chunker(r).length;
        for (let ord = 0; ord < n; ord++) insertChunk.run(doc, this.owner, ord);
      }
    })();
  }

  remove(source: string): void {
    const docs = this.db.query<{ doc: number }, [string, string]>("SELECT doc FROM connector_docs WHERE owner = ? AND source = ?").all(this.owner, source);
    for (const { doc } of docs) this.removeDoc(doc);
  }

  private removeDoc(doc: number): void {
    this.db.query("DELETE FROM connector_fts WHERE rowid = ?").run(doc);
    for (const { chunk } of this.db.query<{ chunk: number }, [number]>("SELECT chunk FROM connector_chunks WHERE doc = ?").all(doc)) {
      this.db.query("DELETE FROM connector_vec WHERE chunk_id = ?").run(chunk);
    }
    this.db.query("DELETE FROM connector_chunks WHERE doc = ?").run(doc);
    this.db.query("DELETE FROM connector_docs WHERE doc = ?").run(doc);
  }

  private record(doc: number): SourceRecord | undefined {
    const row = this.db.query<{ record: Uint8Array }, [number]>("SELECT record FROM connector_docs WHERE doc = ?").get(doc);
    return row ? (JSON.parse(this.sealer.open(row.record)) as SourceRecord) : undefined;
  }

  /** Chunks still without a vector, with the text to embed. */
  pendingChunks(limit: number): Array<{ chunk: number; text: string }> {
    const rows = this.db
      .query<{ chunk: number; doc: number; ord: number }, [string, number]>("SELECT chunk, doc, ord FROM connector_chunks WHERE owner = ? AND embedded = 0 ORDER BY chunk LIMIT ?")
      .all(this.owner, limit);
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

  /** Stores vectors of chunks (those removed meanwhile are skipped). */
  setVectors(chunks: number[], vectors: Float32Array[]): void {
    const exists = this.db.query<{ n: number }, [number]>("SELECT 1 AS n FROM connector_chunks WHERE chunk = ?");
    const insert = this.db.query("INSERT OR REPLACE INTO connector_vec (chunk_id, owner, embedding) VALUES (?, ?, ?)");
    const mark = this.db.query("UPDATE connector_chunks SET embedded = 1 WHERE chunk = ?");
    this.db.transaction(() => {
      chunks.forEach((c, i) => {
        if (!exists.get(c)) return;
        insert.run(BigInt(c), this.owner, vectors[i]!);
        mark.run(c);
      });
    })();
  }

  progress(): IndexProgress {
    const row = this.db
      .query<{ total: number; embedded: number | null }, [string]>("SELECT count(*) AS total, sum(embedded) AS embedded FROM connector_chunks WHERE owner = ?")
      .get(this.owner)!;
    return { total: row.total, embedded: row.embedded ?? 0 };
  }

  /**
   * Candidates with scores: the best BM25 matches of the words, and, given the question's
   * vector, the nearest chunks; a record found both ways carries both scores.
   */
  rank(request: RetrievalRequest): SearchHit[] {
    const hits = new Map<number, SearchHit>();
    const inRange = (r: SourceRecord) =>
      (!request.dateFrom || (r.date !== null && r.date >= request.dateFrom.toISOString())) && (!request.dateTo || (r.date !== null && r.date < request.dateTo.toISOString()));
    const match = ftsQuery(request);
    if (match) {
      const rows = this.db
        .query<{ doc: number; score: number }, [string, string, number]>(
          `SELECT d.doc, -bm25(connector_fts) AS score FROM connector_fts f JOIN connector_docs d ON d.doc = f.rowid
           WHERE connector_fts MATCH ? AND d.owner = ? ORDER BY bm25(connector_fts) LIMIT ?`,
        )
        .all(match, this.owner, request.limit * 4);
      for (const r of rows) {
        if (hits.size >= request.limit * 2) break;
        const record = this.record(r.doc);
        if (record && inRange(record)) hits.set(r.doc, { record, lexical: r.score });
      }
    }
    if (request.vector) {
      const rows = this.db
        .query<{ doc: number; ord: number; distance: number }, [Float32Array, number, string]>(
          `SELECT c.doc, c.ord, v.distance FROM connector_vec v JOIN connector_chunks c ON c.chunk = v.chunk_id
           WHERE v.embedding MATCH ? AND k = ? AND v.owner = ? ORDER BY v.distance`,
        )
        .all(request.vector, request.limit * 4, this.owner);
      for (const r of rows) {
        const similarity = 1 - r.distance;
        const hit = hits.get(r.doc);
        if (hit) {
          if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk: r.ord });
          continue;
        }
        const record = this.record(r.doc);
        if (record && inRange(record)) hits.set(r.doc, { record, dense: similarity, chunk: r.ord });
      }
      // Word matches the nearest-neighbour search did not reach: their best chunk's similarity.
      const chunksOf = this.db.query<{ chunk: number; ord: number }, [number]>("SELECT chunk, ord FROM connector_chunks WHERE doc = ? AND embedded = 1");
      const vectorOf = this.db.query<{ embedding: Uint8Array }, [number]>("SELECT embedding FROM connector_vec WHERE chunk_id = ?");
      for (const [doc, hit] of hits) {
        if (hit.dense !== undefined) continue;
        for (const c of chunksOf.all(doc)) {
          const blob = vectorOf.get(c.chunk)?.embedding;
          if (!blob) continue;
          const v = new Float32Array(blob.buffer, blob.byteOffset, blob.byteLength / 4);
          let dot = 0;
          for (let i = 0; i < v.length; i++) dot += v[i]! * request.vector[i]!;
          if (hit.dense === undefined || dot > hit.dense) Object.assign(hit, { dense: dot, chunk: c.ord });
        }
      }
    }
    return [...hits.values()];
  }

  count(): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?").get(this.owner)!.n;
  }

  /** Records matching any term or phrase, best BM25 first, within the date range. */
  search(request: RetrievalRequest): SourceRecord[] {
    const match = ftsQuery(request);
    const params: Array<string | number> = [this.owner];
    let dates = "";
    if (request.dateFrom) {
      dates += " AND d.record_date >= ?";
      params.push(request.dateFrom.toISOString());
    }
    if (request.dateTo) {
      dates += " AND d.record_date < ?";
      params.push(request.dateTo.toISOString());
    }
    const rows = match
      ? this.db
          .query<{ record: Uint8Array }, Array<string | number>>(
            `SELECT d.record FROM connector_fts f JOIN connector_docs d ON d.doc = f.rowid
             WHERE connector_fts MATCH ? AND d.owner = ?${dates} ORDER BY bm25(connector_fts) LIMIT ?`,
          )
          .all(match, ...params, request.limit)
      : this.db
          .query<{ record: Uint8Array }, Array<string | number>>(`SELECT d.record FROM connector_docs d WHERE d.owner = ?${dates} ORDER BY d.record_date DESC LIMIT ?`)
          .all(...params, request.limit);
    return rows.map((r) => JSON.parse(this.sealer.open(r.record)) as SourceRecord);
  }

  /** Removes the whole connector's index. */
  drop(): number {
    const docs = this.db.query<{ doc: number }, [string]>("SELECT doc FROM connector_docs WHERE owner = ?").all(this.owner);
    this.db.transaction(() => {
      for (const { doc } of docs) this.removeDoc(doc);
    })();
    return docs.length;
  }
}

/**
 * Brings the index up to date with `entries` (from a scan of the source): new or changed
 * sources are read with `read`, vanished ones removed. Returns how many were read.
 */
export async function syncIndex(index: LocalIndex, entries: ScanEntry[], read: (e: ScanEntry) => Promise<SourceRecord[]>): Promise<{ read: number; removed: number; failed: string[] }> {
  const known = index.known();
  let readCount = 0;
  const failed: string[] = [];
  for (const e of entries) {
    const k = known.get(e.source);
    known.delete(e.source);
    if (k && k.size === e.size && k.mtime === e.mtime) continue;
    try {
      index.put(e, await read(e));
      readCount++;
    } catch {
      failed.push(e.source);
    }
  }
  for (const source of known.keys()) index.remove(source);
  return { read: readCount, removed: known.size, failed };
}

export function scanEntry(path: string, source = path): ScanEntry {
  const st = statSync(path);
  return { source, size: st.size, mtime: Math.floor(st.mtimeMs) };
}
