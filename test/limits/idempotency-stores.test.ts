// One suite, two stores (D33): Idempotency-Key records (D11) kept by the embedded database and by
// the shared PostgreSQL (a real server on loopback), through the one IdempotencyStore that keys and
// seals them. Then, PostgreSQL alone: duplicates racing on two nodes, exactly one runs; what
// PostgreSQL holds is keyed and sealed, as the embedded store holds it at rest; and a user's records erased inside a deletion's transaction.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { BackgroundGuard } from "../../src/jobs/guard";
import {
  IDEMPOTENCY_TTL_MS,
  type IdempotencyOutcome,
  type IdempotencyRecords,
  IdempotencyStore,
  idempotencyMigrations,
  SqliteIdempotencyRecords,
} from "../../src/limits/idempotency";
import { IDEMPOTENCY_TABLE, PostgresIdempotencyRecords } from "../../src/limits/idempotency-postgres";
import { createLogger, memorySink } from "../../src/log";
import { migrate } from "../../src/store/migrations";
import { inTransaction } from "../../src/store/shared";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";

const RUNNING_TIMEOUT_MS = 60_000;
const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const ENDPOINT = "POST /v1/query";

/** The users' data keys (a room not yet shared): one for every node of a test. */
function userKeys(): UserKeys {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  return new UserKeys(db, randomBytes(32));
}

interface Store {
  records(): IdempotencyRecords;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  describe(name, () => {
    let store: Store;
    const keys = userKeys();
    const clock = { t: T0 };
    let idem: IdempotencyStore;
    let guard: BackgroundGuard;
    beforeAll(async () => {
      store = await open();
      guard = new BackgroundGuard(createLogger("INFO", memorySink().sink));
      idem = new IdempotencyStore(store.records(), keys, RUNNING_TIMEOUT_MS, () => clock.t, guard);
    });
    afterAll(() => store.close());
    const begin = async (user: string, key: string, body: unknown): Promise<IdempotencyOutcome> =>
      idem.begin({ user, endpoint: ENDPOINT, key }, body);
    test("the first claims; a duplicate while it runs is 409 with Retry-After; once done, replayed byte for byte; another body is 409", async () => {
      expect(await begin("ann", "k1", { q: "fuel" })).toEqual({ kind: "claimed" });
      expect(await begin("ann", "k1", { q: "fuel" })).toMatchObject({ kind: "conflict", retryAfterSeconds: 1 });
      idem.complete({ user: "ann", endpoint: ENDPOINT, key: "k1" }, 200, '{"answer": "ü 42"}');
      const replay = await eventually(
        () => begin("ann", "k1", { q: "fuel" }),
        (o) => o.kind === "replay",
      );
      expect(replay).toEqual({ kind: "replay", status: 200, body: '{"answer": "ü 42"}' });
      expect(await begin("ann", "k1", { q: "other" })).toMatchObject({ kind: "conflict", reason: expect.stringContaining("different") });
      // Another user's key of the same name, another endpoint: records of their own.
      expect(await begin("amy", "k1", { q: "fuel" })).toEqual({ kind: "claimed" });
      expect(await idem.begin({ user: "ann", endpoint: "POST /v1/deep_search", key: "k1" }, { q: "fuel" })).toEqual({ kind: "claimed" });
    });

    test("a released claim runs again; one abandoned past the running timeout is claimed again, a done one lasts 24 hours", async () => {
      expect(await begin("bea", "k2", { q: 1 })).toEqual({ kind: "claimed" });
      idem.release({ user: "bea", endpoint: ENDPOINT, key: "k2" });
      await eventually(
        () => begin("bea", "k2", { q: 1 }),
        (o) => o.kind === "claimed",
      );
      // Left running (a crash): claimed again once the running timeout has passed, not before.
      clock.t += RUNNING_TIMEOUT_MS;
      expect((await begin("bea", "k2", { q: 1 })).kind).toBe("conflict");
      clock.t += 1;
      expect(await begin("bea", "k2", { q: 1 })).toEqual({ kind: "claimed" });
      idem.complete({ user: "bea", endpoint: ENDPOINT, key: "k2" }, 201, "{}");
      await eventually(
        () => begin("bea", "k2", { q: 1 }),
        (o) => o.kind === "replay",
      );
      clock.t += IDEMPOTENCY_TTL_MS;
      expect((await begin("bea", "k2", { q: 1 })).kind).toBe("replay");
      clock.t += 1;
      expect(await begin("bea", "k2", { q: 1 })).toEqual({ kind: "claimed" });
    });

    test("purged past 24 hours; a user's records counted and forgotten, no other's", async () => {
      clock.t = T0 + 10 * IDEMPOTENCY_TTL_MS;
      await begin("cal", "old", { q: 1 });
      clock.t += IDEMPOTENCY_TTL_MS - 1;
      await begin("cal", "new", { q: 2 });
      await begin("cid", "new", { q: 2 });
      clock.t += 2;
      expect(await idem.rowsOf("cal")).toBe(2);
      expect(await idem.purgeExpired()).toBeGreaterThanOrEqual(1);
      expect(await idem.rowsOf("cal")).toBe(1);
      expect(await idem.forget("cal")).toBe(1);
      expect(await idem.rowsOf("cal")).toBe(0);
      expect(await idem.rowsOf("cid")).toBe(1);
    });
  });
}

