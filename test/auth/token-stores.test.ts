// One suite, two stores (D33): tokens issued, revoked ids and per-user not-before stamps kept by
// the embedded database and by the shared PostgreSQL (a real server on loopback), with injected
// clocks. Then, PostgreSQL alone: two nodes (AuthServices with connections of their own to one
// database): a token revoked, or a user deleted, through one is refused through the other at the
// next request, its principal cached there or not (the CLI's `corpus token` too); and a database
// that cannot answer lets no token through.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { decodeJwt } from "jose";
import { tokenCommand } from "../../src/auth/cli";
import { assertNotRevoked } from "../../src/auth/guard";
import { AuthFailure, AuthService } from "../../src/auth/service";
import { type AuthStore, authMigrations, SqliteAuthStore, UserTags } from "../../src/auth/store";
import { NOT_BEFORE_TABLE, PostgresAuthStore, REVOKED_TABLE } from "../../src/auth/store-postgres";
import { HttpError } from "../../src/http/errors";
import { migrate } from "../../src/store/migrations";
import { testConfig } from "../helpers";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const S0 = T0 / 1000;
const HOUR = 3600;
const masterKey = randomBytes(32);

interface Store {
  /** The room on the store, by `clock` (ms). */
  open(clock: { t: number }): AuthStore;
  close(): Promise<void>;
}

