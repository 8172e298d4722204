// Where the archive's rows and vectors are kept (D33): one interface, two stores. The embedded
// one (this file) is the data folder's SQLite, its tables as they were (archive_queries,
// archive_chunks, archive_documents; the vectors in sqlite-vec's archive_vec through
// SqliteVectorStore), answering at once; the shared one is PostgreSQL (rows-postgres.ts),
// answering promises. Both hold only sealed values (the user's data key, bound to owner, table
// and row: store.ts) and vectors keyed by the user's archive rotation (D25); the times and ids
// beside them are what the embedded store keeps in clear too. A user's archive past the
// threshold gets the embedded HNSW index the local index's big connectors get
// (vectors/partition-index.ts, its own tables archive_hnsw… and folder archive-index/).
import type { Database } from "bun:sqlite";
import type { Awaitable } from "../store/shared";
import { PartitionIndexedStore, type PartitionIndexOptions } from "../vectors/partition-index";
import { SqliteVectorStore, type Vec0Table } from "../vectors/sqlite";
import type { KeyedVector, Neighbour, StoredVector } from "../vectors/store";

/** The archive's own vector rotation (D25), apart from every connector's; also its vectors' connector. */
export const ARCHIVE_SCOPE = "archive";

/**
 * Versions of one record the archive keeps whole (D36), the newest: an older version's quotes
 * stay in archive_chunks (their text and sha256), its whole document no longer opens.
 */
export const KEPT_DOCUMENT_VERSIONS = 8;

/** An answer to keep (D12): its question and chunks sealed, each chunk's keyed vector where known. */
export interface ArchiveEntry {
  user: string;
  queryId: string;
  /** Seconds since the epoch. */
  at: number;
  question: Uint8Array;
  chunks: Array<{ chunkId: string; body: Uint8Array; vector?: KeyedVector }>;
  /** The cited documents not kept yet, in the order cited; each record's newest KEPT_DOCUMENT_VERSIONS are kept. */
  documents: Array<{ docId: string; body: Uint8Array; recordKey?: string }>;
}

/** An archived chunk's vector computed later (D29), for the row it was computed for. */
export interface OwedVector {
  id: number;
  queryId: string;
  vector: KeyedVector;
}

/** An archived chunk still waiting for its vector. */
export interface OwedChunk {
  id: number;
  user_id: string;
  query_id: string;
  chunk_id: string;
  body: Uint8Array;
}

/** An archived chunk with its question. */
export interface ArchivedRow {
  id: number;
  query_id: string;
  chunk_id: string;
  body: Uint8Array;
  question: Uint8Array;
  queried_at: number;
}

export interface ArchiveRows {
  /** The documents among `docIds` that `user` has kept already (each is sealed once: its id is keyed by its content). */
  knownDocuments(user: string, docIds: readonly string[]): Awaitable<Set<string>>;
  /** Writes an answer, its chunks, their vectors given and its documents in one transaction; the chunks' row ids, in order. */
  write(entry: ArchiveEntry): Awaitable<number[]>;
  /** Stores vectors owed, with their question's time, for the rows still this query's, `user`'s and waiting (others skipped); how many. */
  storeOwed(user: string, vectors: readonly OwedVector[]): Awaitable<number>;
  /** The first `limit` chunks of all users waiting for their vector, by id. */
  owed(limit: number): Awaitable<OwedChunk[]>;
  /** The `k` chunks of `user` nearest `query` whose question was asked within [from, to) (seconds). */
  nearest(user: string, query: KeyedVector, k: number, range: { from?: number; to?: number }): Awaitable<Neighbour[]>;
  /** `user`'s chunks among `ids`, with their questions. */
  chunks(user: string, ids: readonly number[]): Awaitable<ArchivedRow[]>;
  /** The latest archived copy of `user`'s chunk `chunkId`. */
  latestChunk(user: string, chunkId: string): Awaitable<ArchivedRow | undefined>;
  /** `user`'s sealed document `docId`. */
  document(user: string, docId: string): Awaitable<Uint8Array | undefined>;
  /** Chunks of all users waiting for their vector. */
  pending(): Awaitable<number>;
  /** Chunks of all users. */
  count(): Awaitable<number>;
  /** The rows kept of `user`: questions, chunks, documents (their vectors go with the chunks, in one transaction). */
  rowsOf(user: string): Awaitable<number>;
  /** Everything of `user` (D13): how many questions and chunks. */
  forget(user: string): Awaitable<{ queries: number; chunks: number }>;
  /** Forgets every vector (another model made them): every chunk is owed again; how many. */
  forgetVectors(): Awaitable<number>;
}