/** `ask` again until `done` holds of its answer: a shared store's completion is written behind the answer that made it. */
async function eventually<T>(ask: () => T | Promise<T>, done: (t: T) => boolean): Promise<T> {
  for (let i = 0; ; i++) {
    const value = await ask();
    if (done(value) || i === 100) return value;
    await Bun.sleep(5);
  }
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, idempotencyMigrations);
  return { records: () => new SqliteIdempotencyRecords(db), close: async () => db.close() };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return { records: () => new PostgresIdempotencyRecords(shared.sql), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  const keys = userKeys();
  const guard = new BackgroundGuard(createLogger("INFO", memorySink().sink));
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());
  const node = () => new IdempotencyStore(new PostgresIdempotencyRecords(db.client()), keys, RUNNING_TIMEOUT_MS, () => T0, guard);

  test("the same key sent to both at once: exactly one claims, every other is told it is running", async () => {
    const [a, b] = [node(), node()];
    const claim = { user: "dee", endpoint: ENDPOINT, key: "pay-once" };
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).begin(claim, { amount: 10 })));
    expect(outcomes.filter((o) => o.kind === "claimed").length).toBe(1);
    expect(outcomes.filter((o) => o.kind === "conflict" && o.retryAfterSeconds === 1).length).toBe(29);
    // Completed on one node, replayed by the other.
    a.complete(claim, 200, '{"paid": true}');
    expect(
      await eventually(
        () => b.begin(claim, { amount: 10 }),
        (o) => o.kind === "replay",
      ),
    ).toEqual({
      kind: "replay",
      status: 200,
      body: '{"paid": true}',
    });
  });

  test("PostgreSQL holds the key and the body's hash keyed, the response sealed: none of them readable", async () => {
    const a = node();
    const claim = { user: "eve", endpoint: ENDPOINT, key: "visible-key-1234" };
    await a.begin(claim, { q: "secret question 5678" });
    a.complete(claim, 200, '{"answer": "secret answer 9012"}');
    await eventually(
      () => a.begin(claim, { q: "secret question 5678" }),
      (o) => o.kind === "replay",
    );
    const dump = JSON.stringify(
      (await db.database.admin.unsafe(`SELECT * FROM ${IDEMPOTENCY_TABLE} WHERE user_id = 'eve'`)).map((r) => ({
        ...r,
        response: Buffer.from(r.response as Uint8Array).toString("latin1"),
      })),
    );
    expect(dump).toContain("eve");
    for (const plain of ["visible-key-1234", "secret question", "5678", "secret answer", "9012"]) expect(dump).not.toContain(plain);
  });

  test("within a deletion's transaction: a user's records erased and counted there, kept when it rolls back; an embedded store refused", async () => {
    const a = node();
    await a.begin({ user: "tom", endpoint: ENDPOINT, key: "t-1" }, { q: "fuel" });
    await a.begin({ user: "una", endpoint: ENDPOINT, key: "u-1" }, { q: "fuel" });
    const undone = new Error("undone");
    const seen = await db.sql
      .begin(async (tx) => {
        const bound = inTransaction(a, tx, "idempotency");
        expect(await bound.forget("tom")).toBe(1);
        expect(await bound.rowsOf("tom")).toBe(0);
        // Another node, outside the transaction, still sees the row until it commits.
        expect(await node().rowsOf("tom")).toBe(1);
        throw undone;
      })
      .catch((e: unknown) => e);
    expect(seen).toBe(undone);
    expect(await a.rowsOf("tom")).toBe(1);
    await db.sql.begin(async (tx) => {
      await inTransaction(a, tx, "idempotency").forget("tom");
    });
    expect({ tom: await a.rowsOf("tom"), una: await a.rowsOf("una") }).toEqual({ tom: 0, una: 1 });

    const embedded = new Database(":memory:");
    migrate(embedded, idempotencyMigrations);
    const local = new IdempotencyStore(new SqliteIdempotencyRecords(embedded), keys, RUNNING_TIMEOUT_MS, () => T0, guard);
    await db.sql
      .begin(async (tx) => {
        expect(() => inTransaction(local, tx, "idempotency")).toThrow(
          /embedded store cannot write inside the shared database's transaction/,
        );
      })
      .finally(() => embedded.close());
  });
});