const record = (jti: string, user: string, issuedAt = S0, expiresAt = S0 + HOUR) => ({
  jti,
  user,
  scopes: ["corpus:search", "connectors:read"],
  issuedAt,
  expiresAt,
});

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("an issued token is recorded with its user and expiry, and counted for its user alone", async () => {
      const s = store().open({ t: T0 });
      await s.recordIssued(record("jti-a1", "ann"));
      await s.recordIssued(record("jti-a2", "ann", S0, S0 + 60));
      await s.recordIssued(record("jti-b1", "ben"));
      expect(await s.issued("jti-a2")).toEqual({ user: "ann", expiresAt: S0 + 60 });
      expect(await s.issued("jti-none")).toBeUndefined();
      expect(await s.rowsOf("ann")).toBe(2);
      expect(await s.rowsOf("ben")).toBe(1);
      expect(await s.rowsOf("cat")).toBe(0);
      expect(await s.isRevoked("ann", "jti-a1", S0)).toBe(false);
    });

    test("a revoked id refuses its token and the panel tokens issued for it, nothing else", async () => {
      const s = store().open({ t: T0 });
      await s.recordIssued(record("jti-c1", "cat"));
      await s.revokeToken("jti-c1", S0 + HOUR);
      expect(await s.isRevoked("cat", "jti-c1", S0)).toBe(true);
      // A panel token names its parent: revoking the parent revokes it.
      expect(await s.isRevoked("cat", "jti-panel", S0 + 5, "jti-c1")).toBe(true);
      expect(await s.isRevoked("cat", "jti-c2", S0)).toBe(false);
      expect(await s.isRevoked("cat", undefined, S0)).toBe(false);
      // Revoked twice: the same answer, no error.
      await s.revokeToken("jti-c1", S0 + HOUR);
      expect(await s.isRevoked("cat", "jti-c1", S0)).toBe(true);
    });

    test("a user's stamp refuses their tokens issued until then, not those after, nor another user's; it counts the unexpired ones", async () => {
      const clock = { t: T0 + 100_000 };
      const s = store().open(clock);
      await s.recordIssued(record("jti-d1", "dan", S0, S0 + HOUR));
      await s.recordIssued(record("jti-d2", "dan", S0 + 50, S0 + 60)); // expired by the stamp's time
      await s.recordIssued(record("jti-e1", "eve"));
      expect(await s.revokeUser("dan")).toBe(1);
      expect(await s.isRevoked("dan", "jti-d1", S0)).toBe(true);
      expect(await s.isRevoked("dan", "jti-d3", S0 + 100)).toBe(true); // issued in the stamp's second
      expect(await s.isRevoked("dan", "jti-d4", S0 + 101)).toBe(false); // issued after
      // An external token without iat: refused by any stamp of its user.
      expect(await s.isRevoked("dan", "ext", undefined)).toBe(true);
      expect(await s.isRevoked("eve", "jti-e1", S0)).toBe(false);
      expect(await s.isRevoked("eve", undefined, undefined)).toBe(false);
      // A later stamp moves the line.
      expect(await s.revokeUser("dan", (S0 + 200) * 1000)).toBe(1);
      expect(await s.isRevoked("dan", "jti-d4", S0 + 101)).toBe(true);
    });

    test("within the stamp's second the millisecond decides (D13): a token signed after it passes; one signed before or at it, or with no record, does not", async () => {
      const clock = { t: T0 + 300_500 };
      const s = store().open(clock);
      const signed = (jti: string, ms: number) => ({ ...record(jti, "ivy", S0 + 300, S0 + HOUR), issuedMs: T0 + ms });
      await s.recordIssued(signed("jti-i1", 300_499));
      await s.recordIssued(signed("jti-i2", 300_500));
      expect(await s.revokeUser("ivy")).toBe(2);
      // Made again at once: a token 1 ms after the deletion.
      await s.recordIssued(signed("jti-i3", 300_501));
      expect(await s.isRevoked("ivy", "jti-i1", S0 + 300)).toBe(true);
      expect(await s.isRevoked("ivy", "jti-i2", S0 + 300)).toBe(true);
      expect(await s.isRevoked("ivy", "jti-i3", S0 + 300)).toBe(false);
      // Another issuer's token, or one whose record the deletion erased: its millisecond unknown, revoked.
      expect(await s.isRevoked("ivy", "jti-unknown", S0 + 300)).toBe(true);
      expect(await s.isRevoked("ivy", undefined, S0 + 300)).toBe(true);
      // Whole seconds around it decide alone, a record or not.
      expect(await s.isRevoked("ivy", "jti-i3", S0 + 299)).toBe(true);
      expect(await s.isRevoked("ivy", "jti-unknown", S0 + 301)).toBe(false);
    });

    test("forgetting a user's records leaves none, and their stamp still refuses their old tokens", async () => {
      const s = store().open({ t: T0 + 10_000 });
      await s.recordIssued(record("jti-f1", "fay"));
      await s.recordIssued(record("jti-f2", "fay"));
      await s.recordIssued(record("jti-g1", "gus"));
      await s.revokeUser("fay");
      expect(await s.forgetIssued("fay")).toBe(2);
      expect(await s.rowsOf("fay")).toBe(0);
      expect(await s.rowsOf("gus")).toBe(1);
      expect(await s.isRevoked("fay", "jti-f1", S0)).toBe(true);
      expect(await s.forgetIssued("fay")).toBe(0);
    });

    test("expired records and revoked ids are purged; the unexpired stay", async () => {
      const clock = { t: T0 };
      const s = store().open(clock);
      await s.recordIssued(record("jti-h1", "hal", S0, S0 + 10));
      await s.recordIssued(record("jti-h2", "hal", S0, S0 + 10 * HOUR));
      await s.revokeToken("jti-h1", S0 + 10);
      await s.revokeToken("jti-h2", S0 + 10 * HOUR);
      clock.t = T0 + 20 * HOUR * 1000; // past what earlier tests recorded, too
      const before = await s.purgeExpired();
      expect(before).toBeGreaterThanOrEqual(2);
      expect(await s.issued("jti-h1")).toBeUndefined();
      expect(await s.purgeExpired()).toBe(0);
    });
  });
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, authMigrations);
  return { open: (clock) => new SqliteAuthStore(db, masterKey, () => clock.t), close: async () => db.close() };
});

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async () => {
  shared = await sharedDatabase();
  return { open: (clock) => new PostgresAuthStore(shared.client(), new UserTags(masterKey), () => clock.t), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  let a: AuthService;
  let b: AuthService;
  let bSql: ReturnType<SharedDatabase["client"]>;
  beforeAll(async () => {
    db = await sharedDatabase();
    // One data folder for the signing key and one master key, as nodes of one service have.
    const config = testConfig();
    a = await AuthService.create(config, new Database(":memory:"), masterKey, Date.now, db.client());
    bSql = db.client();
    b = await AuthService.create(config, new Database(":memory:"), masterKey, Date.now, bSql);
  });
  afterAll(() => db.drop());

  const refusedOn = async (node: AuthService, token: string) => {
    const error = await Promise.resolve(node.authenticate(`Bearer ${token}`, "corpus:search")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AuthFailure);
    expect((error as AuthFailure).status).toBe(401);
    expect((error as AuthFailure).message).toMatch(/revoked/);
  };

  test("a token revoked through A is refused through B at its next request, B's principal cached or not", async () => {
    const one = await a.issuer.issue("ivy", ["corpus:search"]);
    const two = await a.issuer.issue("ivy", ["corpus:search"]);
    // B has seen both (its cache of verified principals holds them); A recorded them in PostgreSQL.
    expect((await b.authenticate(`Bearer ${one.token}`, "corpus:search")).user).toBe("ivy");
    expect((await b.authenticate(`Bearer ${two.token}`, "corpus:search")).user).toBe("ivy");
    expect(await b.store.issued(one.jti)).toEqual({ user: "ivy", expiresAt: one.expiresAt });
    await a.store.revokeToken(one.jti, one.expiresAt);
    await refusedOn(b, one.token);
    expect((await b.authenticate(`Bearer ${two.token}`, "corpus:search")).user).toBe("ivy");
    // The other way round, a token B never saw before.
    const three = await b.issuer.issue("ivy", ["corpus:search"]);
    await b.store.revokeToken(three.jti, three.expiresAt);
    await refusedOn(a, three.token);
  });

  test("a user deleted on A (every token stamped) is refused on B at once, and so is a panel token of a revoked parent", async () => {
    const jo = await a.issuer.issue("jo", ["corpus:search"]);
    const parent = await b.issuer.issue("kim", ["corpus:search"]);
    const panel = await b.issuer.issue("kim", ["corpus:search"], 600, undefined, { corpus_panel: { parent: parent.jti } });
    expect((await b.authenticate(`Bearer ${jo.token}`, "corpus:search")).user).toBe("jo");
    expect((await b.authenticate(`Bearer ${panel.token}`, "corpus:search")).user).toBe("kim");
    expect(await a.store.revokeUser("jo")).toBe(1);
    await refusedOn(b, jo.token);
    await expect(
      b.revoked({ user: "jo", scopes: new Set(), jti: jo.jti, issuedAt: Math.floor(Date.now() / 1000), expiresAt: jo.expiresAt }),
    ).resolves.toBe(true);
    await a.store.revokeToken(parent.jti, parent.expiresAt);
    await refusedOn(b, panel.token);
    // What PostgreSQL holds of the stamp names no one: the keyed tag, not the user id.
    const stamps = await db.sql<{ user_tag: string }[]>`SELECT user_tag FROM ${db.sql(NOT_BEFORE_TABLE)}`;
    expect(stamps.map((r) => r.user_tag)).toEqual([new UserTags(masterKey).of("jo")]);
    expect(stamps[0]!.user_tag).not.toContain("jo");
    expect((await db.sql`SELECT jti FROM ${db.sql(REVOKED_TABLE)} WHERE jti = ${parent.jti}`).length).toBe(1);
  });

  test("a write's revocation check (assertNotRevoked) awaits the shared store: a standing token passes, one whose user A deleted is 401 on B", async () => {
    const lee = await a.issuer.issue("lee", ["corpus:search"]);
    const principal = await b.authenticate(`Bearer ${lee.token}`, "corpus:search");
    // A promise on the shared store, never a refusal of the check itself (a node's POST /v1/connectors, deep_search, webhooks).
    const standing = assertNotRevoked(b, principal);
    expect(standing).toBeInstanceOf(Promise);
    await standing;
    await a.store.revokeUser("lee");
    const refused = await Promise.resolve(assertNotRevoked(b, principal)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(HttpError);
    expect((refused as HttpError).status).toBe(401);
  });

  test("`corpus token create` and `token revoke` with CORPUS_DATABASE_URL mint and revoke in the shared database: a node refuses at once", async () => {
    // The command runs with the nodes' master key, as every node of one database does (the shared signing key is sealed under it).
    const config = testConfig({ CORPUS_DATABASE_URL: db.database.url, CORPUS_MASTER_KEY: masterKey.toString("base64") });
    const token = await tokenCommand("token create", { user: "max", scopes: "corpus:search" }, config);
    const node = await AuthService.create(config, new Database(":memory:"), masterKey, Date.now, db.client());
    const jti = decodeJwt(token).jti!;
    expect(await node.store.issued(jti)).toMatchObject({ user: "max" });
    expect((await node.authenticate(`Bearer ${token}`, "corpus:search")).user).toBe("max");
    expect(await tokenCommand("token revoke", { jti }, config)).toBe(`revoked token ${jti} of max`);
    await refusedOn(node, token);
    const later = await tokenCommand("token create", { user: "max", scopes: "corpus:search" }, config);
    expect((await node.authenticate(`Bearer ${later}`, "corpus:search")).user).toBe("max");
    expect(await tokenCommand("token revoke", { user: "max" }, config)).toContain(
      "revoked every token of max issued until now (2 still unexpired)",
    );
    await refusedOn(node, later);
  });

  test("a node whose database cannot answer lets no token through, and does not call it the caller's fault (no 401)", async () => {
    const token = (await a.issuer.issue("lou", ["corpus:search"])).token;
    expect((await b.authenticate(`Bearer ${token}`, "corpus:search")).user).toBe("lou");
    await bSql.end();
    const error = await Promise.resolve(b.authenticate(`Bearer ${token}`, "corpus:search")).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AuthFailure);
    // The revocation check a write awaits (D25, D33) fails too: never taken for "allowed".
    const checked = Promise.resolve(b.revoked({ user: "lou", scopes: new Set(), expiresAt: Math.floor(Date.now() / 1000) + 60 }));
    expect(
      await checked.then(
        () => "answered",
        () => "failed",
      ),
    ).toBe("failed");
  });
});
