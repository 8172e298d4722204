// One suite, two stores (D33): leases on background work kept by the embedded database (the
// workers of one node) and by the shared PostgreSQL (the nodes of one database, a real server on
// loopback), with injected clocks. Then, PostgreSQL alone: claimants racing for the same work
// take disjoint pieces, and a node killed (SIGKILL) while it holds and renews a lease: the other
// gets nothing while the lease is renewed, and the work once it has expired.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { type Lease, type Leases, leaseMigrations, SqliteLeases } from "../../src/jobs/leases";
import { LEASES_TABLE, PostgresLeases } from "../../src/jobs/leases-postgres";
import { migrate } from "../../src/store/migrations";
import { LEASE_TTL_MS } from "../support/lease-holder-child";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";
import { until } from "../support/wait";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const TTL = 30_000;

interface Store {
  /** A claimant on the store, by `clock`. */
  claimant(clock: { t: number }): Leases;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("two claimants of the same work get none in common; what is held is not claimed again", async () => {
      const clock = { t: T0 };
      const [a, b] = [store().claimant(clock), store().claimant(clock)];
      const work = ["conn-1", "conn-2", "conn-3", "conn-4", "conn-5"];
      const first = await a.claim(work, "node-a", TTL, 2);
      expect(first.map((l) => l.name)).toEqual(["conn-1", "conn-2"]);
      expect(first.every((l) => l.holder === "node-a" && l.expiresAt === T0 + TTL)).toBe(true);
      const second = await b.claim(work, "node-b", TTL);
      expect(second.map((l) => l.name)).toEqual(["conn-3", "conn-4", "conn-5"]);
      expect(await a.claim(work, "node-a", TTL)).toEqual([]);
      expect(await b.holderOf("conn-1")).toBe("node-a");
      expect(await a.holderOf("conn-5")).toBe("node-b");
      expect(await a.holderOf("conn-9")).toBeUndefined();
      expect(await a.claim([], "node-a", TTL)).toEqual([]);
    });

    test("renewed, a lease outlives its first expiry; left, it expires and another takes it, with a new token; the first's renewal then fails", async () => {
      const clock = { t: T0 };
      const [a, b] = [store().claimant(clock), store().claimant(clock)];
      let [lease] = (await a.claim(["index-7"], "node-a", TTL)) as [Lease];
      clock.t += TTL - 1;
      lease = (await a.renew(lease, TTL))!;
      expect(lease.expiresAt).toBe(T0 + 2 * TTL - 1);
      clock.t += TTL - 1; // past the first expiry, within the renewed one
      expect(await b.claim(["index-7"], "node-b", TTL)).toEqual([]);
      clock.t += 1; // the renewed lease has expired: node-a stopped renewing
      const [taken] = (await b.claim(["index-7"], "node-b", TTL)) as [Lease];
      expect(taken).toMatchObject({ name: "index-7", holder: "node-b" });
      expect(taken.token).toBeGreaterThan(lease.token);
      expect(await a.renew(lease, TTL)).toBeUndefined();
      expect(await a.release(lease)).toBe(false);
      expect(await a.holderOf("index-7")).toBe("node-b");
    });

    test("released, the work is free at once; a lease of before never matches again", async () => {
      const clock = { t: T0 };
      const [a, b] = [store().claimant(clock), store().claimant(clock)];
      const [lease] = (await a.claim(["owed/webhooks"], "node-a", TTL)) as [Lease];
      expect(await a.release(lease)).toBe(true);
      expect(await a.holderOf("owed/webhooks")).toBeUndefined();
      const [again] = (await b.claim(["owed/webhooks"], "node-a", TTL)) as [Lease];
      expect(again.token).toBeGreaterThan(lease.token);
      expect(await a.release(lease)).toBe(false);
      expect(await a.renew(lease, TTL)).toBeUndefined();
      expect(await b.holderOf("owed/webhooks")).toBe("node-a");
    });
  });
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, leaseMigrations);
  return { claimant: (clock) => new SqliteLeases(db, () => clock.t), close: async () => db.close() };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return { claimant: (clock) => new PostgresLeases(shared.client(), () => clock.t), close: () => shared.drop() };
});

describe("PostgreSQL alone: nodes on one database", () => {
  let db: SharedDatabase;
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());

  test("four claimants racing for 40 pieces of work, 5 at a time, until none is left: each piece claimed once", async () => {
    const work = Array.from({ length: 40 }, (_, i) => `delivery-${i}`);
    const claimants = Array.from({ length: 4 }, (_, i) => ({ id: `node-${i}`, leases: new PostgresLeases(db.client()) }));
    const got = await Promise.all(
      claimants.map(async ({ id, leases }) => {
        const mine: string[] = [];
        for (;;) {
          const batch = await leases.claim(work, id, 60_000, 5);
          if (batch.length === 0) return mine;
          mine.push(...batch.map((l) => l.name));
        }
      }),
    );
    expect(got.flat().sort()).toEqual([...work].sort());
  });

  test("a node killed while it holds and renews a lease: nothing for the other while it renews, the work once it has expired", async () => {
    const child = Bun.spawn(
      [process.execPath, join(import.meta.dir, "../support/lease-holder-child.ts"), db.database.url, "index/conn-9", "node-a"],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const leases: Lease[] = [];
    const reader = child.stdout.getReader();
    let text = "";
    const readLeases = async () => {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        text += new TextDecoder().decode(value);
        const lines = text.split("\n");
        text = lines.pop()!;
        for (const line of lines) leases.push(JSON.parse(line) as Lease);
      }
    };
    const reading = readLeases();
    const other = new PostgresLeases(db.client());
    try {
      // Renewed past its first expiry: still node-a's, not claimable.
      await until("the child's lease renewed past its first expiry", () =>
        leases.length > 1 && leases.at(-1)!.expiresAt >= leases[0]!.expiresAt + LEASE_TTL_MS ? true : undefined,
      );
      expect(Date.now()).toBeGreaterThan(leases[0]!.expiresAt);
      expect(await other.claim(["index/conn-9"], "node-b", 60_000)).toEqual([]);
      expect(await other.holderOf("index/conn-9")).toBe("node-a");
      child.kill("SIGKILL");
      await child.exited;
      await reading;
      const last = leases.at(-1)!;
      const [taken] = await until("the dead node's lease taken", async () => {
        const claimed = await other.claim(["index/conn-9"], "node-b", 60_000);
        return claimed.length ? claimed : undefined;
      });
      // Not before the last renewal had expired; with a token the dead node's never had.
      expect(Date.now()).toBeGreaterThanOrEqual(last.expiresAt);
      expect(taken).toMatchObject({ holder: "node-b", token: last.token + 1 });
      const [row] = await db.database.admin`SELECT holder FROM ${db.database.admin(LEASES_TABLE)} WHERE name = 'index/conn-9'`;
      expect(row!.holder).toBe("node-b");
    } finally {
      child.kill("SIGKILL");
    }
  });
});
