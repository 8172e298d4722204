// A database of the test PostgreSQL made fresh for a test file, with the `vector` extension
// (pgvector, built by scripts/test-needs.ts) created by the admin, as an operator would, and
// owned by a role of its own that is no superuser: the rights a corpus node has. Dropped at the end.
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { testServers } from "./servers";

export interface VectorDatabase {
  /** The node role's URL, as CORPUS_DATABASE_URL would name it. */
  url: string;
  /** The admin's connection to that database (reading what PostgreSQL holds). */
  admin: postgres.Sql;
  drop(): Promise<void>;
}

/** `adminUrl`: a superuser's URL (a bench's CORPUS_BENCH_PG_ADMIN_URL), default the test servers'. */
export async function vectorDatabase(adminUrlOf?: string): Promise<VectorDatabase> {
  const pgAdminUrl = adminUrlOf ?? (await testServers()).pgAdminUrl;
  const name = `corpus_vectors_${randomBytes(6).toString("hex")}`;
  const password = randomBytes(12).toString("hex");
  const server = postgres(pgAdminUrl, { max: 1, onnotice: () => {} });
  await server.unsafe(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
  await server.unsafe(`CREATE DATABASE ${name} OWNER ${name}`);
  const adminUrl = new URL(pgAdminUrl);
  adminUrl.pathname = `/${name}`;
  const admin = postgres(adminUrl.href, { max: 1, onnotice: () => {} });
  await admin`CREATE EXTENSION vector`;
  const url = new URL(adminUrl);
  url.username = name;
  url.password = password;
  return {
    url: url.href,
    admin,
    drop: async () => {
      await admin.end();
      await server.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await server.unsafe(`DROP ROLE IF EXISTS ${name}`);
      await server.end();
    },
  };
}