/** The archive's vectors in sqlite-vec: a partition per user, with the second of each chunk's question (a search within times). */
export const ARCHIVE_VECTORS: Vec0Table = {
  table: "archive_vec",
  id: "id",
  partition: "user_id",
  at: "queried_at",
  connector: ARCHIVE_SCOPE,
  hnsw: { tables: "archive_hnsw", dir: "archive-index" },
};

const CHUNK_WITH_QUESTION =
  "SELECT c.id, c.query_id, c.chunk_id, c.body, q.question, q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id";

/** The embedded store: the data folder's SQLite, each write one transaction with its vectors. */
export class SqliteArchiveRows implements ArchiveRows {
  /** Each user's vectors: sqlite-vec's exact search, or past the threshold their HNSW index (a heavy user's deep_search reads not every vector). */
  readonly vectors: PartitionIndexedStore;

  constructor(
    private readonly db: Database,
    options: PartitionIndexOptions = {},
  ) {
    this.vectors = new PartitionIndexedStore(db, new SqliteVectorStore(db, ARCHIVE_VECTORS), options);
  }

  /** Ends an index build under way (before the database closes). */
  close(): void {
    this.vectors.close();
  }

  knownDocuments(user: string, docIds: readonly string[]): Set<string> {
    const has = this.db.query<{ n: number }, [string, string]>("SELECT 1 AS n FROM archive_documents WHERE user_id = ? AND doc_id = ?");
    return new Set(docIds.filter((id) => has.get(user, id)));
  }

  write(entry: ArchiveEntry): number[] {
    const { user, queryId, at } = entry;
    return this.db.transaction(() => {
      this.db
        .query("INSERT INTO archive_queries (query_id, user_id, queried_at, question) VALUES (?, ?, ?, ?)")
        .run(queryId, user, at, entry.question);
      const insertDocument = this.db.query(
        "INSERT OR IGNORE INTO archive_documents (user_id, doc_id, stored_at, body, record_key) VALUES (?, ?, ?, ?, ?)",
      );
      const dropOldVersions = this.db.query(
        `DELETE FROM archive_documents WHERE user_id = ?1 AND record_key = ?2 AND id NOT IN
          (SELECT id FROM archive_documents WHERE user_id = ?1 AND record_key = ?2 ORDER BY id DESC LIMIT ${KEPT_DOCUMENT_VERSIONS})`,
      );
      for (const d of entry.documents) {
        insertDocument.run(user, d.docId, at, d.body, d.recordKey ?? null);
        if (d.recordKey) dropOldVersions.run(user, d.recordKey);
      }
      const insert = this.db.query<{ id: number }, [string, string, string, Uint8Array, number]>(
        "INSERT INTO archive_chunks (query_id, user_id, chunk_id, body, embedded) VALUES (?, ?, ?, ?, ?) RETURNING id",
      );
      const stored: StoredVector[] = [];
      const ids = entry.chunks.map((c) => {
        const { id } = insert.get(queryId, user, c.chunkId, c.body, c.vector ? 1 : 0)!;
        if (c.vector) stored.push({ id, vector: c.vector, at });
        return id;
      });
      this.vectors.put(user, ARCHIVE_SCOPE, stored);
      return ids;
    })();
  }

