// One suite, two stores (D33): the built-in authorization server's rows (clients, codes, grants
// with their refresh-token families, access-token links, sessions) kept by the embedded database
// and by the shared PostgreSQL (a real server on loopback). Then, PostgreSQL alone, two nodes
// (two OAuthServers, each on its own connections) on one database: a code made on A is redeemed
// once whoever races for it, a refresh token rotated on A is refused when replayed on B (and
// ends the grant on both), a session made on A signs in on B; and what PostgreSQL holds has no
// code, refresh token, session id or client secret a client could present.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { AuthFailure, AuthService } from "../../src/auth/service";
import { REVOKED_TABLE } from "../../src/auth/store-postgres";
import { OAuthServer } from "../../src/oauth/service";
import { type ClientRow, type CodeRow, type GrantRow, type OAuthStore, oauthMigrations, SqliteOAuthStore } from "../../src/oauth/store";
import { OAUTH_TABLES, PostgresOAuthStore } from "../../src/oauth/store-postgres";
import { migrate } from "../../src/store/migrations";
import { testApp, testConfig } from "../helpers";
import { erasedInDeletion, type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";
import { pkce, registeredClient } from "./support";

const NOW = 1_790_000_000; // seconds
const REDIRECT = "https://client.example/cb";

const code = (hash: string, clientId: string, user: string, expiresAt = NOW + 60): CodeRow => ({
  code_hash: hash,
  client_id: clientId,
  user_id: user,
  redirect_uri: REDIRECT,
  code_challenge: "challenge",
  scopes: "corpus:search offline_access",
  expires_at: expiresAt,
  grant_id: null,
  nonce: null,
});

const grant = (grantId: string, clientId: string, user: string, createdAt = NOW): GrantRow => ({
  grant_id: grantId,
  client_id: clientId,
  user_id: user,
  scopes: "corpus:search offline_access",
  created_at: createdAt,
  revoked_at: null,
});

/** A grant made as the token endpoint makes one: its code redeemed. */
async function granted(store: OAuthStore, grantId: string, clientId: string, user: string, createdAt = NOW): Promise<void> {
  await store.putCode(code(`code-of-${grantId}`, clientId, user));
  expect(await store.redeemCode(`code-of-${grantId}`, grant(grantId, clientId, user, createdAt))).toBe(true);
}

interface Store {
  store: OAuthStore;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (opened) => {
    const s = () => opened().store;

    test("clients: kept, replaced, counted; a full table drops the oldest never used, never one a grant or a code names", async () => {
      await s().putClient(registeredClient("c-old", "Old", NOW - 9000, REDIRECT));
      await s().putClient(registeredClient("c-granted", "Granted", NOW - 9500, REDIRECT));
      await s().putClient(registeredClient("c-coded", "Coded", NOW - 9600, REDIRECT));
      await s().putClient(registeredClient("c-new", "New", NOW - 10, REDIRECT));
      await granted(s(), "g-keep", "c-granted", "ann");
      await s().putCode(code("pending", "c-coded", "ann"));
      expect(await s().countClients()).toBe(4);
      const row: ClientRow = { ...registeredClient("c-old", "Old, renamed", NOW - 9000, REDIRECT), secret_hash: "hash-of-secret" };
      await s().putClient(row);
      expect(await s().client("c-old")).toEqual(row);
      expect(await s().client("c-none")).toBeNull();
      // Never used and older than an hour: c-old only (the granted, the coded and the new one stay).
      expect(await s().dropUnusedClients(NOW - 3600, 10)).toBe(1);
      expect(await s().client("c-old")).toBeNull();
      expect((await s().client("c-granted"))?.name).toBe("Granted");
      expect(await s().client("c-coded")).not.toBeNull();
      expect(await s().countClients()).toBe(3);
    });

    test("a code is redeemed once: the grant made with it; a second redemption changes nothing", async () => {
      await s().putCode({ ...code("code-1", "c-new", "bea"), nonce: "n-1" });
      expect(await s().code("code-1")).toMatchObject({
        client_id: "c-new",
        user_id: "bea",
        expires_at: NOW + 60,
        grant_id: null,
        nonce: "n-1",
      });
      expect(await s().redeemCode("code-1", grant("g-1", "c-new", "bea"))).toBe(true);
      expect(await s().redeemCode("code-1", grant("g-2", "c-new", "bea"))).toBe(false);
      expect((await s().code("code-1"))?.grant_id).toBe("g-1");
      expect(await s().grant("g-1")).toEqual(grant("g-1", "c-new", "bea"));
      expect(await s().grant("g-2")).toBeNull();
      expect(await s().redeemCode("no-such-code", grant("g-3", "c-new", "bea"))).toBe(false);
      expect(await s().grant("g-3")).toBeNull();
    });

    test("a refresh token is used once (rotated); revoking the grant forgets its family and answers its access tokens; none is kept under it afterwards", async () => {
      await granted(s(), "g-r", "c-new", "cal");
      await s().putRefresh("rt-1", "g-r", NOW + 100);
      expect(await s().putAccess("jti-1", "g-r", NOW + 900)).toBe(true);
      expect(await s().putAccess("jti-2", "g-r", NOW + 901)).toBe(true);
      expect(await s().accessGrant("jti-1")).toBe("g-r");
      expect(await s().refresh("rt-1")).toEqual({ grant_id: "g-r", expires_at: NOW + 100, used_at: null });
      expect(await s().useRefresh("rt-1", NOW + 5)).toBe(true);
      expect(await s().useRefresh("rt-1", NOW + 6)).toBe(false);
      expect(await s().refresh("rt-1")).toEqual({ grant_id: "g-r", expires_at: NOW + 100, used_at: NOW + 5 });
      await s().putRefresh("rt-2", "g-r", NOW + 200);
      expect((await s().liveGrants("cal")).map((g) => g.grant_id)).toEqual(["g-r"]);
      const revoked = await s().revokeGrant("g-r", NOW + 10);
      expect(revoked.sort((a, b) => a.jti.localeCompare(b.jti))).toEqual([
        { jti: "jti-1", expires_at: NOW + 900 },
        { jti: "jti-2", expires_at: NOW + 901 },
      ]);
      expect(await s().refresh("rt-1")).toBeNull();
      expect(await s().refresh("rt-2")).toBeNull();
      expect((await s().grant("g-r"))?.revoked_at).toBe(NOW + 10);
      expect(await s().liveGrants("cal")).toEqual([]);
      // Signed while the grant was being revoked: not kept, so the caller revokes it.
      expect(await s().putAccess("jti-late", "g-r", NOW + 950)).toBe(false);
      expect(await s().accessGrant("jti-late")).toBeUndefined();
      expect(await s().putAccess("jti-orphan", "no-such-grant", NOW + 950)).toBe(false);
    });

    test("sessions: kept by their hash, read, ended", async () => {
      await s().putSession("sess-1", "dan", "csrf-1", NOW + 3600);
      expect(await s().session("sess-1")).toEqual({ user_id: "dan", csrf: "csrf-1", expires_at: NOW + 3600 });
      await s().deleteSession("sess-1");
      expect(await s().session("sess-1")).toBeNull();
    });

    test("a user forgotten: sessions, codes, grants and their tokens gone; the live grants' access tokens answered; another user's kept", async () => {
      await s().putSession("sess-eve", "eve", "x", NOW + 3600);
      await granted(s(), "g-eve-live", "c-new", "eve");
      await granted(s(), "g-eve-revoked", "c-new", "eve");
      await s().putAccess("jti-live", "g-eve-live", NOW + 900);
      await s().putAccess("jti-gone", "g-eve-revoked", NOW + 900);
      await s().putRefresh("rt-eve", "g-eve-live", NOW + 100);
      await s().revokeGrant("g-eve-revoked", NOW);
      await s().putCode(code("code-eve", "c-new", "eve"));
      await granted(s(), "g-fay", "c-new", "fay");
      await s().putSession("sess-fay", "fay", "y", NOW + 3600);
      // Three codes, two grants, one session.
      expect(await s().rowsOf("eve")).toBe(6);
      const before = await s().rowsOf("fay");
      expect(await s().forgetUser("eve", NOW)).toEqual([{ jti: "jti-live", expires_at: NOW + 900 }]);
      expect(await s().rowsOf("eve")).toBe(0);
      expect(await s().accessGrant("jti-live")).toBeUndefined();
      expect(await s().accessGrant("jti-gone")).toBeUndefined();
      expect(await s().refresh("rt-eve")).toBeNull();
      expect(await s().session("sess-eve")).toBeNull();
      expect(await s().rowsOf("fay")).toBe(before);
      expect(await s().session("sess-fay")).not.toBeNull();
    });

    test("what has expired is purged: codes an hour after, tokens and sessions at expiry, grants holding nothing, clients never used for a day", async () => {
      const t = NOW + 10 * 86_400;
      await s().putClient(registeredClient("c-stale", "Stale", t - 86_401, REDIRECT));
      await s().putClient(registeredClient("c-fresh", "Fresh", t - 86_000, REDIRECT));
      await s().putCode(code("code-old", "c-fresh", "gus", t - 3601));
      await s().putCode(code("code-recent", "c-fresh", "gus", t - 3599));
      await s().putSession("sess-old", "gus", "z", t - 1);
      await s().putSession("sess-live", "gus", "z", t + 1);
      await granted(s(), "g-empty", "c-fresh", "gus", t - 3601);
      await granted(s(), "g-held", "c-fresh", "gus", t - 3601);
      await s().putRefresh("rt-held", "g-held", t + 100);
      await s().putAccess("jti-old", "g-held", t - 1);
      const purged = await s().purgeExpired(t);
      expect(purged).toBeGreaterThanOrEqual(5);
      expect(await s().code("code-old")).toBeNull();
      expect(await s().code("code-recent")).not.toBeNull();
      expect(await s().session("sess-old")).toBeNull();
      expect(await s().session("sess-live")).not.toBeNull();
      expect(await s().accessGrant("jti-old")).toBeUndefined();
      expect(await s().grant("g-empty")).toBeNull();
      expect(await s().grant("g-held")).not.toBeNull();
      expect(await s().client("c-stale")).toBeNull();
      expect(await s().client("c-fresh")).not.toBeNull();
    });
  });
}

