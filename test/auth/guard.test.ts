// The guard before protected REST routes: auth and scopes (D4, D5), rate limits (D16),
// idempotency (D11). Driven in-process against the real app with test routes behind it.
import { describe, expect, test } from "bun:test";
import { Elysia, t } from "elysia";
import { createApp } from "../../src/app";
import { guard } from "../../src/auth/guard";
import { createLogger, memorySink } from "../../src/log";
import { createServices } from "../../src/services";
import { bearer, postJson, req, testConfig } from "../helpers";
import { migratedDataDir } from "../support/migrated";

/** A clock the test moves. */
function clock(start = Date.UTC(2026, 10, 22, 10, 0, 0)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (v: number) => (t = v) };
}

let executions = 0;
/** "slow" queries wait here until the test lets them finish. */
let slow = Promise.withResolvers<void>();

async function guardedApp(env: Record<string, string> = {}, now = clock().now, dataDir = migratedDataDir(), logs = memorySink()) {
  const config = testConfig({ CORPUS_DATA_DIR: dataDir, ...env });
  const services = await createServices(config, createLogger((env.CORPUS_LOG_LEVEL as "INFO") ?? "ERROR", logs.sink), now);
  const routes = new Elysia()
    .use(guard(services))
    .post(
      "/v1/query",
      async ({ body, principal }) => {
        executions++;
        if (body.query === "slow") await slow.promise;
        if (body.query === "crash") throw new Error("boom");
        return { query_id: `qry_${executions}`, query: body.query, user: principal.user };
      },
      { guard: { route: "POST /v1/query" }, body: t.Object({ query: t.String({ minLength: 1 }) }) },
    )
    .get("/v1/connectors", ({ principal }) => ({ user: principal.user }), { guard: { route: "GET /v1/connectors" } });
  const app = createApp(services).use(routes);
  const token = async (user = "alice", scopes = ["corpus:search", "connectors:read"]) =>
    (await services.auth.issuer.issue(user, scopes as never)).token;
  return { app, services, token, config };
}

const query = (tok: string, body: unknown = { query: "invoices" }, headers: Record<string, string> = {}) =>
  postJson("/v1/query", body, { ...bearer(tok), ...headers });

describe("auth on REST routes (D4, D5, D15)", () => {
  test("no token is 401 unauthorized with WWW-Authenticate, even with a bad body", async () => {
    const { app } = await guardedApp();
    const r = await app.handle(postJson("/v1/query", { nonsense: true }));
    expect(r.status).toBe(401);
    expect(await r.json()).toEqual({ type: "unauthorized", message: "Unauthorized: a bearer token is required" });
    expect(r.headers.get("www-authenticate")).toBe('Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource"');
  });

  test("a token in the query string is never accepted", async () => {
    const { app, token } = await guardedApp();
    const tok = await token();
    const r = await app.handle(req(`/v1/connectors?access_token=${tok}`));
    expect(r.status).toBe(401);
    const r2 = await app.handle(postJson(`/v1/query?token=${tok}`, { query: "x" }));
    expect(r2.status).toBe(401);
  });

  test("a valid token without the route's scope is 403 forbidden", async () => {
    const { app, token } = await guardedApp();
    const r = await app.handle(query(await token("alice", ["connectors:read"])));
    expect(r.status).toBe(403);
    expect(((await r.json()) as { type: string }).type).toBe("forbidden");
    expect(r.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="corpus:search"');
  });

  test("the principal reaches the handler", async () => {
    const { app, token } = await guardedApp();
    const r = await app.handle(req("/v1/connectors", { headers: bearer(await token("bob")) }));
    expect(await r.json()).toEqual({ user: "bob" });
  });
});

describe("a token seen for the first time (verified, then the request runs again)", () => {
  test("the body arrives whole, the handler runs once, one log line, limits counted once", async () => {
    const logs = memorySink();
    const { app, token } = await guardedApp({ CORPUS_LOG_LEVEL: "INFO" }, clock().now, migratedDataDir(), logs);
    const before = executions;
    const tok = await token();
    const first = await app.handle(query(tok, { query: "first sight" }, { "idempotency-key": "k-first" }));
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ query: "first sight", user: "alice" });
    expect(executions).toBe(before + 1);
    expect(first.headers.get("x-ratelimit-remaining-minute")).toBe("59");
    expect(first.headers.get("x-frame-options")).toBe("DENY");
    const replay = await app.handle(query(tok, { query: "first sight" }, { "idempotency-key": "k-first" }));
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(executions).toBe(before + 1);
    const second = await app.handle(query(tok, { query: "again" }));
    expect(second.headers.get("x-ratelimit-remaining-minute")).toBe("58");
    await Bun.sleep(20);
    const lines = logs.records().filter((l) => l.message === "request" && l.path === "/v1/query");
    expect(lines.map((l) => l.status)).toEqual([200, 200, 200]);
    expect(new Set(lines.map((l) => l.request_id)).size).toBe(3);
  });

  test("a bad token seen for the first time is 401 with the reason, on GET and POST", async () => {
    const { app, token } = await guardedApp();
    const forged = `${(await token()).slice(0, -4)}AAAA`;
    for (const r of [await app.handle(req("/v1/connectors", { headers: bearer(forged) })), await app.handle(query(forged))]) {
      expect(r.status).toBe(401);
      expect(((await r.json()) as { type: string }).type).toBe("unauthorized");
      expect(r.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    }
  });
});

