// Versioned schema migrations of a shared PostgreSQL (D33): each room lists its own, by stable
// ids, as with the embedded store (migrations.ts). Several nodes may start at once on one
// database: whichever takes the advisory lock first applies what is missing, each migration
// once, in one transaction with its record; the others wait on the lock, then find them applied.
// A node of an older version, running meanwhile, sees tables only added to (a migration that
// removes what a running version reads waits for that version's nodes to be gone).
import type postgres from "postgres";

export interface PgMigration {
  /** Unique and stable, e.g. "corpus_vectors-001-table"; never renamed once released. */
  id: string;
  up(tx: postgres.TransactionSql): Promise<unknown>;
}

/** Which migrations a database has applied, and when. */
export const PG_MIGRATIONS_TABLE = "corpus_schema_migrations";

/** The advisory lock migrations are applied under (any fixed number: "corpus migrate"). */
export const MIGRATIONS_LOCK = 0x636f7270_756d_6967n;

/**
 * Applies the migrations `sql`'s database has not applied yet, in their order, under the
 * advisory lock (pg_advisory_xact_lock: released with the transaction, so a node that dies
 * holding it frees it), all in one transaction: either all are applied or none. The ids applied.
 */
export async function migratePostgres(sql: postgres.Sql, migrations: readonly PgMigration[]): Promise<string[]> {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (ids.has(m.id)) throw new Error(`migration ${m.id} is listed twice`);
    ids.add(m.id);
  }
  return sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATIONS_LOCK.toString()}::bigint)`;
    await tx.unsafe(`CREATE TABLE IF NOT EXISTS ${PG_MIGRATIONS_TABLE} (
      id text PRIMARY KEY,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const done = new Set((await tx<{ id: string }[]>`SELECT id FROM ${tx(PG_MIGRATIONS_TABLE)}`).map((r) => r.id));
    const applied: string[] = [];
    for (const m of migrations) {
      if (done.has(m.id)) continue;
      await m.up(tx);
      await tx`INSERT INTO ${tx(PG_MIGRATIONS_TABLE)} (id) VALUES (${m.id})`;
      applied.push(m.id);
    }
    return applied;
  });
}
