// A node starting on a shared PostgreSQL (test/store/postgres-migrations.test.ts): applies the
// vectors' schema and a probe migration that counts how often it runs, then prints the ids it
// applied. Argument: the database URL.
import postgres from "postgres";
import { migratePostgres } from "../../src/store/postgres-migrations";
import { VECTORS_TABLE, vectorMigrations } from "../../src/vectors/postgres";

const sql = postgres(process.argv[2]!, { max: 1, onnotice: () => {} });
const applied = await migratePostgres(sql, [
  ...vectorMigrations(VECTORS_TABLE),
  {
    id: "probe-001",
    // Not idempotent: run twice, it would fail (the table exists) or count two.
    up: async (tx) => {
      await tx`CREATE TABLE migrate_probe (pid int NOT NULL)`;
      await tx`INSERT INTO migrate_probe VALUES (${process.pid})`;
    },
  },
]);
await sql.end();
console.log(JSON.stringify(applied));
