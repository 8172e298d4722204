// What making a user's data key ready costs per request (D33): the request guard, MCP and
// background work await UserKeys.ready(user) before sealing or opening anything of the user's.
// The embedded store has nothing to do (its key is read at once where used); the shared one reads
// the user's row again every time (one primary-key lookup) and unwraps it, so that a user deleted
// on another node is not served from this node's memory. Same run, same users:
//   - embedded: ready (nothing) then keyFor, one after another;
//   - PostgreSQL's floor: `SELECT 1` one after another (what any read per request pays);
//   - PostgreSQL, ready then keyFor, one after another (the latency);
//   - PostgreSQL, CONCURRENT in flight over the node's 8 connections (the throughput);
// printed as readies per second and the ratio to PostgreSQL's floor.
// The PostgreSQL is CORPUS_BENCH_PG_ADMIN_URL's (a superuser's URL), default the test servers'
// (scripts/test-servers.sh, started if they are not running); a database of its own, dropped after.
//   bun scripts/bench/user-keys-ready.ts
import { Database } from "bun:sqlite";
import { randomBytes } from "node:crypto";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords, userKeyPgMigrations } from "../../src/crypto/user-keys-postgres";
import { migrate } from "../../src/store/migrations";
import { openSharedDatabase } from "../../src/store/shared";
import { vectorDatabase } from "../../test/support/pg-vectors";
import { median } from "./lib";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 5_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 16);
const USERS = 1_000;

const masterKey = randomBytes(32);
const database = await vectorDatabase(process.env.CORPUS_BENCH_PG_ADMIN_URL);
const sql = await openSharedDatabase(database.url, userKeyPgMigrations);

try {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  const embedded = new UserKeys(db, masterKey);
  const shared = new UserKeys(new PostgresUserKeyRecords(sql), masterKey);
  const users = Array.from({ length: USERS }, (_, i) => `user-${i}`);
  for (const u of users) {
    embedded.keyFor(u);
    await shared.ready(u, { create: true });
  }

  const sequential = async (keys: UserKeys): Promise<number> => {
    const t = performance.now();
    for (let i = 0; i < REQUESTS; i++) {
      const u = users[i % USERS]!;
      const ready = keys.ready(u);
      if (ready) await ready;
      keys.keyFor(u, false);
    }
    return REQUESTS / ((performance.now() - t) / 1000);
  };
  const concurrent = async (keys: UserKeys): Promise<number> => {
    const t = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: CONCURRENT }, async () => {
        while (next < REQUESTS) {
          const u = users[next++ % USERS]!;
          await keys.ready(u);
          keys.keyFor(u, false);
        }
      }),
    );
    return REQUESTS / ((performance.now() - t) / 1000);
  };
  const roundTrips = async (): Promise<number> => {
    const t = performance.now();
    for (let i = 0; i < REQUESTS; i++) await sql`SELECT 1`;
    return REQUESTS / ((performance.now() - t) / 1000);
  };

  const figures = { embedded: [] as number[], pgFloor: [] as number[], pgSequential: [] as number[], pgConcurrent: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    figures.embedded.push(await sequential(embedded));
    figures.pgFloor.push(await roundTrips());
    figures.pgSequential.push(await sequential(shared));
    figures.pgConcurrent.push(await concurrent(shared));
  }
  const floor = median(figures.pgFloor);
  const line = (label: string, xs: number[]) => {
    const m = median(xs);
    console.log(
      `${label.padEnd(44)} ${Math.round(m).toString().padStart(9)} /s  ${(1e6 / m).toFixed(1).padStart(8)} µs each  ratio to the floor ${(m / floor).toFixed(3)}`,
    );
  };
  console.log(`users' data keys made ready then used (${USERS} users), median of ${ROUNDS} rounds of ${REQUESTS}`);
  line("embedded (nothing to wait for)", figures.embedded);
  line("PostgreSQL floor: SELECT 1, one after another", figures.pgFloor);
  line("PostgreSQL, one after another", figures.pgSequential);
  line(`PostgreSQL, ${CONCURRENT} in flight`, figures.pgConcurrent);
} finally {
  await sql.end();
  await database.drop();
}
