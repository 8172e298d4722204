// The shared vector store: PostgreSQL with pgvector (0.8 or later), for several corpus nodes on
// one database. One table of keyed vectors (D25: PostgreSQL sees no plaintext vector
// and no text) by owner, connector and id, with an HNSW index by cosine distance; a search is
// filtered by owner (and connectors, ids) in the same scan, pgvector 0.8's iterative index scan
// going on past the first candidates until k of the owner's are found, so a small owner among
// large ones still gets its k. The schema is made once, under an advisory lock, by whichever node
// opens it first (src/store/postgres-migrations.ts); the `vector` extension itself is the operator's (it needs a superuser).
import postgres from "postgres";
import { EMBEDDING_DIM } from "../embedding/embedder";
import { migratePostgres, type PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { checkK, type KeyedVector, type KnnFilter, type Neighbour, type StoredVector, type VectorStore } from "./store";

/** The connectors' vectors (the local index's chunks). */
export const VECTORS_TABLE = "corpus_vectors";
/** The archive's vectors (its chunks' ids are numbered apart from the connectors' chunks). */
export const ARCHIVE_VECTORS_TABLE = "corpus_archive_vectors";

/** The HNSW index of `table` by cosine distance (m 16, ef_construction 64: pgvector's defaults); a bulk load makes it after its rows (faster than row by row). */
export const vectorsHnswIndex = (table: string) =>
  `CREATE INDEX IF NOT EXISTS ${table}_hnsw ON ${table} USING hnsw (embedding vector_cosine_ops)`;

/** The schema of a table of vectors, by versions (applied once, by whichever node opens it first: migratePostgres). */
export function vectorMigrations(table: string): PgMigration[] {
  return [
    {
      id: `${table}-001-table`,
      // IF NOT EXISTS: a table made before migrations were versioned is taken as it is.
      up: async (tx) => {
        await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${table} (
          owner text NOT NULL,
          connector text NOT NULL,
          id bigint PRIMARY KEY,
          embedding vector(${EMBEDDING_DIM}) NOT NULL
        )`);
        await tx.unsafe(`CREATE INDEX IF NOT EXISTS ${table}_owner ON ${table} (owner, connector)`);
        await tx.unsafe(vectorsHnswIndex(table));
      },
    },
    {
      // When each vector's row was made (seconds), for a search within times (the archive's); NULL: none.
      id: `${table}-002-times`,
      up: (tx) => tx.unsafe(`ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS at bigint`),
    },
  ];
}

/** The oldest pgvector with iterative index scans (hnsw.iterative_scan). */
const MIN_PGVECTOR = [0, 8] as const;

/** Rows a put sends in one statement: ~1.5 MB of text at 384 dimensions. */
const PUT_BATCH = 500;

/** A put named an id another owner or connector holds: nothing of it was written. */
export class IdTaken extends Error {}

/** The database cannot hold vectors: no `vector` extension, or one too old. */
export class VectorStoreUnavailable extends Error {}

/**
 * Refuses a database that cannot hold vectors, saying what to do: no `vector` extension (it needs a
 * superuser: the operator's), or one older than MIN_PGVECTOR. Checked before any table is made.
 */
export async function requireVectorExtension(sql: SharedQueries): Promise<void> {
  const [ext] = await sql<{ extversion: string }[]>`SELECT extversion FROM pg_extension WHERE extname = 'vector'`;
  if (!ext)
    throw new VectorStoreUnavailable(
      "the database has no vector extension: as a superuser, CREATE EXTENSION vector (pgvector 0.8 or later) in it",
    );
  const [major = 0, minor = 0] = ext.extversion.split(".").map(Number);
  if (major < MIN_PGVECTOR[0] || (major === MIN_PGVECTOR[0] && minor < MIN_PGVECTOR[1]))
    throw new VectorStoreUnavailable(`pgvector ${ext.extversion} is too old: 0.8 or later is needed (ALTER EXTENSION vector UPDATE)`);
}

export interface PostgresVectorOptions {
  /** Candidates an HNSW search keeps (hnsw.ef_search; pgvector's default 40). More: better recall, slower. */
  efSearch?: number;
  /** Connections at most (postgres.js `max`). */
  connections?: number;
  /** The table (VECTORS_TABLE by default, ARCHIVE_VECTORS_TABLE for the archive's). */
  table?: string;
}

/** The HNSW search's candidates by default: recall@10 >= 0.95 over 400k vectors of one owner (scripts/bench/knn.ts). */
export const DEFAULT_EF_SEARCH = 100;

/** The HNSW options every session of a store's own connections, and of the shared database's, searches with (relaxed order: re-sorted). */
export const HNSW_SESSION = { "hnsw.iterative_scan": "relaxed_order", "hnsw.ef_search": String(DEFAULT_EF_SEARCH) } as const;

/** Connections opened with HNSW_SESSION (openSharedDatabase's): a search at the default width there is one statement. */
const tunedForSearch = new WeakSet<postgres.Sql>();
export function openedWithHnswSession(sql: postgres.Sql): postgres.Sql {
  tunedForSearch.add(sql);
  return sql;
}

/** A vector as pgvector reads it: `[x,y,…]`, each float32 written so that it reads back to the same float32. */
const literal = (v: Float32Array) => `[${Array.prototype.join.call(v, ",")}]`;

export class PostgresVectorStore implements VectorStore {
  private constructor(
    private readonly sql: SharedQueries,
    private readonly table: string,
    /** Set for a store whose connections' sessions do not search so already: each search sets its HNSW options for its own transaction. */
    private readonly efSearch: number | undefined,
    /** Whether the connections are its own (open's), ended by close. */
    private readonly owned: boolean,
  ) {}

  /**
   * The store of `table` over connections already opened (the shared database's, its schema made
   * by its migrations: vectorMigrations), or within a transaction, whose writes then join it (a
   * room writing its rows and their vectors at once, a deletion erasing a user in one transaction).
   */
  static over(sql: SharedQueries, table: string, efSearch = DEFAULT_EF_SEARCH): PostgresVectorStore {
    // Connections whose sessions search so already: one statement a search, not four (BEGIN,
    // the options set, the search, COMMIT); the time saved at 400k was within the load's noise here.
    const tuned = !("savepoint" in sql) && tunedForSearch.has(sql) && efSearch === DEFAULT_EF_SEARCH;
    return new PostgresVectorStore(sql, table, tuned ? undefined : efSearch, false);
  }

  /** `work` in a transaction: the one the store is bound to, or a new one. */
  private transaction<T>(work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
    const sql = this.sql;
    return "savepoint" in sql ? work(sql) : (sql.begin(work) as Promise<T>);
  }

  /** Opens the store at `url`, making its table and index if they are not there; throws VectorStoreUnavailable without pgvector 0.8+. */
  static async open(url: string, options: PostgresVectorOptions = {}): Promise<PostgresVectorStore> {
    const table = options.table ?? VECTORS_TABLE;
    const sql = postgres(url, {
      max: options.connections ?? 4,
      onnotice: () => {},
      // Every session of the store searches with iterative scans (relaxed order: re-sorted below).
      connection: { ...HNSW_SESSION, "hnsw.ef_search": String(options.efSearch ?? DEFAULT_EF_SEARCH) },
    });
    try {
      await requireVectorExtension(sql);
      await migratePostgres(sql, vectorMigrations(table));
    } catch (error) {
      await sql.end();
      throw error;
    }
    return new PostgresVectorStore(sql, table, undefined, true);
  }

  async put(owner: string, connector: string, vectors: readonly StoredVector[]): Promise<void> {
    for (const v of vectors)
      if (v.vector.length !== EMBEDDING_DIM) throw new RangeError(`a vector of ${v.vector.length} dimensions, not ${EMBEDDING_DIM}`);
    await this.transaction(async (tx) => {
      for (let at = 0; at < vectors.length; at += PUT_BATCH) {
        const batch = vectors.slice(at, at + PUT_BATCH);
        // Replaced only where the id is this owner's connector's: another's row is not updated, and the count tells.
        const written = await tx`INSERT INTO ${tx(this.table)} (owner, connector, id, at, embedding)
          SELECT ${owner}, ${connector}, u.id, u.at, u.v::vector
          FROM unnest(${batch.map((v) => v.id)}::bigint[], ${batch.map((v) => v.at ?? null)}::bigint[], ${batch.map((v) => literal(v.vector))}::text[]) AS u(id, at, v)
          ON CONFLICT (id) DO UPDATE SET embedding = EXCLUDED.embedding, at = EXCLUDED.at
          WHERE ${tx(this.table)}.owner = EXCLUDED.owner AND ${tx(this.table)}.connector = EXCLUDED.connector`;
        if (written.count !== batch.length) throw new IdTaken(`an id of ${owner}/${connector}'s vectors is another owner's or connector's`);
      }
    });
  }

  async remove(owner: string, connector: string, ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return;
    await this
      .sql`DELETE FROM ${this.sql(this.table)} WHERE owner = ${owner} AND connector = ${connector} AND id = ANY(${ids as number[]}::bigint[])`;
  }

  async knn(owner: string, query: KeyedVector, k: number, filter: KnnFilter = {}): Promise<Neighbour[]> {
    checkK(k);
    if (filter.connectors?.length === 0 || filter.ids?.length === 0) return [];
    if (this.efSearch !== undefined) {
      const efSearch = this.efSearch;
      // The same iterative scan as a store's own connections (open), set for this search's transaction alone.
      return this.transaction(async (tx) => {
        await tx`SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', ${String(efSearch)}, true)`;
        return PostgresVectorStore.nearest(tx, this.table, owner, query, k, filter);
      });
    }
    return PostgresVectorStore.nearest(this.sql, this.table, owner, query, k, filter);
  }

  private static async nearest(
    sql: SharedQueries,
    table: string,
    owner: string,
    query: KeyedVector,
    k: number,
    filter: KnnFilter,
  ): Promise<Neighbour[]> {
    const q = literal(query);
    const connectors = filter.connectors ? sql`AND connector = ANY(${filter.connectors as string[]}::text[])` : sql``;
    const ids = filter.ids ? sql`AND id = ANY(${filter.ids as number[]}::bigint[])` : sql``;
    const from = filter.from !== undefined ? sql`AND at >= ${filter.from}` : sql``;
    const to = filter.to !== undefined ? sql`AND at < ${filter.to}` : sql``;
    // Relaxed order: the index gives them nearly in order, sorted here exactly (pgvector's advice).
    const rows = await sql<{ id: string; connector: string; distance: number }[]>`
      WITH nearest AS MATERIALIZED (
        SELECT id, connector, embedding <=> ${q}::vector AS distance FROM ${sql(table)}
        WHERE owner = ${owner} ${connectors} ${ids} ${from} ${to}
        ORDER BY embedding <=> ${q}::vector LIMIT ${k}
      ) SELECT id, connector, distance FROM nearest ORDER BY distance`;
    return rows.map((r) => ({ id: Number(r.id), connector: r.connector, similarity: 1 - r.distance }));
  }

  async dropConnector(owner: string, connector: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(this.table)} WHERE owner = ${owner} AND connector = ${connector}`).count;
  }

  async dropOwner(owner: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(this.table)} WHERE owner = ${owner}`).count;
  }

  async count(owner: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(this.table)} WHERE owner = ${owner}`;
    return Number(row!.n);
  }

  async dropAll(): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(this.table)}`).count;
  }

  close(): Promise<void> {
    // A store over connections it does not own leaves them to their owner.
    return this.owned && !("savepoint" in this.sql) ? this.sql.end() : Promise.resolve();
  }
}
