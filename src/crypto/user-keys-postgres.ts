// Users' data keys in the shared PostgreSQL (D33, D3), so that every node opens what another
// sealed. PostgreSQL holds what the embedded store holds at rest (crypto_user_keys): the user id,
// the time, and the 32-byte data key wrapped (AES-256-GCM) by the master key, which stays with
// the nodes: a dump of the database opens nothing. Two first uses at once (on two nodes) insert
// ON CONFLICT DO NOTHING and read back the one kept: every node ends with one key. Nodes keep a
// key in memory only from a `ready` that read its row (user-keys.ts), read again at each request
// and job: a deletion on one node is seen by the others at their next one.
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

export class PostgresUserKeyRecords implements UserKeyRecords {
  readonly answersLater = true;

  constructor(private readonly sql: SharedQueries) {}

  /** The store bound to `tx` (a user's deletion, one transaction of every shared room, D33). */
  within(tx: postgres.TransactionSql): PostgresUserKeyRecords {
    return new PostgresUserKeyRecords(tx);
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

  async forget(user: string): Promise<boolean> {
    return (await this.sql`DELETE FROM ${this.sql(USER_KEYS_TABLE)} WHERE user_id = ${user}`).count > 0;
  }
}
