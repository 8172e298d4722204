// Nothing grows without end while the service runs (issue 13, item 11): one unref'd timer
// sweeps refilled per-IP buckets, expired idempotency records and expired token rows, judged
// by the services' clock. Before, they were purged only at shutdown (or, for buckets, never).
import { describe, expect, test } from "bun:test";
import type { TokenBuckets } from "../src/limits/token-bucket";
import { createLogger, memorySink } from "../src/log";
import { SWEEP_INTERVAL_MS, Sweeps } from "../src/sweeps";
import { testApp, tokenFor } from "./helpers";

function clock(t = 1_800_000_000_000) {
  return { now: () => t, advance: (ms: number) => (t += ms) };
}

const count = (db: { query(sql: string): { get(): unknown } }, table: string) =>
  (db.query(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;

describe("Sweeps", () => {
  test("starts one unref'd timer every SWEEP_INTERVAL_MS; a failing task is logged and the others still run; stop cancels it", () => {
    const scheduled: Array<{ fn: () => void; ms: number; unrefd: boolean }> = [];
    const cancelled: unknown[] = [];
    const logs = memorySink();
    const ran: string[] = [];
    const sweeps = new Sweeps(
      [
        {
          name: "broken",
          run: () => {
            throw new Error("database is locked");
          },
        },
        { name: "fine", run: () => (ran.push("fine"), 3) },
      ],
      createLogger("DEBUG", logs.sink),
      (fn, ms) => {
        const entry = { fn, ms, unrefd: false };
        scheduled.push(entry);
        return { unref: () => (entry.unrefd = true) };
      },
      (t) => cancelled.push(t),
    );
    sweeps.start();
    sweeps.start();
    expect(scheduled.map((s) => [s.ms, s.unrefd])).toEqual([[SWEEP_INTERVAL_MS, true]]);
    scheduled[0]!.fn();
    expect(ran).toEqual(["fine"]);
    expect(logs.records()).toEqual([
      expect.objectContaining({ level: "WARNING", task: "broken", error: "database is locked" }),
      expect.objectContaining({ level: "DEBUG", message: "swept", fine: 3 }),
    ]);
    sweeps.stop();
    expect(cancelled).toHaveLength(1);
  });
});

describe("the running service sweeps (createServices)", () => {
  test("20,000 client addresses, a minute later: no bucket left in memory or in the database", async () => {
    const c = clock();
    const { services, db } = await testApp({}, c.now);
    for (let i = 0; i < 20_000; i++) services.buckets.take(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    // One of them drained, then never seen again: kept by the old flush forever.
    for (let i = 0; i < 100; i++) services.buckets.take("203.0.113.9");
    services.buckets.flush();
    expect(count(db, "limits_ip_buckets")).toBeGreaterThan(0);
    c.advance(61_000);
    services.sweeps.run();
    // The embedded store: buckets held in memory too.
    expect((services.buckets as TokenBuckets).size).toBe(0);
    expect(count(db, "limits_ip_buckets")).toBe(0);
    await services.close();
  });

  test("idempotency records older than 24 hours go while the service runs; a fresh one stays", async () => {
    const c = clock();
    const { services, db } = await testApp({}, c.now);
    const claim = (key: string) => ({ user: "alice", endpoint: "POST /v1/query", key });
    services.idempotency.begin(claim("old"), { q: "a" });
    services.idempotency.complete(claim("old"), 200, "{}");
    c.advance(24 * 3600_000 - 60_000);
    services.idempotency.begin(claim("new"), { q: "b" });
    services.idempotency.complete(claim("new"), 200, "{}");
    c.advance(2 * 60_000);
    expect(services.sweeps.run()).toMatchObject({ idempotency_records: 1 });
    expect(count(db, "idempotency_records")).toBe(1);
    await services.close();
  });

  test("rows of expired tokens, revoked or not, go while the service runs; a valid one stays", async () => {
    const c = clock();
    const { services, db } = await testApp({}, c.now);
    await tokenFor(services, "alice", ["corpus:search"], 60);
    const revoked = await services.auth.issuer.issue("alice", ["corpus:search"], 60);
    services.auth.store.revokeToken(revoked.jti, revoked.expiresAt);
    await tokenFor(services, "bob", ["corpus:search"], 3600);
    expect([count(db, "auth_tokens"), count(db, "auth_revoked_tokens")]).toEqual([3, 1]);
    c.advance(2 * 60_000);
    services.sweeps.run();
    expect([count(db, "auth_tokens"), count(db, "auth_revoked_tokens")]).toEqual([1, 0]);
    await services.close();
  });
});
