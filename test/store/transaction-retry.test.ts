// A shared room's transaction chosen as a deadlock's victim is run again (D33, issue 37): two
// transactions lock two rows in opposite orders, PostgreSQL rolls one back (40P01), and both
// writes are done, none is the caller's error (a question's 500).
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { atomically } from "../../src/store/shared";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

setDefaultTimeout(60_000);

let shared: SharedDatabase;
beforeAll(async () => {
  shared = await sharedDatabase();
  await shared.sql`CREATE TABLE lock_cycle (id integer PRIMARY KEY, n integer NOT NULL)`;
  await shared.sql`INSERT INTO lock_cycle (id, n) VALUES (1, 0), (2, 0)`;
});
afterAll(() => shared?.drop());

test("of two transactions locking two rows in opposite orders, the deadlock's victim is run again and both commit", async () => {
  // Both first updates done before either second one: the lock cycle is certain on the first attempts.
  let arrived = 0;
  let bothArrived: () => void = () => {};
  const barrier = new Promise<void>((resolve) => {
    bothArrived = resolve;
  });
  const attempts = [0, 0];
  const crossing = (who: 0 | 1, first: number, second: number) =>
    atomically(shared.sql, async (tx) => {
      attempts[who]!++;
      await tx`UPDATE lock_cycle SET n = n + 1 WHERE id = ${first}`;
      if (attempts[who] === 1) {
        if (++arrived === 2) bothArrived();
        await barrier;
      }
      await tx`UPDATE lock_cycle SET n = n + 1 WHERE id = ${second}`;
    });
  const outcomes = await Promise.allSettled([crossing(0, 1, 2), crossing(1, 2, 1)]);
  expect(outcomes.map((o) => (o.status === "rejected" ? String((o.reason as { code?: string }).code) : "done"))).toEqual(["done", "done"]);
  // One of them ran twice: it was the victim.
  expect(attempts.toSorted()).toEqual([1, 2]);
  const rows = await shared.sql<{ id: number; n: number }[]>`SELECT id, n FROM lock_cycle ORDER BY id`;
  expect(rows.map((r) => r.n)).toEqual([2, 2]);
});
