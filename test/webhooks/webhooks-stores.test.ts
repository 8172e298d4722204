// One suite, two stores (D33): webhook registrations and their outbox kept by the embedded
// database and by the shared PostgreSQL (a real server on loopback), delivered by the real worker
// to a receiver on loopback that checks each signature. Then, PostgreSQL alone: two nodes' workers
// drain 200 deliveries, each delivered once; a node whose connections end mid-claim leaves its
// claimed deliveries to the other, which sends them once their lease expired.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import type postgres from "postgres";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { createLogger, memorySink } from "../../src/log";
import { migrate } from "../../src/store/migrations";
import { inTransaction } from "../../src/store/shared";
import { SIGNATURE_HEADER, verify } from "../../src/webhooks/signature";
import { SqliteWebhookStore, type WebhookStore, webhookMigrations } from "../../src/webhooks/store";
import { OUTBOX_TABLE, PostgresWebhookStore, WEBHOOKS_TABLE } from "../../src/webhooks/store-postgres";
import { DELIVERY_LEASE_MS, DELIVERY_WINDOW_MS, WebhookWorker } from "../../src/webhooks/worker";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";
import { until } from "../support/wait";

const SECRET = "whsec_receiver";

/** A receiver on loopback: what it answered 2xx, by event id; `/fail` answers 500; `hold` keeps the next request unanswered. */
function receiver() {
  const delivered = new Map<string, number>();
  const held: Array<(r: Response) => void> = [];
  let holdNext = false;
  let badSignatures = 0;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (request) => {
      const body = await request.text();
      if (!verify(SECRET, body, request.headers.get(SIGNATURE_HEADER) ?? "", 300, Date.now())) badSignatures++;
      if (holdNext) {
        holdNext = false;
        return new Promise<Response>((resolve) => held.push(resolve));
      }
      if (new URL(request.url).pathname === "/fail") return new Response("no", { status: 500 });
      const id = (JSON.parse(body) as { id: string }).id;
      delivered.set(id, (delivered.get(id) ?? 0) + 1);
      return new Response("ok");
    },
  });
  return {
    url: (path = "/in") => `http://127.0.0.1:${server.port}${path}`,
    delivered,
    held,
    holdNext: () => {
      holdNext = true;
    },
    badSignatures: () => badSignatures,
    stop: () => server.stop(true),
  };
}

const quietLog = () => createLogger("INFO", memorySink().sink);

interface Store {
  /** A node's store, by `clock`. */
  webhooks(clock: { t: number }): WebhookStore;
  /** The bytes kept at rest: the registrations' secrets and the outbox's deliveries. */
  atRest(): Promise<Buffer[]>;
  /** `user`'s registrations erased and counted in one transaction (the deletion's, on PostgreSQL), which then commits or is undone. */
  erase(store: WebhookStore, user: string, undo: boolean): Promise<{ removed: number; left: number }>;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    let hooks: ReturnType<typeof receiver>;
    beforeAll(() => {
      hooks = receiver();
    });
    afterAll(() => hooks.stop());

    test("registered up to the cap, even all at once; listed without secrets, the secret sealed at rest; removed", async () => {
      const webhooks = store().webhooks({ t: Date.now() });
      const adds = await Promise.all([0, 1, 2, 3, 4].map((i) => webhooks.add("ann", `https://hooks.example/${i}`, ["user.deleted"], 2)));
      const made = adds.filter((a) => !("atCap" in a));
      expect(made).toHaveLength(2);
      expect(adds.filter((a) => "atCap" in a)).toEqual([{ atCap: 2 }, { atCap: 2 }, { atCap: 2 }]);
      expect(await webhooks.count("ann")).toBe(2);
      expect(await webhooks.add("bob", "https://hooks.example/bob", ["user.deleted"], 2)).toMatchObject({
        id: expect.stringMatching(/^wh_/),
      });
      const list = await webhooks.list("ann");
      expect(list.map((w) => w.id).sort()).toEqual(made.map((w) => ("id" in w ? w.id : "")).sort());
      expect(JSON.stringify(list)).not.toContain("whsec_");
      const secrets = made.map((w) => ("secret" in w ? w.secret : ""));
      expect(secrets.every((s) => /^whsec_[A-Za-z0-9_-]{32}$/.test(s))).toBe(true);
      const rest = Buffer.concat(await store().atRest());
      expect(secrets.some((s) => rest.includes(Buffer.from(s)))).toBe(false);
      expect(await webhooks.remove("ann", list[0]!.id)).toBe(true);
      expect(await webhooks.remove("ann", list[0]!.id)).toBe(false);
      expect(await webhooks.remove("bob", list[1]!.id)).toBe(false);
      expect(await webhooks.count("ann")).toBe(1);
    });

