// Versioned PostgreSQL migrations (D33): two nodes starting at once on one database apply each
// migration once (the advisory lock), both start, and a third later applies nothing.
import { expect, test } from "bun:test";
import { join } from "node:path";
import postgres from "postgres";
import { PG_MIGRATIONS } from "../../src/migrations";
import { MIGRATIONS_LOCK, migratePostgres, PG_MIGRATIONS_TABLE, type PgMigration } from "../../src/store/postgres-migrations";
import { openSharedDatabase } from "../../src/store/shared";
import { VECTORS_TABLE, VectorStoreUnavailable, vectorMigrations } from "../../src/vectors/postgres";
import { vectorDatabase } from "../support/pg-vectors";
import { until } from "../support/wait";

const child = join(import.meta.dir, "../support/pg-migrate-child.ts");

test("two processes starting at once: each migration applied once, by one of them; both start", async () => {
  const db = await vectorDatabase();
  // The admin's one connection, reserved: the lock is held on it, and it reads who waits.
  const holder = await db.admin.reserve();
  try {
    // The lock held here, so that both wait on it and go at once when it is released.
    await holder`SELECT pg_advisory_lock(${MIGRATIONS_LOCK.toString()}::bigint)`;
    const nodes = [0, 1].map(() => Bun.spawn([process.execPath, child, db.url], { stdout: "pipe", stderr: "pipe" }));
    await until("both nodes waiting on the migrations' lock", async () => {
      const [row] = await holder<{ n: string }[]>`SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`;
      return Number(row!.n) === 2 ? true : undefined;
    });
    await holder`SELECT pg_advisory_unlock(${MIGRATIONS_LOCK.toString()}::bigint)`;
    holder.release();
    const outputs = await Promise.all(
      nodes.map(async (node) => {
        const [out, err, code] = await Promise.all([new Response(node.stdout).text(), new Response(node.stderr).text(), node.exited]);
        expect(err).toBe("");
        expect(code).toBe(0);
        return JSON.parse(out) as string[];
      }),
    );
    const all = [...vectorMigrations(VECTORS_TABLE).map((m) => m.id), "probe-001"];
    // One applied them all, the other none.
    expect(outputs.map((o) => o.length).sort()).toEqual([0, all.length]);
    expect(outputs.flat()).toEqual(all);
    expect((await db.admin`SELECT pid FROM migrate_probe`).length).toBe(1);
    const recorded = await db.admin<{ id: string }[]>`SELECT id FROM ${db.admin(PG_MIGRATIONS_TABLE)} ORDER BY id`;
    expect(recorded.map((r) => r.id)).toEqual([...all].sort());
    // A node starting later applies nothing.
    const later = Bun.spawnSync([process.execPath, child, db.url]);
    expect(later.exitCode).toBe(0);
    expect(JSON.parse(later.stdout.toString())).toEqual([]);
  } finally {
    await db.drop();
  }
}, 60_000);

test("a migration that fails leaves none of the batch applied, and the next start applies them all", async () => {
  const db = await vectorDatabase();
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    const table = "corpus_failing";
    const failing: PgMigration[] = [...vectorMigrations(table), { id: "failing-003", up: (tx) => tx`SELECT 1/0` }];
    await expect(migratePostgres(sql, failing)).rejects.toThrow("division by zero");
    expect((await db.admin`SELECT 1 FROM pg_tables WHERE tablename = ${table}`).length).toBe(0);
    expect((await db.admin`SELECT 1 FROM pg_tables WHERE tablename = ${PG_MIGRATIONS_TABLE}`).length).toBe(0);
    expect(await migratePostgres(sql, vectorMigrations(table))).toEqual(vectorMigrations(table).map((m) => m.id));
    expect((await db.admin`SELECT 1 FROM pg_tables WHERE tablename = ${table}`).length).toBe(1);
  } finally {
    await sql.end();
    await db.drop();
  }
}, 60_000);

test("a shared database without the vector extension is refused at start with what to do, before any table is made", async () => {
  const db = await vectorDatabase();
  try {
    await db.admin`DROP EXTENSION vector`;
    // Before, the archive's migration failed on: type "vector" does not exist.
    const opening = openSharedDatabase(db.url, PG_MIGRATIONS);
    expect(opening).rejects.toThrow(VectorStoreUnavailable);
    expect(opening).rejects.toThrow("CREATE EXTENSION vector");
    await opening.catch(() => {});
    const tables = await db.admin`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`;
    expect(tables.map((t) => t.tablename)).toEqual([]);
  } finally {
    await db.drop();
  }
});
