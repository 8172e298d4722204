// Users' data keys in the shared PostgreSQL (D33, D3), so that every node opens what another
// sealed. PostgreSQL holds what the embedded store holds at rest (crypto_user_keys): the user id,
// the time, and the 32-byte data key wrapped (AES-256-GCM) by the master key, which stays with
// the nodes: a dump of the database opens nothing. Two first uses at once (on two nodes) insert
// ON CONFLICT DO NOTHING and read back the one kept: every node ends with one key. Nodes keep a
// key in memory only from a `ready` that read its row (user-keys.ts), read again at each request
// and job: a deletion on one node is seen by the others at their next one. After a deletion the
// table is rewritten (compact) so that the destroyed key leaves PostgreSQL's files too.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { NoUserKey, type UserKeyRecords } from "./user-keys";

export const USER_KEYS_TABLE = "corpus_user_keys";

export const userKeyPgMigrations: PgMigration[] = [
  {
    id: "keys-pg-001-user-keys",
    up: (tx) =>
      tx.unsafe(`CREATE TABLE ${USER_KEYS_TABLE} (
        user_id text PRIMARY KEY,
        wrapped_key bytea NOT NULL,
        created_at bigint NOT NULL
      )`),
  },
];

/** The longest a compaction waits for the keys' table's lock (every request reads the table: it waits on none for long). */
export const COMPACT_LOCK_WAIT = "2s";

/** What a node owes the keys' table: the newest transaction that erased a key, until a compaction took its row out (shared by a store and its `within` forms). */
interface Owed {
  xid?: bigint;
}

export class PostgresUserKeyRecords implements UserKeyRecords {
  readonly answersLater = true;

  constructor(
    private readonly sql: SharedQueries,
    private readonly owed: Owed = {},
  ) {}

  /** The store bound to `tx` (a user's deletion, one transaction of every shared room, D33). */
  within(tx: postgres.TransactionSql): PostgresUserKeyRecords {
    return new PostgresUserKeyRecords(tx, this.owed);
  }

  async wrapped(user: string): Promise<Uint8Array | undefined> {
    const [row] = await this.sql<{ wrapped_key: Uint8Array }[]>`
      SELECT wrapped_key FROM ${this.sql(USER_KEYS_TABLE)} WHERE user_id = ${user}`;
    return row ? new Uint8Array(row.wrapped_key) : undefined;
  }

  async keep(user: string, wrapped: Uint8Array, at: number): Promise<Uint8Array> {
    await this.sql`INSERT INTO ${this.sql(USER_KEYS_TABLE)} (user_id, wrapped_key, created_at)
      VALUES (${user}, ${Buffer.from(wrapped)}, ${at}) ON CONFLICT (user_id) DO NOTHING`;
    const kept = await this.wrapped(user);
    // Two statements, so the read sees a key another node committed while the insert waited on it.
    // Erased between them (a deletion at that moment): the work for the user ends here.
    if (!kept) throw new NoUserKey();
    return kept;
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`
      SELECT count(*)::integer AS n FROM ${this.sql(USER_KEYS_TABLE)} WHERE user_id = ${user}`;
    return row!.n;
  }

  /** Erases the key; the erasing transaction is remembered: its dead row is owed a compaction. */
  async forget(user: string): Promise<boolean> {
    const rows = await this.sql<{ xid: string }[]>`
      DELETE FROM ${this.sql(USER_KEYS_TABLE)} WHERE user_id = ${user} RETURNING pg_current_xact_id()::text AS xid`;
    const xid = rows[0] && BigInt(rows[0].xid);
    if (xid !== undefined && (this.owed.xid === undefined || xid > this.owed.xid)) this.owed.xid = xid;
    return rows.length > 0;
  }

  /**
   * VACUUM FULL of the keys' table: a deleted row stays in its page until VACUUM, and a plain
   * VACUUM frees its space without overwriting it, so an erased key's wrapped bytes would stay in
   * the table's file, which the master key opens. Rewritten, the table is a new file without them,
   * the old one unlinked. The rewrite keeps a dead row that a transaction begun before its erase
   * may still see (any session's snapshot, in any database of the server): while one is open the
   * compaction waits (false: owed, asked again by the next sweep). One row of ~100 bytes per user:
   * milliseconds, under a lock that every request's read of a key waits for, so the lock itself
   * is waited for COMPACT_LOCK_WAIT at most (then this throws). True when nothing is owed.
   */
  async compact(): Promise<boolean> {
    const owed = this.owed.xid;
    if (owed === undefined) return true;
    if ("savepoint" in this.sql) throw new Error("users' data keys: a compaction cannot run inside a transaction");
    const [held] = await this.sql<{ held: boolean }[]>`
      SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_xmin IS NOT NULL
        AND age(backend_xmin) >= age(${owed.toString()}::xid8::xid)) AS held`;
    if (held!.held) return false;
    // VACUUM runs outside any transaction: on one connection, its lock wait set there and reset after.
    const connection = await this.sql.reserve();
    try {
      await connection.unsafe(`SET lock_timeout = '${COMPACT_LOCK_WAIT}'`);
      await connection.unsafe(`VACUUM FULL ${USER_KEYS_TABLE}`);
    } finally {
      await connection.unsafe("RESET lock_timeout").catch(() => {});
      connection.release();
    }
    // A key erased meanwhile is owed the next one.
    if (this.owed.xid === owed) this.owed.xid = undefined;
    return this.owed.xid === undefined;
  }
}