    test("a user's targets with their secrets opened; erased and counted in one transaction, undone with it", async () => {
      const webhooks = store().webhooks({ t: Date.now() });
      const made = await webhooks.add("cy", "https://hooks.example/cy", ["user.deleted"], 5);
      expect(await webhooks.targets("cy", "user.deleted")).toEqual([
        { url: "https://hooks.example/cy", secret: "secret" in made ? made.secret : "" },
      ]);
      await webhooks.add("dee", "https://hooks.example/dee", ["user.deleted"], 5);
      expect(await store().erase(webhooks, "cy", true)).toEqual({ removed: 1, left: 0 });
      expect(await webhooks.rowsOf("cy")).toBe(1);
      expect(await store().erase(webhooks, "cy", false)).toEqual({ removed: 1, left: 0 });
      expect(await webhooks.rowsOf("cy")).toBe(0);
      expect(await webhooks.targets("cy", "user.deleted")).toEqual([]);
      expect(await webhooks.rowsOf("dee")).toBe(1);
    });

    test("an event delivered signed, once; a failing target retried with backoff, then given up after 24 hours; the sealed outbox never shows a secret", async () => {
      const clock = { t: Date.now() };
      const webhooks = store().webhooks(clock);
      const before = await webhooks.pending();
      const event = await webhooks.enqueue("user.deleted", { user_id: "eve" }, [
        { url: hooks.url(), secret: SECRET },
        { url: hooks.url("/fail"), secret: SECRET },
      ]);
      expect(await webhooks.pending()).toBe(before + 2);
      expect(Buffer.concat(await store().atRest()).includes(Buffer.from(SECRET))).toBe(false);
      const worker = new WebhookWorker(webhooks, true, quietLog(), () => clock.t);
      await worker.tick();
      expect(hooks.delivered.get(event.id)).toBe(1);
      expect(hooks.badSignatures()).toBe(0);
      expect(await webhooks.pending()).toBe(before + 1);
      // Not due again before its backoff: nothing sent, nothing claimed.
      await worker.tick();
      expect(await webhooks.claimDue(10, "node-x", DELIVERY_LEASE_MS)).toEqual([]);
      clock.t += DELIVERY_WINDOW_MS + 1;
      await worker.tick();
      expect(await webhooks.pending()).toBe(before);
      expect(hooks.delivered.get(event.id)).toBe(1);
    });
  });
}

