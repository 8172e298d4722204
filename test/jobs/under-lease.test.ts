// Work under a lease (jobs/leases.ts underLease), on the embedded lease store with an injected
// clock and a lease of a few ms: renewed while the work runs, released after; not run while
// another holds it; and told (held() false, `lost`) once another took it while it stalled.
import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { leaseMigrations, SqliteLeases, underLease } from "../../src/jobs/leases";
import { migrate } from "../../src/store/migrations";
import { soon } from "../support/wait";

const TTL = 30;

function store() {
  const db = new Database(":memory:");
  migrate(db, leaseMigrations);
  const clock = { t: 1_000_000 };
  return { leases: new SqliteLeases(db, () => clock.t), clock };
}

test("the work runs under the lease, renewed while it runs and released after; another's claim meanwhile gets nothing", async () => {
  const { leases, clock } = store();
  let finish!: () => void;
  const running = underLease(
    leases,
    "index/alice/mail",
    "node-a",
    TTL,
    () => new Promise<string>((resolve) => (finish = () => resolve("done"))),
  );
  await soon("node-a holds the lease", () => leases.holderOf("index/alice/mail") === "node-a");
  const first = leases.claim(["index/alice/mail"], "node-b", TTL);
  expect(first).toEqual([]);
  // Renewed once the clock moved on (a renewal every TTL / 3 ms of the real clock)...
  let renewals = 0;
  const renew = leases.renew.bind(leases);
  leases.renew = (lease, ttl) => (renewals++, renew(lease, ttl));
  clock.t += TTL - 1;
  await soon("the lease renewed", () => renewals > 0);
  // ...so past its first expiry it is still node-a's: node-b's work does not run.
  clock.t += TTL - 1;
  expect(await underLease(leases, "index/alice/mail", "node-b", TTL, () => "ran")).toBeUndefined();
  finish();
  expect(await running).toEqual({ value: "done" });
  expect(leases.holderOf("index/alice/mail")).toBeUndefined();
  expect(await underLease(leases, "index/alice/mail", "node-b", TTL, () => "ran")).toEqual({ value: "ran" });
});

test("a holder whose lease another took while it stalled is told at its next renewal, and held() says so", async () => {
  const { leases, clock } = store();
  let lost = 0;
  let held!: () => boolean;
  let finish!: () => void;
  const running = underLease(
    leases,
    "owed/archive_vectors",
    "node-a",
    TTL,
    (h) => {
      held = h;
      return new Promise<void>((resolve) => (finish = resolve));
    },
    { lost: () => lost++ },
  );
  await soon("node-a holds the lease", () => held !== undefined);
  expect(held()).toBe(true);
  clock.t += 10 * TTL; // node-a stalled past its lease: node-b takes the work
  expect(leases.claim(["owed/archive_vectors"], "node-b", 10 * TTL)).toHaveLength(1);
  await soon("node-a's renewal found the lease taken", () => lost === 1);
  expect(held()).toBe(false);
  finish();
  await running;
  // Not released by node-a: still node-b's.
  expect(leases.holderOf("owed/archive_vectors")).toBe("node-b");
});
