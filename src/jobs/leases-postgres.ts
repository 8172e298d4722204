// Leases on background work in the shared PostgreSQL (D33), so that of several nodes one does a
// piece of work at a time, and a dead node's work is claimed by another once its lease expires.
// A claim locks the free leases it takes with FOR UPDATE SKIP LOCKED: two nodes claiming at
// once from the same work take different pieces, neither waiting on the other. PostgreSQL holds
// what the embedded store holds (jobs_leases): the work's name (a connector's id, a kind of
// work: no user content), the holder's node id, the expiry and the token.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { Lease, Leases } from "./leases";

export const LEASES_TABLE = "corpus_leases";

export const leasePgMigrations: PgMigration[] = [
  {
    id: `${LEASES_TABLE}-001-table`,
    up: (tx) =>
      tx.unsafe(`CREATE TABLE ${LEASES_TABLE} (
        name text PRIMARY KEY,
        holder text NOT NULL,
        expires_at bigint NOT NULL,
        token bigint NOT NULL
      )`),
  },
];

interface Row {
  name: string;
  holder: string;
  expires_at: string;
  token: string;
}

const leaseOf = (r: Row): Lease => ({ name: r.name, holder: r.holder, expiresAt: Number(r.expires_at), token: Number(r.token) });

export class PostgresLeases implements Leases {
  constructor(
    private readonly sql: postgres.Sql,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(names: readonly string[], holder: string, ttlMs: number, limit = names.length): Promise<Lease[]> {
    if (names.length === 0 || limit < 1) return [];
    const t = this.now();
    const table = this.sql(LEASES_TABLE);
    const list = names as string[];
    return this.sql.begin(async (tx) => {
      // Work never leased yet gets a free row, so that every claim locks rows alike.
      await tx`INSERT INTO ${table} (name, holder, expires_at, token)
        SELECT n, '', 0, 0 FROM unnest(${list}::text[]) AS n ON CONFLICT (name) DO NOTHING`;
      const rows = await tx<Row[]>`
        WITH free AS (
          SELECT name FROM ${table}
          WHERE name = ANY(${list}::text[]) AND expires_at <= ${t}
          ORDER BY array_position(${list}::text[], name)
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED
        )
        UPDATE ${table} AS l SET holder = ${holder}, expires_at = ${t + ttlMs}, token = l.token + 1
        FROM free WHERE l.name = free.name
        RETURNING l.name, l.holder, l.expires_at, l.token`;
      const order = new Map(names.map((n, i) => [n, i]));
      return rows.map(leaseOf).sort((a, b) => order.get(a.name)! - order.get(b.name)!);
    });
  }

  async renew(lease: Lease, ttlMs: number): Promise<Lease | undefined> {
    const expiresAt = this.now() + ttlMs;
    const changed = await this.sql`UPDATE ${this.sql(LEASES_TABLE)} SET expires_at = ${expiresAt}
      WHERE name = ${lease.name} AND holder = ${lease.holder} AND token = ${lease.token}`;
    return changed.count ? { ...lease, expiresAt } : undefined;
  }

  async release(lease: Lease): Promise<boolean> {
    // Freed, not deleted: its token goes on rising, so a lease of before never matches again.
    const changed = await this.sql`UPDATE ${this.sql(LEASES_TABLE)} SET holder = '', expires_at = 0
      WHERE name = ${lease.name} AND holder = ${lease.holder} AND token = ${lease.token}`;
    return changed.count > 0;
  }

  async holderOf(name: string): Promise<string | undefined> {
    const [row] = await this.sql<{ holder: string }[]>`SELECT holder FROM ${this.sql(LEASES_TABLE)}
      WHERE name = ${name} AND expires_at > ${this.now()}`;
    return row?.holder;
  }
}