describe("rate limits per user and endpoint (D16, first document part 8)", () => {
  test("the 60th request passes, the 61st is 429; headers count down; the minute rolls over", async () => {
    const c = clock(Date.UTC(2026, 10, 22, 10, 0, 5));
    const { app, token } = await guardedApp({}, c.now);
    const tok = await token();
    let last: Response | undefined;
    for (let i = 1; i <= 60; i++) {
      last = await app.handle(query(tok));
      expect(last.status).toBe(200);
    }
    expect(last!.headers.get("x-ratelimit-limit-minute")).toBe("60");
    expect(last!.headers.get("x-ratelimit-remaining-minute")).toBe("0");
    expect(last!.headers.get("x-ratelimit-reset-minute")).toBe(String(Date.UTC(2026, 10, 22, 10, 1, 0) / 1000));
    expect(last!.headers.get("x-ratelimit-limit-day")).toBe("6000");
    expect(last!.headers.get("x-ratelimit-remaining-day")).toBe("5940");
    expect(last!.headers.get("x-ratelimit-reset-day")).toBe(String(Date.UTC(2026, 10, 23) / 1000));

    const over = await app.handle(query(tok));
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({
      error: { type: "rate_limited", message: "Rate limit exceeded; retry after 55 s", retry_after_seconds: 55 },
    });
    expect(over.headers.get("retry-after")).toBe("55");
    expect(over.headers.get("x-ratelimit-remaining-minute")).toBe("0");
    // Every request in the cooldown is 429 too, and is not counted.
    c.advance(30_000);
    expect((await app.handle(query(tok))).status).toBe(429);
    c.set(Date.UTC(2026, 10, 22, 10, 1, 0));
    const next = await app.handle(query(tok));
    expect(next.status).toBe(200);
    expect(next.headers.get("x-ratelimit-remaining-minute")).toBe("59");
    expect(next.headers.get("x-ratelimit-remaining-day")).toBe("5939");
  });

  test("limits are per user and per endpoint", async () => {
    const { app, token } = await guardedApp({ CORPUS_LIMIT_QUERY_PER_MINUTE: "2" });
    const a = await token("alice");
    const b = await token("bob");
    await app.handle(query(a));
    await app.handle(query(a));
    expect((await app.handle(query(a))).status).toBe(429);
    expect((await app.handle(query(b))).status).toBe(200);
    expect((await app.handle(req("/v1/connectors", { headers: bearer(a) }))).status).toBe(200);
  });

  test("the day limit holds across minutes and resets at midnight UTC", async () => {
    const c = clock(Date.UTC(2026, 10, 22, 23, 58, 0));
    const { app, token } = await guardedApp({ CORPUS_LIMIT_QUERY_PER_DAY: "3" }, c.now);
    const tok = await token();
    for (let i = 0; i < 3; i++) expect((await app.handle(query(tok))).status).toBe(200);
    c.advance(61_000);
    const over = await app.handle(query(tok));
    expect(over.status).toBe(429);
    expect(((await over.json()) as any).error.retry_after_seconds).toBe(59);
    c.set(Date.UTC(2026, 10, 23, 0, 0, 0));
    const fresh = await app.handle(query(tok));
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get("x-ratelimit-remaining-day")).toBe("2");
  });

  test("errors after authentication carry the six headers too", async () => {
    const { app, token } = await guardedApp();
    const r = await app.handle(query(await token(), { query: "" }));
    expect(r.status).toBe(400);
    for (const h of ["limit-minute", "remaining-minute", "reset-minute", "limit-day", "remaining-day", "reset-day"]) {
      expect(r.headers.get(`x-ratelimit-${h}`)).not.toBeNull();
    }
  });

  test("401 and 403 carry the six headers as well: a caller's own after a refusal of scope, whole windows for no caller", async () => {
    const c = clock(Date.UTC(2026, 10, 22, 10, 0, 5));
    const { app, token, services } = await guardedApp({}, c.now);
    const alice = await token("alice");
    await app.handle(query(alice));
    const forged = `${alice.slice(0, -4)}AAAA`;
    const refusals = [
      await app.handle(query("")), // no token
      await app.handle(postJson("/v1/query", { query: "x" }, { authorization: "Basic abc" })),
      await app.handle(query(forged)), // first seen: verified, refused later (run again)
      await app.handle(query(forged)),
    ];
    for (const r of refusals) {
      expect(r.status).toBe(401);
      expect(r.headers.get("x-ratelimit-limit-minute")).toBe("60");
      expect(r.headers.get("x-ratelimit-remaining-minute")).toBe("60");
      expect(r.headers.get("x-ratelimit-reset-minute")).toBe(String(Date.UTC(2026, 10, 22, 10, 1, 0) / 1000));
      expect(r.headers.get("x-ratelimit-limit-day")).toBe("6000");
      expect(r.headers.get("x-ratelimit-remaining-day")).toBe("6000");
      expect(r.headers.get("x-ratelimit-reset-day")).toBe(String(Date.UTC(2026, 10, 23) / 1000));
    }
    // A user's token without the scope: their own counts, not counted again.
    const weak = (await services.auth.issuer.issue("alice", ["connectors:read"])).token;
    const forbidden = await app.handle(query(weak));
    expect(forbidden.status).toBe(403);
    expect(forbidden.headers.get("x-ratelimit-remaining-minute")).toBe("59");
    expect(forbidden.headers.get("x-ratelimit-remaining-day")).toBe("5999");
    expect(forbidden.headers.get("x-ratelimit-reset-day")).toBe(String(Date.UTC(2026, 10, 23) / 1000));
    expect((await app.handle(query(alice))).headers.get("x-ratelimit-remaining-minute")).toBe("58");
    // Routes without a limit get none of them.
    expect((await app.handle(req("/v1/connectors"))).headers.get("x-ratelimit-limit-minute")).toBeNull();
  });

  test("a restart keeps the day count and the revocations", async () => {
    const dir = migratedDataDir();
    const c = clock();
    const first = await guardedApp({ CORPUS_LIMIT_QUERY_PER_DAY: "5" }, c.now, dir);
    const tok = await first.token();
    const revoked = await first.services.auth.issuer.issue("mallory", ["corpus:search"]);
    for (let i = 0; i < 3; i++) await first.app.handle(query(tok));
    first.services.auth.store.revokeToken(revoked.jti, revoked.expiresAt);
    first.services.auth.store.revokeUser("trent");
    const trent = await first.services.auth.issuer.issue("trent", ["corpus:search"]);
    await first.services.close();

    c.advance(120_000);
    const second = await guardedApp({ CORPUS_LIMIT_QUERY_PER_DAY: "5" }, c.now, dir);
    const r = await second.app.handle(query(tok));
    expect(r.status).toBe(200);
    expect(r.headers.get("x-ratelimit-remaining-day")).toBe("1");
    expect((await second.app.handle(query(revoked.token))).status).toBe(401);
    expect((await second.app.handle(query(trent.token))).status).toBe(401);
    await second.services.close();
  });
});

