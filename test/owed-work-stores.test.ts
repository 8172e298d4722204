// Owed work on several nodes (D29, D33), one suite over both lease stores: two nodes' runners of
// owed work on one database (the embedded one: two claimants of one SQLite; the shared one: two
// connections to one PostgreSQL), a kind resumed by the node holding its lease, the other taking
// it up once that node's lease expired. Then, PostgreSQL alone: what one node owes (its webhook
// deliveries) is counted by every node, from the shared store.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { cryptoMigrations, UserKeys } from "../src/crypto/user-keys";
import type { OwedKind } from "../src/health/model";
import type { Leases } from "../src/jobs/leases";
import { PostgresLeases } from "../src/jobs/leases-postgres";
import { createLogger, memorySink } from "../src/log";
import { OWED_LEASE_MS, type OwedLeases, type OwedTask, OwedWork, owedLeaseName } from "../src/owed-work";
import { migrate } from "../src/store/migrations";
import { PostgresWebhookStore } from "../src/webhooks/store-postgres";
import { LEASE_STORES, type LeaseStore } from "./support/lease-stores";
import { type SharedDatabase, sharedDatabase, storeSuite } from "./support/shared-database";
import { soon, until } from "./support/wait";

/** A node's runner of owed work on the clock `clock`, checked by hand (`check`). */
function node(tasks: OwedTask[], leased: OwedLeases, clock: { t: number }) {
  let tick: (() => void) | undefined;
  const owed = new OwedWork(
    tasks,
    createLogger("INFO", memorySink().sink),
    () => clock.t,
    (fn) => ((tick = fn), {}),
    () => (tick = undefined),
    undefined,
    leased,
  );
  return { owed, check: () => tick!() };
}

function counter(kind: OwedKind, n: number, resume: () => unknown) {
  const task = { kind, n, resumed: 0, count: () => task.n, resume: () => (task.resumed++, resume()) };
  return task;
}

/** `leases` counting the claims answered, so that a test knows a node has asked. */
function counted(leases: Leases) {
  const asked = { claims: 0 };
  const wrapped: Leases = {
    claim: async (...args) => {
      const got = await leases.claim(...args);
      asked.claims++;
      return got;
    },
    renew: (...args) => leases.renew(...args),
    release: (...args) => leases.release(...args),
    holderOf: (name) => leases.holderOf(name),
  };
  return { leases: wrapped, asked };
}

function suite(name: string, open: () => Promise<LeaseStore>) {
  storeSuite(name, open, (store) => {
    test("a kind is resumed by the node holding its lease, not by the other; once that node's lease expired, the other takes it up", async () => {
      const clock = { t: 1_000_000 };
      let finish!: () => void;
      // Node A resumes and never ends (a node that died mid-work: it renews no more).
      const onA = counter("archive_vectors", 5, () => new Promise<void>((resolve) => (finish = resolve)));
      const onB = counter("archive_vectors", 5, () => undefined);
      const leasesB = counted(store().leases(clock));
      const a = node([onA], { leases: store().leases(clock), holder: "node-a" }, clock);
      const b = node([onB], { leases: leasesB.leases, holder: "node-b" }, clock);
      a.owed.start();
      await soon("node-a resumed the kind", () => onA.resumed === 1);
      expect(await store().leases(clock).holderOf(owedLeaseName("archive_vectors"))).toBe("node-a");
      b.owed.start();
      await soon("node-b asked for the lease", () => leasesB.asked.claims === 1);
      expect(onB.resumed).toBe(0);
      // B finds the kind stuck at its check: still A's lease, still not B's to do.
      clock.t += OWED_LEASE_MS - 1;
      b.check();
      await soon("node-b asked again", () => leasesB.asked.claims === 2);
      expect(onB.resumed).toBe(0);
      clock.t += 1; // A's lease has expired
      b.check();
      await soon("node-b took the kind up", () => onB.resumed === 1);
      // Done, B gave the lease back.
      await until("node-b's lease released", async () =>
        (await store().leases(clock).holderOf(owedLeaseName("archive_vectors"))) === undefined ? true : undefined,
      );
      finish();
      a.owed.stop();
      b.owed.stop();
    });
  });
}

for (const [name, open] of LEASE_STORES) suite(name, open);

describe("PostgreSQL alone: what a node owes is counted by every node", () => {
  let db: SharedDatabase;
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());

  test("webhook deliveries queued on node A are owed work on node B, and no longer once delivered", async () => {
    const keysDb = new Database(":memory:");
    migrate(keysDb, cryptoMigrations);
    const keys = new UserKeys(keysDb, randomBytes(32));
    const master = randomBytes(32);
    const [onA, onB] = [db.client(), db.client()].map((sql) => new PostgresWebhookStore(sql, keys, master));
    const owedOn = (webhooks: PostgresWebhookStore, holder: string) =>
      node([{ kind: "webhook_deliveries", count: () => webhooks.pending() }], { leases: new PostgresLeases(db.client()), holder }, { t: 0 })
        .owed;
    const [a, b] = [owedOn(onA!, "node-a"), owedOn(onB!, "node-b")];
    for (let i = 0; i < 3; i++)
      await onA!.enqueue("user.deleted", { user_id: `u-${i}` }, [{ url: "https://hooks.example/in", secret: "s" }]);
    expect(await b.counts()).toEqual({ webhook_deliveries: 3 });
    expect(await a.counts()).toEqual({ webhook_deliveries: 3 });
    for (const claim of await onB!.claimDue(10, "node-b", 30_000)) await onB!.delivered(claim);
    expect(await a.counts()).toEqual({ webhook_deliveries: 0 });
  });
});
