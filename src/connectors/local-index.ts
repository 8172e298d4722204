// A local index for sources read from disk (mail folders, document folders): each record's
// text in a contentless FTS5 table (BM25 over the words, no copy of the text), the record
// itself sealed with its owner's key. Entries are keyed by source path, size and mtime, so
// a rescan re-reads only what changed; the source files are only ever read.
import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import type { Migration } from "../store/migrations";
import { needles, type RetrievalRequest, type SourceRecord } from "./types";

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
];

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
      for (const r of records) {
        const { doc } = insertDoc.get(this.owner, entry.source, entry.size, entry.mtime, r.date, this.sealer.seal(JSON.stringify(r)))!;
        insertFts.run(doc, r.title, r.content);
      }
    })();
  }

  remove(source: string): void {
    const docs = this.db.query<{ doc: number }, [string, string]>("SELECT doc FROM connector_docs WHERE owner = ? AND source = ?").all(this.owner, source);
    const del = this.db.query("DELETE FROM connector_fts WHERE rowid = ?");
    for (const { doc } of docs) del.run(doc);
    this.db.query("DELETE FROM connector_docs WHERE owner = ? AND source = ?").run(this.owner, source);
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
    const del = this.db.query("DELETE FROM connector_fts WHERE rowid = ?");
    this.db.transaction(() => {
      for (const { doc } of docs) del.run(doc);
      this.db.query("DELETE FROM connector_docs WHERE owner = ?").run(this.owner);
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
