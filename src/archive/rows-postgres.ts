// The archive in the shared PostgreSQL (D33), for several nodes on one database: a question
// archived through one node is found by deep_search through another. PostgreSQL holds what the
// embedded store holds at rest, table by table: corpus_archive_queries (the query's id, its
// user, its second, the question sealed with the user's data key), corpus_archive_chunks (ids,
// the user, the chunk's keyed citation id, its body sealed, whether its vector is stored),
// corpus_archive_documents (the user, the document's keyed id, the record's keyed id, its body
// sealed) and corpus_archive_vectors (vectors keyed by the user's archive rotation, D25,
// through PostgresVectorStore). No text, no plaintext vector. An answer and the vectors known
// are written in one transaction before the response is sent (D12); vectors computed later are
// stored with their rows locked, so that a deletion meanwhile leaves none behind (D13).
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically, type SharedQueries } from "../store/shared";
import { ARCHIVE_VECTORS_TABLE, PostgresVectorStore, vectorMigrations } from "../vectors/postgres";
import type { KeyedVector, Neighbour, StoredVector } from "../vectors/store";
import {
  ARCHIVE_SCOPE,
  type ArchivedRow,
  type ArchiveEntry,
  type ArchiveRows,
  KEPT_DOCUMENT_VERSIONS,
  type OwedChunk,
  type OwedVector,
} from "./rows";

const QUERIES = "corpus_archive_queries";
const CHUNKS = "corpus_archive_chunks";
const DOCUMENTS = "corpus_archive_documents";
/** The archive's tables, for what copies rows into them in bulk (corpus migrate). */
export const ARCHIVE_TABLES = { queries: QUERIES, chunks: CHUNKS, documents: DOCUMENTS } as const;