suite("embedded (SQLite)", async () => {
  const db = new Database(":memory:");
  migrate(db, oauthMigrations);
  return { store: new SqliteOAuthStore(db), close: async () => db.close() };
});

suite("shared (PostgreSQL)", async () => {
  const shared = await sharedDatabase();
  return { store: new PostgresOAuthStore(shared.client()), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  let t: Awaited<ReturnType<typeof testApp>>;
  let a: OAuthServer;
  let b: OAuthServer;
  // The accounts and the token issuer are rooms not shared yet: both nodes use this one's.
  const node = () => new OAuthServer(t.config, t.services.auth, t.services.accounts, new PostgresOAuthStore(db.client()));
  beforeAll(async () => {
    db = await sharedDatabase();
    t = await testApp();
    await t.services.accounts.add("alice", "a long enough password");
    a = node();
    b = node();
  });
  afterAll(async () => {
    await t.services.close();
    await db.drop();
  });

  let clientId: string;
  /** A code for alice made on node A, with its PKCE verifier. */
  async function codeOnA(): Promise<{ code: string; verifier: string }> {
    clientId ??= String(
      (
        await a.register(
          { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", grant_types: ["authorization_code", "refresh_token"] },
          "192.0.2.1",
        )
      ).client_id,
    );
    const { verifier, challenge } = pkce();
    const query = new URLSearchParams({
      client_id: clientId,
      redirect_uri: REDIRECT,
      response_type: "code",
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "corpus:search offline_access",
    });
    const checked = await a.authorizationRequest(query, "192.0.2.1");
    if (!("request" in checked)) throw new Error("the authorization request was refused");
    const location = new URL(await a.issueCode(checked.request, "alice", checked.request.scopes));
    return { code: location.searchParams.get("code")!, verifier };
  }
  const exchange = (node: OAuthServer, c: { code: string; verifier: string }) =>
    node.token(
      new URLSearchParams({
        grant_type: "authorization_code",
        client_id: clientId,
        code: c.code,
        code_verifier: c.verifier,
        redirect_uri: REDIRECT,
      }),
      null,
      "192.0.2.1",
    );
  const refresh = (node: OAuthServer, token: string) =>
    node.token(new URLSearchParams({ grant_type: "refresh_token", client_id: clientId, refresh_token: token }), null, "192.0.2.1");
  const grantsOfAlice = async () =>
    Number((await db.database.admin.unsafe(`SELECT count(*) AS n FROM ${OAUTH_TABLES.grants} WHERE user_id = 'alice'`))[0]!.n);

  test("a code made on A, redeemed on B and A at once, 10 times over: each code makes one grant, never two tokens", async () => {
    for (let round = 0; round < 10; round++) {
      const before = await grantsOfAlice();
      const c = await codeOnA();
      const answers = await Promise.allSettled([exchange(b, c), exchange(a, c)]);
      const tokens = answers.filter((x) => x.status === "fulfilled");
      expect(tokens.length).toBeLessThanOrEqual(1);
      for (const x of answers) if (x.status === "rejected") expect(x.reason).toMatchObject({ error: "invalid_grant" });
      expect(await grantsOfAlice()).toBe(before + 1);
    }
  });

  test("redeemed on B, the code presented again on A is refused and ends what it gave", async () => {
    const c = await codeOnA();
    const got = await exchange(b, c);
    expect(got.access_token).toBeString();
    await expect(exchange(a, c)).rejects.toMatchObject({ error: "invalid_grant", message: expect.stringContaining("used already") });
    // The refresh token of that grant is refused on either node.
    await expect(refresh(b, String(got.refresh_token))).rejects.toMatchObject({ error: "invalid_grant" });
  });

  test("a refresh token rotated on A is refused when replayed on B, and the grant ends on both", async () => {
    const first = await exchange(a, await codeOnA());
    const rotated = await refresh(a, String(first.refresh_token));
    expect(rotated.refresh_token).toBeString();
    expect(rotated.refresh_token).not.toBe(first.refresh_token);
    await expect(refresh(b, String(first.refresh_token))).rejects.toMatchObject({
      error: "invalid_grant",
      message: expect.stringContaining("used already"),
    });
    // The replay revoked the family: the token A gave is refused on A too, and the access token is on the revocation list.
    await expect(refresh(a, String(rotated.refresh_token))).rejects.toMatchObject({ error: "invalid_grant" });
    const authenticated = async () => t.services.auth.authenticate(`Bearer ${String(rotated.access_token)}`, "corpus:search");
    expect(
      await authenticated().then(
        () => "accepted",
        () => "refused",
      ),
    ).toBe("refused");
  });

  test("one refresh token rotated on A and B at once: at most one rotation answers", async () => {
    const first = await exchange(a, await codeOnA());
    const answers = await Promise.allSettled([refresh(a, String(first.refresh_token)), refresh(b, String(first.refresh_token))]);
    expect(answers.filter((x) => x.status === "fulfilled").length).toBeLessThanOrEqual(1);
    expect(answers.filter((x) => x.status === "rejected").length).toBeGreaterThanOrEqual(1);
  });

  test("a session made on A signs in on B; ended on B, it is gone on A", async () => {
    const s = await a.createSession("alice");
    expect(await b.session(s.id)).toEqual({ user: "alice", csrf: s.csrf });
    await b.endSession(s.id);
    expect(await a.session(s.id)).toBeUndefined();
  });

  test("a user's grants and sessions forgotten on B are gone on A", async () => {
    const got = await exchange(a, await codeOnA());
    const s = await a.createSession("alice");
    expect((await a.connectedApps("alice")).length).toBeGreaterThan(0);
    await b.forgetUser("alice");
    expect(await a.connectedApps("alice")).toEqual([]);
    expect(await a.session(s.id)).toBeUndefined();
    await expect(refresh(a, String(got.refresh_token))).rejects.toMatchObject({ error: "invalid_grant" });
    expect(await a.store.rowsOf("alice")).toBe(0);
  });

  test("attack: an access token revoked (RFC 7009) on a node with the shared auth room is on the revocation list when the answer comes", async () => {
    // The revocation was written without being awaited: the client was told its token was revoked
    // while every node still accepted it, and a write that failed was never told at all.
    const auth = await AuthService.create(testConfig(), new Database(":memory:"), randomBytes(32), Date.now, db.client());
    const c = new OAuthServer(t.config, auth, t.services.accounts, new PostgresOAuthStore(db.client()));
    const got = await exchange(c, await codeOnA());
    let locked!: () => void;
    let release!: () => void;
    const isLocked = new Promise<void>((resolve) => (locked = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    // Writes to the revocation list wait until the lock is let go; reads do not (EXCLUSIVE mode).
    const lock = db.client().begin(async (tx) => {
      await tx.unsafe(`LOCK TABLE ${REVOKED_TABLE} IN EXCLUSIVE MODE`);
      locked();
      await held;
    });
    await isLocked;
    let letGo = false;
    const timer = setTimeout(() => {
      letGo = true;
      release();
    }, 50);
    await c.revoke(new URLSearchParams({ client_id: clientId, token: String(got.access_token) }), null, "192.0.2.1");
    const answeredAfterWrite = letGo;
    clearTimeout(timer);
    release();
    await lock;
    expect(answeredAfterWrite).toBe(true);
    const refused = await Promise.resolve(auth.authenticate(`Bearer ${String(got.access_token)}`, "corpus:search")).catch(
      (e: unknown) => e,
    );
    expect(refused).toBeInstanceOf(AuthFailure);
  });

  test("PostgreSQL holds no code, refresh token, session id or client secret a client could present", async () => {
    const secretClient = await a.register({ redirect_uris: [REDIRECT], client_name: "Confidential" }, "192.0.2.2");
    const c = await codeOnA();
    const s = await a.createSession("alice");
    const got = await exchange(b, c);
    const dump = JSON.stringify(
      await Promise.all(Object.values(OAUTH_TABLES).map((table) => db.database.admin.unsafe(`SELECT * FROM ${table}`))),
    );
    expect(dump).toContain("alice");
    expect(dump).toContain("Confidential");
    for (const plain of [c.code, String(got.refresh_token), s.id, String(secretClient.client_secret)]) {
      expect(plain.length).toBeGreaterThan(20);
      expect(dump).not.toContain(plain);
    }
  });

  test("a user erased inside the deletion's transaction: rolled back, nothing is lost; committed, nothing is left", async () => {
    const store = new PostgresOAuthStore(db.client());
    await store.putSession("sess-tx", "tx-user", "c", NOW + 3600);
    await granted(store, "g-tx", "c-any", "tx-user");
    await erasedInDeletion(
      db.sql,
      {
        erase: async (tx) => store.within(tx).forgetUser("tx-user", NOW),
        rowsIn: async (tx) => store.within(tx).rowsOf("tx-user"),
        rows: async () => store.rowsOf("tx-user"),
      },
      3,
    );
  });
});
