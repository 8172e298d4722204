// What reading revocation per request costs (D33): the hot path of every authenticated request
// is a header seen before, whose principal is checked for expiry and revocation. The embedded
// store answers from memory (refreshed from SQLite every 2 s); the shared one keeps no cache and
// reads PostgreSQL once per request (one statement, two primary-key lookups), so that a token
// revoked or a user deleted on another node is refused at once. Same run, same tokens:
//   - embedded: AuthService.authenticate over SqliteAuthStore, one after another;
//   - PostgreSQL's floor: `SELECT 1` one after another (what any read per request pays);
//   - PostgreSQL, one after another (a client waiting for each answer: the latency);
//   - PostgreSQL, CONCURRENT in flight over the node's 8 connections (the throughput);
// printed as verifications per second and the ratio to the embedded figure, with the statement's plan.
// The PostgreSQL is CORPUS_BENCH_PG_ADMIN_URL's (a superuser's URL), default the test servers'
// (scripts/test-servers.sh, started if they are not running); a database of its own, dropped after.
//   bun scripts/bench/token-revocation.ts
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { AuthService } from "../../src/auth/service";
import { authMigrations } from "../../src/auth/store";
import { authPgMigrations, NOT_BEFORE_TABLE, REVOKED_TABLE } from "../../src/auth/store-postgres";
import { loadConfig } from "../../src/config";
import { migrate } from "../../src/store/migrations";
import { openSharedDatabase } from "../../src/store/shared";
import { vectorDatabase } from "../../test/support/pg-vectors";
import { median, runTempDir } from "./lib";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 16);
const USERS = 200;

const dataDir = join(runTempDir("corpus-bench-tokens-"), "data");
mkdirSync(dataDir);
const config = loadConfig({ CORPUS_DATA_DIR: dataDir, CORPUS_LOG_LEVEL: "WARNING" });
const masterKey = randomBytes(32);

const database = await vectorDatabase(process.env.CORPUS_BENCH_PG_ADMIN_URL);
const sql = await openSharedDatabase(database.url, authPgMigrations);

try {
  const db = new Database(":memory:");
  migrate(db, authMigrations);
  const embedded = await AuthService.create(config, db, masterKey);
  const shared = await AuthService.create(config, db, masterKey, Date.now, sql);
  // Rows as a server in use has them: tokens of many users, some revoked, some users stamped
  // (the embedded store's fast path for "no stamp at all" is not what is measured).
  const headers: { embedded: string[]; shared: string[] } = { embedded: [], shared: [] };
  for (let i = 0; i < USERS; i++) {
    for (const [store, node] of [
      ["embedded", embedded],
      ["shared", shared],
    ] as const) {
      const kept = await node.issuer.issue(`user-${i}`, ["corpus:search"], 3600);
      const revoked = await node.issuer.issue(`user-${i}`, ["corpus:search"], 3600);
      await node.store.revokeToken(revoked.jti, revoked.expiresAt);
      if (i % 10 === 0) await node.store.revokeUser(`gone-${i}`);
      headers[store].push(`Bearer ${kept.token}`);
    }
  }
  // Each header verified once (jose, the signature): what follows is the hot path.
  for (const h of headers.embedded) await embedded.authenticate(h, "corpus:search");
  for (const h of headers.shared) await shared.authenticate(h, "corpus:search");

  const sequential = async (node: AuthService, list: string[]): Promise<number> => {
    const t = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      const answer = node.authenticate(list[i % list.length]!, "corpus:search");
      if (answer instanceof Promise) await answer;
    }
    return REQUESTS / ((performance.now() - t) / 1000);
  };
  const concurrent = async (node: AuthService, list: string[]): Promise<number> => {
    const t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        while (next < REQUESTS) {
          const i = next++;
          await node.authenticate(list[i % list.length]!, "corpus:search");
        }
      }),
    );
    return REQUESTS / ((performance.now() - t) / 1000);
  };

  // The floor of any read per request: a round trip of `SELECT 1` on the same connections.
  const roundTrips = async (): Promise<number> => {
    const t = performance.now();
    for (let i = 0; i < REQUESTS; i++) await sql`SELECT 1`;
    return REQUESTS / ((performance.now() - t) / 1000);
  };

  const figures = { embedded: [] as number[], pgFloor: [] as number[], pgSequential: [] as number[], pgConcurrent: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    figures.embedded.push(await sequential(embedded, headers.embedded));
    figures.pgFloor.push(await roundTrips());
    figures.pgSequential.push(await sequential(shared, headers.shared));
    figures.pgConcurrent.push(await concurrent(shared, headers.shared));
  }
  const base = median(figures.embedded);
  const line = (label: string, xs: number[]) => {
    const m = median(xs);
    console.log(
      `${label.padEnd(44)} ${Math.round(m).toString().padStart(9)} /s  ${(1e6 / m).toFixed(1).padStart(8)} µs each  ratio ${(m / base).toFixed(4)}`,
    );
  };
  console.log(`tokens verified (a header seen before: expiry and revocation), median of ${ROUNDS} rounds of ${REQUESTS}`);
  line("embedded (memory, refreshed from SQLite)", figures.embedded);
  line("PostgreSQL floor: SELECT 1, one after another", figures.pgFloor);
  line("PostgreSQL, one after another", figures.pgSequential);
  line(`PostgreSQL, ${CONCURRENT} in flight`, figures.pgConcurrent);
  const plan = await sql.unsafe(
    `EXPLAIN SELECT EXISTS (SELECT 1 FROM ${REVOKED_TABLE} WHERE jti = ANY($1::text[])) AS by_id,
      (SELECT not_before FROM ${NOT_BEFORE_TABLE} WHERE user_tag = $2) AS not_before`,
    [["a", "b"], "t"],
  );
  console.log("the statement's plan:");
  for (const row of plan) console.log(`  ${Object.values(row)[0]}`);
} finally {
  await sql.end();
  await database.drop();
}
