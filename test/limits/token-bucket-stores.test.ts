// One suite, two stores (D33): the /mcp per-address buckets kept by the embedded store (memory,
// written behind to SQLite) and by the shared PostgreSQL (a real server on loopback). Then,
// PostgreSQL alone: two nodes taking from one address's bucket at once give no more than it holds.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bucketMigrations, type IpBuckets, TokenBuckets } from "../../src/limits/token-bucket";
import { BUCKETS_TABLE, PostgresIpBuckets } from "../../src/limits/token-bucket-postgres";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

const T0 = 1_800_000_000_000;

interface Store {
  node(clock: { t: number }, perMinute: number, maxEntries?: number): IpBuckets;
  /** Buckets kept at rest (the embedded store: in the database, once flushed). */
  stored(): Promise<number>;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("60 at once pass, the 61st waits a second; the bucket refills at 1 per second; each address its own", async () => {
      const clock = { t: T0 };
      const b = store().node(clock, 60);
      for (let i = 0; i < 60; i++) expect((await b.take("10.0.0.1")).allowed).toBe(true);
      const over = await b.take("10.0.0.1");
      expect(over).toMatchObject({ allowed: false, limit: 60, remaining: 0, retryAfter: 1 });
      expect(over.reset).toBe(Math.ceil((clock.t + 60_000) / 1000));
      expect((await b.take("10.0.0.2")).allowed).toBe(true);
      clock.t += 1000;
      expect((await b.take("10.0.0.1")).allowed).toBe(true);
      expect((await b.take("10.0.0.1")).allowed).toBe(false);
      clock.t += 30_000;
      expect((await b.take("10.0.0.1")).remaining).toBe(29);
      await b.stop();
    });

    test("refilled buckets are swept, emptied ones kept", async () => {
      const clock = { t: T0 + 3_600_000 };
      const b = store().node(clock, 10);
      await b.take("192.0.2.1");
      for (let i = 0; i < 10; i++) await b.take("192.0.2.2");
      await b.flush();
      clock.t += 30_000; // .1 has refilled, .2 has 5 of 10
      await b.sweep();
      await b.flush();
      expect(await store().stored()).toBe(1);
      expect((await b.take("192.0.2.2")).remaining).toBe(4);
      await b.stop();
    });
  });
}

suite("embedded (memory, written behind to SQLite)", async () => {
  const db = openDatabase(tempDir(), bucketMigrations);
  return {
    node: (clock, perMinute, maxEntries) => new TokenBuckets(db, perMinute, () => clock.t, maxEntries),
    stored: async () => db.query<{ n: number }, []>("SELECT count(*) AS n FROM limits_ip_buckets").get()!.n,
    close: async () => db.close(),
  };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return {
    node: (clock, perMinute, maxEntries) => new PostgresIpBuckets(shared.client(), perMinute, () => clock.t, maxEntries),
    stored: async () => Number((await shared.database.admin`SELECT count(*) AS n FROM ${shared.database.admin(BUCKETS_TABLE)}`)[0]!.n),
    close: () => shared.drop(),
  };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());

  test("taking from one address's bucket at once, two nodes give no more than it holds", async () => {
    const [a, b] = [new PostgresIpBuckets(db.client(), 20, () => T0), new PostgresIpBuckets(db.client(), 20, () => T0)];
    const all = await Promise.all(Array.from({ length: 60 }, (_, i) => (i % 2 ? a : b).take("198.51.100.7")));
    expect(all.filter((d) => d.allowed).length).toBe(20);
  });

  test("past the most kept, the least recently used go at the sweep", async () => {
    const clock = { t: T0 };
    const b = new PostgresIpBuckets(db.sql, 10, () => clock.t, 3);
    for (const ip of ["203.0.113.1", "203.0.113.2", "203.0.113.3", "203.0.113.4", "203.0.113.5"]) {
      await b.take(ip);
      clock.t += 1;
    }
    // The earlier test's bucket (made first, at T0) is the least recent of all: it goes too.
    expect(await b.sweep()).toBe(3);
    const left = await db.database.admin<
      { ip: string }[]
    >`SELECT ip FROM ${db.database.admin(BUCKETS_TABLE)} WHERE ip LIKE '203.0.113.%' ORDER BY ip`;
    expect(left.map((r) => r.ip)).toEqual(["203.0.113.3", "203.0.113.4", "203.0.113.5"]);
  });
});
