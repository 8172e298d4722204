// The /mcp per-address buckets in the shared PostgreSQL (D33), so that nodes behind one load
// balancer give an address no more than its bucket between them. A token is taken, or refused,
// by one upsert whose condition is a token left after the refill, the row locked while it is
// judged. A bucket that has refilled holds nothing worth keeping: sweep() deletes those, and the
// least recently used past the most kept, so a stream of new addresses cannot grow the table
// without end. PostgreSQL holds what the embedded store holds at rest (limits_ip_buckets): the
// address (an IPv6 one by its /64), the tokens and when they were counted.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { type BucketDecision, bucketDecision, DEFAULT_MAX_BUCKETS, type IpBuckets } from "./token-bucket";

export const BUCKETS_TABLE = "corpus_ip_buckets";

export const bucketPgMigrations: PgMigration[] = [
  {
    id: `${BUCKETS_TABLE}-001-table`,
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${BUCKETS_TABLE} (
        ip text PRIMARY KEY,
        tokens double precision NOT NULL,
        updated_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${BUCKETS_TABLE}_updated ON ${BUCKETS_TABLE} (updated_at)`);
    },
  },
];

export class PostgresIpBuckets implements IpBuckets {
  private readonly perMs: number;

  constructor(
    private readonly sql: postgres.Sql,
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = DEFAULT_MAX_BUCKETS,
  ) {
    this.perMs = perMinute / 60_000;
  }

  async take(ip: string): Promise<BucketDecision> {
    const t = this.now();
    const table = this.sql(BUCKETS_TABLE);
    // The bucket refilled to `t`, at most full: what the token is taken from.
    const refilled = this.sql`LEAST(${this.perMinute}::float8, b.tokens + (${t}::bigint - b.updated_at) * ${this.perMs}::float8)`;
    const [row] = await this.sql<{ tokens: number; taken: boolean }[]>`
      WITH taken AS (
        INSERT INTO ${table} AS b (ip, tokens, updated_at) VALUES (${ip}, ${this.perMinute - 1}, ${t})
        ON CONFLICT (ip) DO UPDATE SET tokens = ${refilled} - 1, updated_at = EXCLUDED.updated_at
        WHERE ${refilled} >= 1
        RETURNING tokens, true AS taken
      )
      SELECT tokens, taken FROM taken
      UNION ALL
      SELECT ${refilled} AS tokens, false AS taken FROM ${table} AS b WHERE b.ip = ${ip} AND NOT EXISTS (SELECT 1 FROM taken)`;
    // No row: refused by a bucket this statement's snapshot did not see yet (another node's, just made): nearly empty.
    return bucketDecision(row?.taken === true, row?.tokens ?? 0, t, this.perMinute, this.perMs);
  }

  /** Every token is written as it is taken. */
  flush(): void {}

  async sweep(): Promise<number> {
    const t = this.now();
    const table = this.sql(BUCKETS_TABLE);
    const full = await this
      .sql`DELETE FROM ${table} WHERE tokens + (${t}::bigint - updated_at) * ${this.perMs}::float8 >= ${this.perMinute}`;
    const over = await this.sql`DELETE FROM ${table} WHERE ip IN (
      SELECT ip FROM ${table} ORDER BY updated_at DESC OFFSET ${this.maxEntries})`;
    return full.count + over.count;
  }

  stop(): void {}
}
