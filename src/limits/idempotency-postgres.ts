// Idempotency records in the shared PostgreSQL (D33), so that a retry sent to another node is
// replayed, or refused while the first still runs, as on one node. A claim is one statement: an
// upsert that replaces a row only when it is stale (expired, or abandoned while running), and
// reads the row that stands otherwise; of duplicates racing on several nodes exactly one claims.
// PostgreSQL holds what the embedded store holds at rest (idempotency_records): the user id,
// the endpoint, the key and the body's hash keyed under a key of the user's (D25), the response
// sealed with the user's data key, the state, the status and the time.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import type { Claim, IdempotencyRecords, Staleness, StoredRecord } from "./idempotency";

export const IDEMPOTENCY_TABLE = "corpus_idempotency_records";

export const idempotencyPgMigrations: PgMigration[] = [
  {
    id: `${IDEMPOTENCY_TABLE}-001-table`,
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${IDEMPOTENCY_TABLE} (
        user_id text NOT NULL,
        endpoint text NOT NULL,
        idem_key text NOT NULL,
        body_hash text NOT NULL,
        state text NOT NULL CHECK (state IN ('running', 'done')),
        status integer,
        response bytea,
        created_at bigint NOT NULL,
        PRIMARY KEY (user_id, endpoint, idem_key)
      )`);
      await tx.unsafe(`CREATE INDEX ${IDEMPOTENCY_TABLE}_created ON ${IDEMPOTENCY_TABLE} (created_at)`);
    },
  },
];

/** Times a claim is tried again when the row that refused it was gone by the time it was read (released meanwhile). */
const CLAIM_ATTEMPTS = 3;

interface Row extends Omit<StoredRecord, "created_at"> {
  created_at: string;
  claimed: boolean;
}

export class PostgresIdempotencyRecords implements IdempotencyRecords {
  constructor(private readonly sql: SharedQueries) {}

  /** The same store inside `tx` (a deletion's: users/deletion.ts): the user's records erased and counted with the rest. */
  within(tx: postgres.TransactionSql): PostgresIdempotencyRecords {
    return new PostgresIdempotencyRecords(tx);
  }

  async claim(c: Claim, hash: string, t: number, stale: Staleness): Promise<StoredRecord | undefined> {
    const table = this.sql(IDEMPOTENCY_TABLE);
    for (let attempt = 1; ; attempt++) {
      const [row] = await this.sql<Row[]>`
        WITH claimed AS (
          INSERT INTO ${table} AS r (user_id, endpoint, idem_key, body_hash, state, created_at)
          VALUES (${c.user}, ${c.endpoint}, ${c.key}, ${hash}, 'running', ${t})
          ON CONFLICT (user_id, endpoint, idem_key) DO UPDATE SET
            body_hash = EXCLUDED.body_hash, state = 'running', status = NULL, response = NULL, created_at = EXCLUDED.created_at
          WHERE r.created_at < ${stale.expiredBefore} OR (r.state = 'running' AND r.created_at < ${stale.abandonedBefore})
          RETURNING true AS claimed
        )
        SELECT NULL AS body_hash, NULL AS state, NULL::integer AS status, NULL::bytea AS response, NULL::bigint AS created_at, true AS claimed
        FROM claimed
        UNION ALL
        SELECT body_hash, state, status, response, created_at, false AS claimed FROM ${table}
        WHERE user_id = ${c.user} AND endpoint = ${c.endpoint} AND idem_key = ${c.key} AND NOT EXISTS (SELECT 1 FROM claimed)`;
      if (row?.claimed) return undefined;
      if (row) return { ...row, created_at: Number(row.created_at) };
      // Refused by a row this statement's snapshot did not see (made, or given up, by another node meanwhile): asked again.
      if (attempt === CLAIM_ATTEMPTS) throw new Error("idempotency: the key's record changed under every attempt to claim it");
    }
  }

  async complete(c: Claim, status: number, response: Uint8Array): Promise<void> {
    await this.sql`UPDATE ${this.sql(IDEMPOTENCY_TABLE)} SET state = 'done', status = ${status}, response = ${Buffer.from(response)}
      WHERE user_id = ${c.user} AND endpoint = ${c.endpoint} AND idem_key = ${c.key} AND state = 'running'`;
  }

  async release(c: Claim): Promise<void> {
    await this.sql`DELETE FROM ${this.sql(IDEMPOTENCY_TABLE)}
      WHERE user_id = ${c.user} AND endpoint = ${c.endpoint} AND idem_key = ${c.key} AND state = 'running'`;
  }

  async purgeBefore(t: number): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(IDEMPOTENCY_TABLE)} WHERE created_at < ${t}`).count;
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(IDEMPOTENCY_TABLE)} WHERE user_id = ${user}`;
    return Number(row!.n);
  }

  async forget(user: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(IDEMPOTENCY_TABLE)} WHERE user_id = ${user}`).count;
  }
}
