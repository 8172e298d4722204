// One suite, two stores (D33): users' data keys (D3) kept by the embedded database and by the
// shared PostgreSQL (a real server on loopback): a key made once and found again by another
// instance (a restart, another node), none made where none may be, crypto-shredding and what it
// takes with it. Then, PostgreSQL alone: a synchronous use that no `ready` prepared is a
// programming error; two nodes making one new user's key at once end with one key; a user
// deleted on node A is neither read nor written on node B with the key B held; the deletion's
// erase and count run inside a given transaction; a dump of the database holds no key in the clear.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { DecryptError } from "../../src/crypto/aead";
import { cryptoMigrations, NoUserKey, UserKeyNotReady, UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords, USER_KEYS_TABLE } from "../../src/crypto/user-keys-postgres";
import { migrate } from "../../src/store/migrations";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

setDefaultTimeout(30_000);

const DIM = 8;

interface Store {
  /** A node's UserKeys over the store (a new one: nothing in its memory). */
  node(): UserKeys;
  close(): Promise<void>;
}

/** What a node does where work for `user` begins (the guard, MCP, a job): a no-op for the embedded store. */
async function ready(keys: UserKeys, user: string, create = false): Promise<void> {
  await keys.ready(user, { create });
}

let n = 0;
/** A user no test has met yet. */
const fresh = () => `user-${++n}-${randomBytes(3).toString("hex")}`;

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("a key is made once and found again, the same, by another instance (a restart, another node)", async () => {
      const user = fresh();
      const a = store().node();
      await ready(a, user, true);
      const key = a.keyFor(user);
      expect(key.length).toBe(32);
      expect(await a.rowsOf(user)).toBe(1);
      const b = store().node();
      await ready(b, user);
      expect(b.keyFor(user, false).equals(key)).toBe(true);
      expect(b.existingKeyFor(user)?.equals(key)).toBe(true);
      const sealed = a.sealFor(user, "the lease ends in May", "test/row-1");
      expect(b.openFor(user, sealed, "test/row-1").toString("utf8")).toBe("the lease ends in May");
      // Bound to its purpose and its user.
      expect(() => b.openFor(user, sealed, "test/row-2")).toThrow(DecryptError);
      expect(b.derive(user, "word-index/c1").equals(a.derive(user, "word-index/c1"))).toBe(true);
      expect(b.derive(user, "word-index/c1").equals(a.derive(user, "word-index/c2"))).toBe(false);
      expect(b.rotation(user, "connector/c1", DIM).apply(new Float32Array(DIM).fill(0.5))).toEqual(
        a.rotation(user, "connector/c1", DIM).apply(new Float32Array(DIM).fill(0.5)),
      );
    });

    test("where none may be made (background work), a user without a key has none: NoUserKey, nothing kept", async () => {
      const user = fresh();
      const keys = store().node();
      await ready(keys, user);
      expect(() => keys.keyFor(user, false)).toThrow(NoUserKey);
      expect(() => keys.derive(user, "embedding-cache", false)).toThrow(NoUserKey);
      expect(() => keys.rotation(user, "archive", DIM, false)).toThrow(NoUserKey);
      expect(() => keys.openFor(user, Buffer.alloc(40), "test/row")).toThrow(NoUserKey);
      expect(keys.existingKeyFor(user)).toBeUndefined();
      expect(await keys.rowsOf(user)).toBe(0);
    });

    test("destroyed, the key and all derived from it are gone; a key made after is another", async () => {
      const user = fresh();
      const keys = store().node();
      await ready(keys, user, true);
      const key = Buffer.from(keys.keyFor(user));
      const sealed = keys.sealFor(user, "secret", "test/row");
      keys.derive(user, "word-index/c1");
      keys.rotation(user, "archive", DIM);
      expect(await keys.destroy(user)).toBe(true);
      expect(await keys.rowsOf(user)).toBe(0);
      expect(await keys.destroy(user)).toBe(false);
      await ready(keys, user);
      expect(() => keys.derive(user, "word-index/c1", false)).toThrow(NoUserKey);
      expect(() => keys.rotation(user, "archive", DIM, false)).toThrow(NoUserKey);
      expect(() => keys.openFor(user, sealed, "test/row")).toThrow(NoUserKey);
      await ready(keys, user, true);
      expect(keys.keyFor(user).equals(key)).toBe(false);
      expect(() => keys.openFor(user, sealed, "test/row")).toThrow(DecryptError);
    });
  });
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  const master = randomBytes(32);
  return { node: () => new UserKeys(db, master), close: async () => db.close() };
});

let shared: SharedDatabase;
const master = randomBytes(32);

suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return { node: () => new UserKeys(new PostgresUserKeyRecords(shared.client()), master), close: async () => {} };
});

