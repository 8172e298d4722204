// Where the rooms keep their rows (D33), chosen once at start: the embedded SQLite database of
// the data folder (the default, and the fast path for one node), or, with CORPUS_DATABASE_URL,
// one PostgreSQL that several corpus nodes share. Each room has one interface whose methods
// answer an Awaitable, and two stores behind it: the embedded one answers at once (inside the
// caller's SQLite transaction), the shared one later (a promise: the serving thread never waits
// on the network); callers await. PostgreSQL holds only what the embedded store holds at rest
// (sealed rows, keyed or blinded values). Until every room has its PostgreSQL store, a set
// CORPUS_DATABASE_URL stops the service at start naming the rooms not yet shared: never a silent SQLite.
import postgres from "postgres";
import { type Config, ConfigError } from "../config";
import { HNSW_SESSION, openedWithHnswSession, requireVectorExtension } from "../vectors/postgres";
import { migratePostgres, type PgMigration } from "./postgres-migrations";

/** What runs a shared room's statements: the node's connections, or a transaction of them (a deletion's, D33). */
export type SharedQueries = postgres.Sql | postgres.TransactionSql;

/** A value or a promise of it: the embedded store answers at once, PostgreSQL later. */
export type Awaitable<T> = T | Promise<T>;

/** `f` of `value`: at once when the value is there (the embedded store stays synchronous), else when it comes. */
export function andThen<T, U>(value: Awaitable<T>, f: (v: T) => Awaitable<U>): Awaitable<U> {
  return value instanceof Promise ? value.then(f) : f(value);
}

/**
 * What a room answered at once: inside the embedded database's transaction (a deletion's), which
 * cannot wait, a shared room's promise is refused; the deletion becomes one PostgreSQL
 * transaction once every room is shared (D33).
 */
export function atOnce<T>(value: Awaitable<T>, room: string): T {
  if (value instanceof Promise) throw new Error(`${room}: a shared room cannot answer inside the embedded database's transaction`);
  return value;
}

/** A shared store's form bound to a transaction of the shared database: what it writes there commits or rolls back with the rest. */
export interface InTransaction<T> {
  within(tx: postgres.TransactionSql): T;
}

/**
 * `store` bound to `tx` (a deletion's one PostgreSQL transaction, users/deletion.ts). A store
 * without that form (an embedded one) cannot join it: refused, never written beside it.
 */
export function inTransaction<T extends object>(store: T, tx: postgres.TransactionSql, room = "a room"): T {
  const within = (store as Partial<InTransaction<T>>).within;
  if (typeof within !== "function") throw new Error(`${room}: an embedded store cannot write inside the shared database's transaction`);
  return within.call(store, tx);
}

/** What PostgreSQL asks the client to retry: a deadlock's victim (40P01), a serialization failure (40001). */
const RETRIED_SQLSTATES = new Set(["40P01", "40001"]);
/** Times a transaction of its own is run before its error is the caller's. */
const TRANSACTION_ATTEMPTS = 3;

/**
 * `work` in a transaction of `sql`, or in `sql` itself when it is one already (a store bound to a
 * deletion's, `within`): its statements commit together. A transaction of its own that PostgreSQL
 * rolled back as a deadlock's victim or a serialization failure is run again (D33: a question is
 * not answered 500 for a lock cycle among concurrent ones); `work` holds nothing but statements.
 */
export async function atomically<T>(sql: SharedQueries, work: (tx: postgres.TransactionSql) => Promise<T>): Promise<T> {
  if ("savepoint" in sql) return work(sql);
  for (let attempt = 1; ; attempt++) {
    try {
      return (await sql.begin(work)) as T;
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (attempt >= TRANSACTION_ATTEMPTS || typeof code !== "string" || !RETRIED_SQLSTATES.has(code)) throw error;
    }
  }
}

/** The rooms whose rows PostgreSQL can keep, each store tested by one suite over both. */
export const SHARED_ROOMS = [
  "rate limits",
  "idempotency keys",
  "the /mcp per-address buckets",
  "leases of background work",
  "tokens and revocations",
  "OAuth clients, grants and sessions",
  "MCP sessions",
  "conversations",
  "the archive",
  "webhooks and their deliveries",
  "owed work",
  "users and accounts",
  "users' data keys",
  "connectors",
  "the local index and its vectors",
] as const;

/** The rooms kept only in the embedded database so far: while one is, nodes cannot share one state. */
export const NOT_YET_SHARED: readonly string[] = [];

/** The start refused while CORPUS_DATABASE_URL is set and a room is not yet shared (D33): what is, what is not, what to do. */
export function refuseUntilShared(config: Pick<Config, "CORPUS_DATABASE_URL">): void {
  if (!config.CORPUS_DATABASE_URL || NOT_YET_SHARED.length === 0) return;
  throw new ConfigError(
    `CORPUS_DATABASE_URL is set, but this version keeps only ${SHARED_ROOMS.join(", ")} in PostgreSQL, not yet ${NOT_YET_SHARED.join(", ")}: several nodes cannot share one state yet. Unset CORPUS_DATABASE_URL to run one node on the embedded database in CORPUS_DATA_DIR`,
  );
}

/** Connections to the shared database a node opens at most (postgres.js `max`). */
export const SHARED_CONNECTIONS = 8;

/** The shared database at `url`, with `migrations` applied once by whichever node opens it first (an advisory lock). */
export async function openSharedDatabase(
  url: string,
  migrations: readonly PgMigration[],
  connections = SHARED_CONNECTIONS,
): Promise<postgres.Sql> {
  // Every session searches vectors with iterative scans at the default width (one statement a search: PostgresVectorStore.over).
  const sql = openedWithHnswSession(postgres(url, { max: connections, onnotice: () => {}, connection: HNSW_SESSION }));
  try {
    // The shared rooms keep keyed vectors (the archive's): a database without pgvector is named as such, before any table is made.
    await requireVectorExtension(sql);
    await migratePostgres(sql, migrations);
  } catch (error) {
    await sql.end();
    throw unreachable(error) ?? error;
  }
  return sql;
}

/**
 * A connection that failed, said as such (the address and the reason, never the URL, which may
 * hold a password): a network error (ECONNREFUSED, ENOTFOUND, a timeout) or a refused sign-in
 * or database (SQLSTATE class 28, 3D000).
 */
function unreachable(error: unknown): Error | undefined {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string") return undefined;
  const network = /^E[A-Z]+$/.test(code) || code === "CONNECT_TIMEOUT";
  if (!network && !code.startsWith("28") && code !== "3D000") return undefined;
  return new Error(`the PostgreSQL of CORPUS_DATABASE_URL cannot be reached: ${(error as Error).message}`);
}