describe("Idempotency-Key (D11)", () => {
  test("a retry gets the stored response byte for byte, once executed, not counted", async () => {
    const { app, token } = await guardedApp();
    const tok = await token();
    const before = executions;
    const first = await app.handle(query(tok, { query: "march invoices" }, { "idempotency-key": "k-1" }));
    const firstText = await first.text();
    const again = await app.handle(query(tok, { query: "march invoices" }, { "idempotency-key": "k-1" }));
    expect(again.status).toBe(first.status);
    expect(await again.text()).toBe(firstText);
    expect(executions - before).toBe(1);
    expect(again.headers.get("x-ratelimit-remaining-minute")).toBe(first.headers.get("x-ratelimit-remaining-minute"));
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("x-frame-options")).toBe("DENY");
    // Without the key, the same body runs again.
    const third = await app.handle(query(tok, { query: "march invoices" }));
    expect(await third.text()).not.toBe(firstText);
  });

  test("the same key with another body is 409 conflict", async () => {
    const { app, token } = await guardedApp();
    const tok = await token();
    await app.handle(query(tok, { query: "a" }, { "idempotency-key": "k-2" }));
    const r = await app.handle(query(tok, { query: "b" }, { "idempotency-key": "k-2" }));
    expect(r.status).toBe(409);
    expect(((await r.json()) as { type: string }).type).toBe("conflict");
  });

  test("keys are per user: another user's same key runs", async () => {
    const { app, token } = await guardedApp();
    const a = await app.handle(query(await token("alice"), { query: "a" }, { "idempotency-key": "shared" }));
    const b = await app.handle(query(await token("bob"), { query: "a" }, { "idempotency-key": "shared" }));
    expect(((await b.json()) as { user: string }).user).toBe("bob");
    expect(((await a.json()) as { user: string }).user).toBe("alice");
  });

  test("concurrent duplicates: exactly one execution, the other is 409 while it runs", async () => {
    const { app, token } = await guardedApp();
    const tok = await token();
    const before = executions;
    slow = Promise.withResolvers<void>();
    const both = [
      app.handle(query(tok, { query: "slow" }, { "idempotency-key": "k-3" })),
      app.handle(query(tok, { query: "slow" }, { "idempotency-key": "k-3" })),
    ];
    // The second is refused while the first still runs, saying when to ask again; then the first finishes.
    const refused = await Promise.race(both);
    expect([refused.status, refused.headers.get("retry-after")]).toEqual([409, "1"]);
    slow.resolve();
    const [x, y] = await Promise.all(both);
    expect([x!.status, y!.status].sort()).toEqual([200, 409]);
    expect(executions - before).toBe(1);
    const later = await app.handle(query(tok, { query: "slow" }, { "idempotency-key": "k-3" }));
    expect(later.status).toBe(200);
    expect(executions - before).toBe(1);
  });

  test("a failed request gives its key up, so a retry runs again", async () => {
    const { app, token } = await guardedApp();
    const tok = await token();
    expect((await app.handle(query(tok, { query: "crash" }, { "idempotency-key": "k-4" }))).status).toBe(500);
    await Bun.sleep(10);
    expect((await app.handle(query(tok, { query: "crash" }, { "idempotency-key": "k-4" }))).status).toBe(500);
  });

  test("a replay survives a restart and expires after 24 hours; stored responses are sealed", async () => {
    const dir = migratedDataDir();
    const c = clock();
    const first = await guardedApp({}, c.now, dir);
    const tok = await first.token();
    const text = await (await first.app.handle(query(tok, { query: "secret-marker-xyz" }, { "idempotency-key": "k-5" }))).text();
    const raw = first.services.db.query<{ response: Uint8Array }, []>("SELECT response FROM idempotency_records").get()!;
    expect(Buffer.from(raw.response).includes(Buffer.from("secret-marker-xyz"))).toBe(false);
    await first.services.close();
    const second = await guardedApp({}, c.now, dir);
    expect(await (await second.app.handle(query(tok, { query: "secret-marker-xyz" }, { "idempotency-key": "k-5" }))).text()).toBe(text);
    c.advance(24 * 3600 * 1000 + 1000);
    const tok2 = await second.token();
    const fresh = await second.app.handle(query(tok2, { query: "secret-marker-xyz" }, { "idempotency-key": "k-5" }));
    expect(await fresh.text()).not.toBe(text);
  });

  test("an unusable key is 400", async () => {
    const { app, token } = await guardedApp();
    const r = await app.handle(query(await token(), { query: "a" }, { "idempotency-key": "x".repeat(300) }));
    expect(r.status).toBe(400);
  });
});