describe("shared (PostgreSQL) alone", () => {
  let db: SharedDatabase;
  const nodeOf = (sql = db.client()) => new UserKeys(new PostgresUserKeyRecords(sql), master);
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(async () => {
    await db.drop();
    await shared?.drop();
  });

  test("a synchronous use that no ready prepared is a programming error, not a user without a key", async () => {
    const user = fresh();
    const a = nodeOf(db.sql);
    await a.ready(user, { create: true });
    const b = nodeOf(db.sql);
    const uses: Array<[string, () => unknown]> = [
      ["keyFor", () => b.keyFor(user, false)],
      ["existingKeyFor", () => b.existingKeyFor(user)],
      ["derive", () => b.derive(user, "word-index/c1", false)],
      ["rotation", () => b.rotation(user, "archive", DIM, false)],
      ["prepareRotation", () => b.prepareRotation(user, "archive", DIM, async () => {}, false)],
      ["sealFor", () => b.sealFor(user, "x", "test/row")],
      ["openFor", () => b.openFor(user, a.sealFor(user, "x", "test/row"), "test/row")],
    ];
    for (const [, use] of uses) {
      expect(use).toThrow(UserKeyNotReady);
      expect(use).toThrow("was not made ready on this node");
    }
    // Made ready without create for a user with none: reading is NoUserKey (work for a gone user stops), writing a programming error.
    const none = fresh();
    await b.ready(none);
    expect(() => b.keyFor(none, false)).toThrow(NoUserKey);
    expect(() => b.sealFor(none, "x", "test/row")).toThrow(UserKeyNotReady);
    expect(await b.rowsOf(none)).toBe(0);
    // Once made ready, every use answers from memory.
    await b.ready(user);
    for (const [, use] of uses) use();
  });

  test("two nodes making one new user's key at once end with one key", async () => {
    const [a, b] = [nodeOf(), nodeOf()];
    const users = Array.from({ length: 20 }, fresh);
    await Promise.all(users.flatMap((u) => [a.ready(u, { create: true }), b.ready(u, { create: true })]));
    for (const u of users) {
      expect(a.keyFor(u).equals(b.keyFor(u))).toBe(true);
      expect(await a.rowsOf(u)).toBe(1);
      // What one node sealed, the other opens.
      expect(b.openFor(u, a.sealFor(u, "one key", "test/row"), "test/row").toString("utf8")).toBe("one key");
    }
  });

  test("a user deleted on node A: node B, which held their key, neither reads nor writes under it after its next ready", async () => {
    const user = fresh();
    const [sqlA, sqlB] = [db.client(), db.client()];
    const [a, b] = [nodeOf(sqlA), nodeOf(sqlB)];
    await a.ready(user, { create: true });
    await b.ready(user);
    const sealed = b.sealFor(user, "the lease ends in May", "test/row");
    b.derive(user, "word-index/c1", false);
    b.rotation(user, "archive", DIM, false);
    await b.prepareRotation(user, "connector/c1", DIM, async () => {}, false);

    // The deletion's transaction on A: the erase and the count inside it, undone with it.
    await sqlA
      .begin(async (tx) => {
        expect(await a.within(tx).destroy(user)).toBe(true);
        expect(await a.within(tx).rowsOf(user)).toBe(0);
        throw new Error("undone");
      })
      .catch(() => {});
    await b.ready(user);
    expect(b.openFor(user, sealed, "test/row").toString("utf8")).toBe("the lease ends in May");
    await sqlA.begin(async (tx) => {
      await a.within(tx).destroy(user);
    });

    // B's next request or job reads the row again: nothing of the old key stays, for reads nor writes.
    await b.ready(user);
    expect(() => b.openFor(user, sealed, "test/row")).toThrow(NoUserKey);
    expect(() => b.keyFor(user, false)).toThrow(NoUserKey);
    expect(() => b.sealFor(user, "written after", "test/row", false)).toThrow(NoUserKey);
    expect(() => b.derive(user, "word-index/c1", false)).toThrow(NoUserKey);
    expect(() => b.rotation(user, "archive", DIM, false)).toThrow(NoUserKey);
    expect(() => b.rotation(user, "connector/c1", DIM, false)).toThrow(NoUserKey);
    expect(() => b.sealFor(user, "written after", "test/row")).toThrow(UserKeyNotReady);
    // The user back later (a new token, a first request on B): another key, which opens nothing of before.
    await b.ready(user, { create: true });
    expect(() => b.openFor(user, sealed, "test/row")).toThrow(DecryptError);
    await a.ready(user);
    expect(a.keyFor(user).equals(b.keyFor(user))).toBe(true);
  });

  test("the embedded store cannot join the shared database's transaction", async () => {
    const sqlite = new Database(":memory:");
    migrate(sqlite, cryptoMigrations);
    const embedded = new UserKeys(sqlite, master);
    await db.sql
      .begin(async (tx) => {
        expect(() => embedded.within(tx)).toThrow("an embedded store cannot write inside the shared database's transaction");
      })
      .finally(() => sqlite.close());
  });

  test("a dump of the database holds the keys only wrapped: no key's bytes in the clear, nor after the user's deletion", async () => {
    const users = [fresh(), fresh(), fresh()];
    const keys = nodeOf(db.sql);
    for (const u of users) await keys.ready(u, { create: true });
    const clear = users.map((u) => Buffer.from(keys.keyFor(u)));
    const dump = () => {
      const out = spawnSync("pg_dump", ["--data-only", "--no-owner", db.database.url], { encoding: "utf8", maxBuffer: 64 << 20 });
      expect(out.status).toBe(0);
      return out.stdout;
    };
    const before = dump();
    expect(before).toContain(USER_KEYS_TABLE);
    for (const u of users) expect(before).toContain(u);
    for (const key of clear) {
      expect(before).not.toContain(key.toString("hex"));
      expect(before).not.toContain(key.toString("base64"));
    }
    // The wrapped key is what is there (bytea as hex), sealed by the master key (aead.ts).
    const [row] = await db.database.admin<{ wrapped_key: Uint8Array }[]>`
      SELECT wrapped_key FROM ${db.database.admin(USER_KEYS_TABLE)} WHERE user_id = ${users[0]!}`;
    expect(before).toContain(Buffer.from(row!.wrapped_key).toString("hex"));
    await db.sql.begin((tx) => keys.within(tx).destroy(users[0]!));
    const after = dump();
    expect(after).not.toContain(users[0]!);
    expect(after).not.toContain(Buffer.from(row!.wrapped_key).toString("hex"));
  });
});