function sqliteStore(): Store {
  const db = new Database(":memory:");
  migrate(db, [...cryptoMigrations, ...webhookMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const master = randomBytes(32);
  return {
    webhooks: (clock) => new SqliteWebhookStore(db, keys, master, () => clock.t),
    atRest: async () =>
      [
        ...db.query<{ b: Uint8Array }, []>("SELECT secret AS b FROM webhooks").all(),
        ...db.query<{ b: Uint8Array }, []>("SELECT delivery AS b FROM webhook_outbox").all(),
      ].map((r) => Buffer.from(r.b)),
    erase: async (webhooks, user, undo) => {
      let out = { removed: 0, left: 0 };
      try {
        db.transaction(() => {
          out = { removed: webhooks.deleteUser(user) as number, left: webhooks.rowsOf(user) as number };
          if (undo) throw new Error("undone");
        })();
      } catch (error) {
        if (!undo) throw error;
      }
      return out;
    },
    close: async () => db.close(),
  };
}

/** The users' data keys (a room not yet shared): one for every node of a test. */
function userKeys(): UserKeys {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  return new UserKeys(db, randomBytes(32));
}

async function postgresStore(): Promise<Store> {
  const shared = await sharedDatabase();
  const keys = userKeys();
  const master = randomBytes(32);
  return {
    webhooks: (clock) => new PostgresWebhookStore(shared.client(), keys, master, () => clock.t),
    atRest: async () => {
      const { admin } = shared.database;
      const secrets = await admin<{ b: Buffer }[]>`SELECT secret AS b FROM ${admin(WEBHOOKS_TABLE)}`;
      const deliveries = await admin<{ b: Buffer }[]>`SELECT delivery AS b FROM ${admin(OUTBOX_TABLE)}`;
      return [...secrets, ...deliveries].map((r) => Buffer.from(r.b));
    },
    erase: async (webhooks, user, undo) => {
      let out = { removed: 0, left: 0 };
      await shared.sql
        .begin(async (tx: postgres.TransactionSql) => {
          const within = inTransaction(webhooks, tx, "webhooks");
          out = { removed: await within.deleteUser(user), left: await within.rowsOf(user) };
          if (undo) throw new Error("undone");
        })
        .catch((error: unknown) => {
          if (!undo) throw error;
        });
      return out;
    },
    close: () => shared.drop(),
  };
}

suite("embedded (SQLite)", async () => sqliteStore());
suite("shared (PostgreSQL)", postgresStore);

describe("PostgreSQL alone: two nodes deliver one outbox", () => {
  let db: SharedDatabase;
  let hooks: ReturnType<typeof receiver>;
  const keys = userKeys();
  const master = randomBytes(32);
  beforeAll(async () => {
    db = await sharedDatabase();
    hooks = receiver();
  });
  afterAll(async () => {
    hooks.stop();
    await db.drop();
  });

  /** A node: its own connections, clock and worker. */
  const node = (name: string, sql: postgres.Sql, clock = { t: 0 }) => {
    const logs = memorySink();
    const now = () => Date.now() + clock.t;
    const webhooks = new PostgresWebhookStore(sql, keys, master, now);
    const worker = new WebhookWorker(webhooks, true, createLogger("INFO", logs.sink), now, undefined, undefined, name);
    const sent = () => logs.records().filter((r) => r.message === "webhook delivered").length;
    return { webhooks, worker, clock, sent };
  };

  const enqueue = async (webhooks: WebhookStore, n: number) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++)
      ids.push((await webhooks.enqueue("user.deleted", { user_id: `u-${i}` }, [{ url: hooks.url(), secret: SECRET }])).id);
    return ids;
  };

  test("two nodes' workers, rounds at once, drain 200 deliveries: each delivered once, both took part", async () => {
    const a = node("node-a", db.client());
    const b = node("node-b", db.client());
    const ids = await enqueue(a.webhooks, 200);
    while ((await a.webhooks.pending()) > 0) await Promise.all([a.worker.tick(), b.worker.tick()]);
    expect(ids.map((id) => hooks.delivered.get(id))).toEqual(ids.map(() => 1));
    expect(a.sent() + b.sent()).toBe(200);
    expect(Math.min(a.sent(), b.sent())).toBeGreaterThan(0);
    expect(hooks.badSignatures()).toBe(0);
  });

  test("a node whose connections end mid-claim: its deliveries wait for their lease, then the other sends them, each once", async () => {
    const aSql = db.client();
    const a = node("node-a", aSql);
    const b = node("node-b", db.client());
    const ids = await enqueue(b.webhooks, 60);
    hooks.holdNext();
    const aRound = a.worker.tick();
    await until("node-a's first delivery under way", () => (hooks.held.length ? true : undefined));
    // node-a "dies": its connections end while it holds a round's claims and one delivery is in flight.
    await aSql.end({ timeout: 0 });
    for (let round = 0; round < 3; round++) await b.worker.tick();
    const claimedByA = ids.filter((id) => !hooks.delivered.has(id));
    expect(claimedByA).toHaveLength(20);
    expect(await b.webhooks.pending()).toBe(20);
    // Within the dead node's lease: none of its deliveries is claimable.
    expect(await b.webhooks.claimDue(100, "node-b", DELIVERY_LEASE_MS)).toEqual([]);
    b.clock.t = DELIVERY_LEASE_MS + 1_000;
    await b.worker.tick();
    expect(await b.webhooks.pending()).toBe(0);
    // The request node-a had in flight is answered 500 only now: it never counted as delivered.
    for (const answer of hooks.held) answer(new Response("too late", { status: 500 }));
    await aRound;
    expect(ids.map((id) => hooks.delivered.get(id))).toEqual(ids.map(() => 1));
  });
});
