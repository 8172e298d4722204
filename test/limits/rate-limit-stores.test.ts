// One suite, two stores (D33): the per-user windows counted by the embedded store (memory,
// written behind to SQLite) and by the shared one (PostgreSQL, a real server on loopback). Then,
// PostgreSQL alone: two nodes with connections of their own, counting one user at once, give no
// more than the limit between them.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BackgroundGuard } from "../../src/jobs/guard";
import { type LimitedEndpoint, limitMigrations, RateLimiter, type RateLimits } from "../../src/limits/rate-limit";
import { PostgresRateLimiter } from "../../src/limits/rate-limit-postgres";
import { createLogger, memorySink } from "../../src/log";
import { migrate } from "../../src/store/migrations";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

const LIMITS = {
  query: { minute: 3, day: 5 },
  deep_search: { minute: 10, day: 100 },
  delete: { minute: 1, day: 1 },
  connectors: { minute: 2, day: 3 },
  webhooks: { minute: 2, day: 9 },
};
const T0 = Date.UTC(2026, 10, 22, 10, 0, 30); // 30 s into a minute
const guard = () => new BackgroundGuard(createLogger("INFO", memorySink().sink));
const remaining = (d: { remaining: Record<string, string> }) => [
  d.remaining["x-ratelimit-remaining-minute"],
  d.remaining["x-ratelimit-remaining-day"],
];

interface Store {
  /** A node counting on the store by `clock` (the embedded store: the one process, started again on the same database). */
  node(clock: { t: number }): RateLimits;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("counted to the limit per user and endpoint, refused past it until the window ends; the day goes on", async () => {
      const clock = { t: T0 };
      const l = store().node(clock);
      const hit = async (user: string, endpoint: LimitedEndpoint = "query") => l.hit(user, endpoint);
      expect(remaining(await hit("ann"))).toEqual(["2", "4"]);
      expect(remaining(await hit("ann"))).toEqual(["1", "3"]);
      const third = await hit("ann");
      expect(third.fixed).toEqual({
        "x-ratelimit-limit-minute": "3",
        "x-ratelimit-reset-minute": String((T0 - 30_000 + 60_000) / 1000),
        "x-ratelimit-limit-day": "5",
        "x-ratelimit-reset-day": String(Date.UTC(2026, 10, 23) / 1000),
      });
      const refused = await hit("ann");
      expect(refused).toMatchObject({ allowed: false, retryAfter: 30 });
      expect(refused.counted).toBeUndefined();
      expect(remaining(refused)).toEqual(["0", "2"]);
      // Another user, another endpoint: windows of their own.
      expect((await hit("amy")).allowed).toBe(true);
      expect(remaining(await hit("ann", "deep_search"))).toEqual(["9", "99"]);
      expect(remaining(await l.peek("ann", "query"))).toEqual(["0", "2"]);

      clock.t += 30_000; // the next minute: a new window, the day's count goes on
      expect(remaining(await hit("ann"))).toEqual(["2", "1"]);
      expect(remaining(await hit("ann"))).toEqual(["1", "0"]);
      const spent = await hit("ann");
      // The day is spent: asked again when it ends, not the minute.
      expect(spent).toMatchObject({ allowed: false, retryAfter: (Date.UTC(2026, 10, 23) - clock.t) / 1000 });
      clock.t -= 120_000; // a clock set back: its window starts afresh
      expect(remaining(await l.peek("ann", "query"))).toEqual(["3", "0"]);
      await l.stop();
    });

    test("a refund gives a request back in the windows it was counted in, never below zero, never in a later window", async () => {
      const clock = { t: T0 };
      const l = store().node(clock);
      const first = await l.hit("bea", "connectors");
      const second = await l.hit("bea", "connectors");
      expect((await l.hit("bea", "connectors")).allowed).toBe(false);
      // Answered at once: as the request saw it, with its count given back.
      expect(remaining(l.refund("bea", "connectors", second))).toEqual(["1", "2"]);
      await l.flush();
      expect(remaining(await l.peek("bea", "connectors"))).toEqual(["1", "2"]);
      clock.t += 60_000; // the next minute: the first's minute is over, its day is not
      l.refund("bea", "connectors", first);
      await l.flush();
      expect(remaining(await l.peek("bea", "connectors"))).toEqual(["2", "3"]);
      l.refund("bea", "connectors", first);
      await l.flush();
      expect(remaining(await l.peek("bea", "connectors"))).toEqual(["2", "3"]);
      // A refused request was not counted: nothing to give back.
      expect(remaining(l.refund("bea", "connectors", await l.peek("bea", "connectors")))).toEqual(["2", "3"]);
      await l.stop();
    });

    test("a node started again keeps the day's count; forget removes every window of the user, no other's", async () => {
      const clock = { t: T0 };
      const first = store().node(clock);
      for (let i = 0; i < 3; i++) await first.hit("cal", "query");
      await first.hit("cal", "deep_search");
      await first.hit("cid", "query");
      await first.stop();
      clock.t += 120_000;
      const again = store().node(clock);
      expect(remaining(await again.peek("cal", "query"))).toEqual(["3", "2"]);
      expect(await again.rowsOf("cal")).toBeGreaterThan(0);
      expect(await again.forget("cal")).toBeGreaterThan(0);
      expect(await again.rowsOf("cal")).toBe(0);
      expect(remaining(await again.peek("cal", "query"))).toEqual(["3", "5"]);
      expect(remaining(await again.peek("cid", "query"))).toEqual(["3", "4"]);
      await again.stop();
    });
  });
}

suite("embedded (memory, written behind to SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, limitMigrations);
  return { node: (clock) => new RateLimiter(db, LIMITS, () => clock.t), close: async () => db.close() };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return { node: (clock) => new PostgresRateLimiter(shared.client(), LIMITS, () => clock.t, guard()), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());

  test("counting one user at once, two nodes give no more than the limit between them, in both windows", async () => {
    const clock = { t: T0 };
    const limits = { ...LIMITS, query: { minute: 20, day: 30 } };
    const a = new PostgresRateLimiter(db.client(), limits, () => clock.t, guard());
    const b = new PostgresRateLimiter(db.client(), limits, () => clock.t, guard());
    // 40 at once from each: every request races the others for the last ones of the window.
    const all = await Promise.all(Array.from({ length: 80 }, (_, i) => (i % 2 ? a : b).hit("dee", "query")));
    expect(all.filter((d) => d.allowed).length).toBe(20);
    expect(remaining(await b.peek("dee", "query"))).toEqual(["0", "10"]);
    clock.t += 60_000; // the next minute: the day has 10 left, shared too
    const next = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).hit("dee", "query")));
    expect(next.filter((d) => d.allowed).length).toBe(10);
    expect(remaining(await a.peek("dee", "query"))).toEqual(["10", "0"]);
    // A refund on one node is seen by the other.
    const counted = await a.hit("eli", "query");
    a.refund("eli", "query", counted);
    await a.flush();
    expect(remaining(await b.peek("eli", "query"))).toEqual(["20", "30"]);
  });

  test("PostgreSQL holds the user id, the endpoint, windows and counts: what the embedded store holds at rest", async () => {
    const l = new PostgresRateLimiter(db.sql, LIMITS, () => T0, guard());
    await l.hit("fay", "webhooks");
    const rows = await db.database.admin`SELECT * FROM corpus_limits_windows WHERE user_id = 'fay'`;
    expect(rows.map((r) => Object.keys(r).sort())).toEqual([
      ["day_count", "day_start", "endpoint", "minute_count", "minute_start", "user_id"],
    ]);
  });
});