export const archivePgMigrations: PgMigration[] = [
  {
    id: "archive-pg-001-entries",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${QUERIES} (
        query_id text PRIMARY KEY,
        user_id text NOT NULL,
        queried_at bigint NOT NULL,
        question bytea NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${QUERIES}_user ON ${QUERIES} (user_id, queried_at)`);
      await tx.unsafe(`CREATE TABLE ${CHUNKS} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        query_id text NOT NULL REFERENCES ${QUERIES} (query_id) ON DELETE CASCADE,
        user_id text NOT NULL,
        chunk_id text NOT NULL,
        body bytea NOT NULL,
        embedded boolean NOT NULL DEFAULT false
      )`);
      await tx.unsafe(`CREATE INDEX ${CHUNKS}_cited ON ${CHUNKS} (user_id, chunk_id)`);
      await tx.unsafe(`CREATE INDEX ${CHUNKS}_query ON ${CHUNKS} (query_id)`);
      await tx.unsafe(`CREATE INDEX ${CHUNKS}_owed ON ${CHUNKS} (id) WHERE NOT embedded`);
      await tx.unsafe(`CREATE TABLE ${DOCUMENTS} (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id text NOT NULL,
        doc_id text NOT NULL,
        stored_at bigint NOT NULL,
        body bytea NOT NULL,
        record_key text,
        UNIQUE (user_id, doc_id)
      )`);
      await tx.unsafe(`CREATE INDEX ${DOCUMENTS}_record ON ${DOCUMENTS} (user_id, record_key, id)`);
    },
  },
  // The archive's vectors, as PostgresVectorStore makes them (the same ids: either may come first).
  ...vectorMigrations(ARCHIVE_VECTORS_TABLE),
];

interface Row {
  id: string;
  query_id: string;
  chunk_id: string;
  body: Uint8Array;
  question: Uint8Array;
  queried_at: string;
}

const archivedRow = (r: Row): ArchivedRow => ({ ...r, id: Number(r.id), queried_at: Number(r.queried_at) });

const compareText = (x: string, y: string) => (x < y ? -1 : x > y ? 1 : 0);

/** Documents sorted so that every writer takes their rows' locks (insert, then its record's older versions' delete) in one order. */
function inLockOrder<D extends { docId: string; recordKey?: string }>(documents: readonly D[]): D[] {
  return [...documents].sort((x, y) => compareText(x.recordKey ?? "", y.recordKey ?? "") || compareText(x.docId, y.docId));
}

export class PostgresArchiveRows implements ArchiveRows {
  constructor(private readonly sql: SharedQueries) {}

  /** The store bound to `tx` (a user's deletion, one transaction of every shared room, D33): what it erases and counts commits or rolls back with it. */
  within(tx: postgres.TransactionSql): PostgresArchiveRows {
    return new PostgresArchiveRows(tx);
  }

  private vectors(sql: SharedQueries = this.sql): PostgresVectorStore {
    return PostgresVectorStore.over(sql, ARCHIVE_VECTORS_TABLE);
  }

  /** `work` in the transaction the store is bound to, or in one of its own. */
  private transaction<T>(work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
    return atomically(this.sql, work);
  }

  async knownDocuments(user: string, docIds: readonly string[]): Promise<Set<string>> {
    if (docIds.length === 0) return new Set();
    const rows = await this.sql<{ doc_id: string }[]>`SELECT doc_id FROM ${this.sql(DOCUMENTS)}
      WHERE user_id = ${user} AND doc_id = ANY(${docIds as string[]}::text[])`;
    return new Set(rows.map((r) => r.doc_id));
  }

  write(entry: ArchiveEntry): Promise<number[]> {
    const { user, queryId, at } = entry;
    return this.transaction(async (tx) => {
      await tx`INSERT INTO ${tx(QUERIES)} (query_id, user_id, queried_at, question) VALUES (${queryId}, ${user}, ${at}, ${entry.question})`;
      // D33: in one order (by record, then id) for every answer: two answers citing the same
      // documents in their own orders would each wait on a row the other inserted (a deadlock, 500).
      for (const d of inLockOrder(entry.documents)) {
        // Another node may have kept the same version meanwhile: the same sealed content under the same id.
        await tx`INSERT INTO ${tx(DOCUMENTS)} (user_id, doc_id, stored_at, body, record_key)
          VALUES (${user}, ${d.docId}, ${at}, ${d.body}, ${d.recordKey ?? null}) ON CONFLICT (user_id, doc_id) DO NOTHING`;
        if (d.recordKey)
          await tx`DELETE FROM ${tx(DOCUMENTS)} WHERE user_id = ${user} AND record_key = ${d.recordKey} AND id NOT IN
            (SELECT id FROM ${tx(DOCUMENTS)} WHERE user_id = ${user} AND record_key = ${d.recordKey} ORDER BY id DESC LIMIT ${KEPT_DOCUMENT_VERSIONS})`;
      }
      // One statement for the answer's chunks (bodies sent as hex); their ids given in the order written.
      const rows = await tx<{ id: string }[]>`INSERT INTO ${tx(CHUNKS)} (query_id, user_id, chunk_id, body, embedded)
        SELECT ${queryId}, ${user}, u.chunk_id, decode(u.body, 'hex'), u.embedded = 1
        FROM unnest(${entry.chunks.map((c) => c.chunkId)}::text[], ${entry.chunks.map((c) => Buffer.from(c.body).toString("hex"))}::text[],
          ${entry.chunks.map((c) => (c.vector ? 1 : 0))}::int[]) WITH ORDINALITY AS u(chunk_id, body, embedded, n)
        ORDER BY u.n RETURNING id`;
      const ids = rows.map((r) => Number(r.id)).sort((x, y) => x - y);
      if (ids.length !== entry.chunks.length) throw new Error("the archive's chunks were not all written");
      const stored: StoredVector[] = [];
      entry.chunks.forEach((c, i) => {
        if (c.vector) stored.push({ id: ids[i]!, vector: c.vector, at });
      });
      if (stored.length) await this.vectors(tx).put(user, ARCHIVE_SCOPE, stored);
      return ids;
    });
  }

  storeOwed(user: string, vectors: readonly OwedVector[]): Promise<number> {
    if (vectors.length === 0) return Promise.resolve(0);
    return this.transaction(async (tx) => {
      // Locked until stored: a deletion erasing these rows waits, then erases the vectors too (forget).
      const alive = await tx<{ id: string; query_id: string; queried_at: string }[]>`
        SELECT c.id, c.query_id, q.queried_at FROM ${tx(CHUNKS)} c JOIN ${tx(QUERIES)} q ON q.query_id = c.query_id
        WHERE c.id = ANY(${vectors.map((v) => v.id)}::bigint[]) AND c.user_id = ${user} AND NOT c.embedded
        FOR UPDATE OF c`;
      const rows = new Map(alive.map((r) => [Number(r.id), r]));
      const stored: StoredVector[] = [];
      for (const v of vectors) {
        const row = rows.get(v.id);
        // An id given to another query since is not this vector's row.
        if (row && row.query_id === v.queryId) stored.push({ id: v.id, vector: v.vector, at: Number(row.queried_at) });
      }
      if (stored.length === 0) return 0;
      await this.vectors(tx).put(user, ARCHIVE_SCOPE, stored);
      await tx`UPDATE ${tx(CHUNKS)} SET embedded = true WHERE id = ANY(${stored.map((s) => s.id)}::bigint[])`;
      return stored.length;
    });
  }

  async owed(limit: number): Promise<OwedChunk[]> {
    const rows = await this.sql<(Omit<OwedChunk, "id"> & { id: string })[]>`
      SELECT id, user_id, query_id, chunk_id, body FROM ${this.sql(CHUNKS)} WHERE NOT embedded ORDER BY id LIMIT ${limit}`;
    return rows.map((r) => ({ ...r, id: Number(r.id) }));
  }

  nearest(user: string, query: KeyedVector, k: number, range: { from?: number; to?: number }): Promise<Neighbour[]> {
    return this.vectors().knn(user, query, k, range);
  }

  async chunks(user: string, ids: readonly number[]): Promise<ArchivedRow[]> {
    if (ids.length === 0) return [];
    const rows = await this.sql<Row[]>`
      SELECT c.id, c.query_id, c.chunk_id, c.body, q.question, q.queried_at FROM ${this.sql(CHUNKS)} c
      JOIN ${this.sql(QUERIES)} q ON q.query_id = c.query_id
      WHERE c.id = ANY(${ids as number[]}::bigint[]) AND c.user_id = ${user}`;
    const byId = new Map(rows.map((r) => [Number(r.id), archivedRow(r)]));
    return ids.flatMap((id) => byId.get(id) ?? []);
  }

  async latestChunk(user: string, chunkId: string): Promise<ArchivedRow | undefined> {
    const [row] = await this.sql<Row[]>`
      SELECT c.id, c.query_id, c.chunk_id, c.body, q.question, q.queried_at FROM ${this.sql(CHUNKS)} c
      JOIN ${this.sql(QUERIES)} q ON q.query_id = c.query_id
      WHERE c.user_id = ${user} AND c.chunk_id = ${chunkId} ORDER BY c.id DESC LIMIT 1`;
    return row ? archivedRow(row) : undefined;
  }

  async document(user: string, docId: string): Promise<Uint8Array | undefined> {
    const [row] = await this.sql<
      { body: Uint8Array }[]
    >`SELECT body FROM ${this.sql(DOCUMENTS)} WHERE user_id = ${user} AND doc_id = ${docId}`;
    return row?.body;
  }

  async pending(): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(CHUNKS)} WHERE NOT embedded`;
    return Number(row!.n);
  }

  async count(): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(CHUNKS)}`;
    return Number(row!.n);
  }

  /** The rows kept of `user`, as the embedded store counts them (a deletion checks, in its transaction: within, that it left none). */
  async rowsOf(user: string): Promise<number> {
    const sql = this.sql;
    const [row] = await sql<{ n: string }[]>`SELECT
      (SELECT count(*) FROM ${sql(QUERIES)} WHERE user_id = ${user}) + (SELECT count(*) FROM ${sql(CHUNKS)} WHERE user_id = ${user})
      + (SELECT count(*) FROM ${sql(DOCUMENTS)} WHERE user_id = ${user}) AS n`;
    return Number(row!.n);
  }

  /** Everything of `user` (D13), in the deletion's one transaction when bound to it (within, D33). */
  forget(user: string): Promise<{ queries: number; chunks: number }> {
    return this.transaction(async (tx) => {
      // Chunks first: a vector being stored holds its row (storeOwed), so this waits for it and the vectors' erase after sees it.
      const chunks = (await tx`DELETE FROM ${tx(CHUNKS)} WHERE user_id = ${user}`).count;
      await this.vectors(tx).dropOwner(user);
      const queries = (await tx`DELETE FROM ${tx(QUERIES)} WHERE user_id = ${user}`).count;
      await tx`DELETE FROM ${tx(DOCUMENTS)} WHERE user_id = ${user}`;
      return { queries, chunks };
    });
  }

  forgetVectors(): Promise<number> {
    return this.transaction(async (tx) => {
      await this.vectors(tx).dropAll();
      return (await tx`UPDATE ${tx(CHUNKS)} SET embedded = false WHERE embedded`).count;
    });
  }
}