  storeOwed(user: string, vectors: readonly OwedVector[]): number {
    // The row is still this query's, this user's, and waiting: a user deleted meanwhile has none
    // left, and an id the table gave again since (to anyone) belongs to another query.
    const row = this.db.query<{ queried_at: number }, [number, string, string]>(
      "SELECT q.queried_at FROM archive_chunks c JOIN archive_queries q ON q.query_id = c.query_id WHERE c.id = ? AND c.query_id = ? AND c.user_id = ? AND c.embedded = 0",
    );
    const mark = this.db.query("UPDATE archive_chunks SET embedded = 1 WHERE id = ?");
    return this.db.transaction(() => {
      const stored: StoredVector[] = [];
      for (const v of vectors) {
        const alive = row.get(v.id, v.queryId, user);
        if (!alive) continue;
        stored.push({ id: v.id, vector: v.vector, at: alive.queried_at });
        mark.run(v.id);
      }
      this.vectors.put(user, ARCHIVE_SCOPE, stored);
      return stored.length;
    })();
  }

  owed(limit: number): OwedChunk[] {
    return this.db
      .query<OwedChunk, [number]>("SELECT id, user_id, query_id, chunk_id, body FROM archive_chunks WHERE embedded = 0 ORDER BY id LIMIT ?")
      .all(limit);
  }

  nearest(user: string, query: KeyedVector, k: number, range: { from?: number; to?: number }): Neighbour[] {
    return this.vectors.knn(user, query, k, range);
  }

  chunks(user: string, ids: readonly number[]): ArchivedRow[] {
    const chunk = this.db.query<ArchivedRow, [number, string]>(`${CHUNK_WITH_QUESTION} WHERE c.id = ? AND c.user_id = ?`);
    return ids.flatMap((id) => chunk.get(id, user) ?? []);
  }

  latestChunk(user: string, chunkId: string): ArchivedRow | undefined {
    return (
      this.db
        .query<ArchivedRow, [string, string]>(`${CHUNK_WITH_QUESTION} WHERE c.user_id = ? AND c.chunk_id = ? ORDER BY c.id DESC LIMIT 1`)
        .get(user, chunkId) ?? undefined
    );
  }

  document(user: string, docId: string): Uint8Array | undefined {
    return (
      this.db
        .query<{ body: Uint8Array }, [string, string]>("SELECT body FROM archive_documents WHERE user_id = ? AND doc_id = ?")
        .get(user, docId)?.body ?? undefined
    );
  }

  pending(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks WHERE embedded = 0").get()!.n;
  }

  count(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM archive_chunks").get()!.n;
  }

  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT count(*) FROM archive_queries WHERE user_id = ?1) + (SELECT count(*) FROM archive_chunks WHERE user_id = ?1) + (SELECT count(*) FROM archive_documents WHERE user_id = ?1) AS n",
      )
      .get(user)!.n;
  }

  forget(user: string): { queries: number; chunks: number } {
    return this.db.transaction(() => {
      this.vectors.dropOwner(user);
      const chunks = this.db.query("DELETE FROM archive_chunks WHERE user_id = ?").run(user).changes;
      const queries = this.db.query("DELETE FROM archive_queries WHERE user_id = ?").run(user).changes;
      this.db.query("DELETE FROM archive_documents WHERE user_id = ?").run(user);
      return { queries, chunks };
    })();
  }

  forgetVectors(): number {
    return forgetArchiveVectors(this.db);
  }
}

/**
 * Forgets every archived chunk's vector (another embedding model made them: src/embedding/
 * service.ts adoptModel); each chunk is pending again and resumePending embeds it from its text.
 */
export function forgetArchiveVectors(db: Database): number {
  // Their indexes too: tables and files.
  new PartitionIndexedStore(db, new SqliteVectorStore(db, ARCHIVE_VECTORS)).dropAll();
  return db.query("UPDATE archive_chunks SET embedded = 0 WHERE embedded = 1").run().changes;
}
