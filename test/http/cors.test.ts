import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { req, testApp, testConfig } from "../helpers";
import { launchChromium } from "../support/chromium";

setDefaultTimeout(60_000);

const preflight = (origin: string) =>
  req("/", {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization" },
  });

describe("CORS from CORPUS_CORS_ALLOW_ORIGINS_CSV", () => {
  test("with no origins configured, no origin is ever reflected", async () => {
    const { app } = await testApp();
    for (const r of [
      await app.handle(req("/", { headers: { origin: "https://evil.example" } })),
      await app.handle(preflight("https://evil.example")),
    ]) {
      expect(r.headers.get("access-control-allow-origin")).toBeNull();
      expect(r.headers.get("access-control-allow-credentials")).toBeNull();
    }
  });

  test("an allowed origin gets the specification's headers", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://app.example.com,https://other.example.com" });
    const simple = await app.handle(req("/", { headers: { origin: "https://app.example.com" } }));
    expect(simple.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    const pre = await app.handle(preflight("https://other.example.com"));
    expect(pre.status).toBeLessThan(300);
    expect(pre.headers.get("access-control-allow-origin")).toBe("https://other.example.com");
    expect(pre.headers.get("access-control-allow-methods")).toBe("GET, POST, PATCH, DELETE, OPTIONS");
    expect(pre.headers.get("access-control-allow-headers")).toStartWith("Content-Type, Authorization, ");
  });

  test("an origin not in the list is not reflected", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://app.example.com" });
    const r = await app.handle(req("/", { headers: { origin: "https://app.example.com.evil.example" } }));
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const p = await app.handle(preflight("https://evil.example"));
    expect(p.headers.get("access-control-allow-origin")).toBeNull();
  });
});

const names = (value: string | null) =>
  (value ?? "")
    .split(",")
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);

describe("CORS for browser clients (issue 18 gap 3; second document part 4, D11, D16, D21)", () => {
  const ORIGIN = "https://app.example.com";

  test("second document part 4 + D11 + D21: the preflight allows Idempotency-Key, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID besides Content-Type and Authorization", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: ORIGIN });
    const asked = [
      "content-type",
      "authorization",
      "idempotency-key",
      "mcp-session-id",
      "mcp-protocol-version",
      "last-event-id",
      "mcp-method",
      "mcp-name",
    ];
    const pre = await app.handle(
      req("/mcp", {
        method: "OPTIONS",
        headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": asked.join(",") },
      }),
    );
    expect(pre.status).toBe(204);
    const allowed = names(pre.headers.get("access-control-allow-headers"));
    for (const name of asked) expect(allowed).toContain(name);
    // A fixed list, not an echo of what was asked.
    const other = await app.handle(
      req("/mcp", {
        method: "OPTIONS",
        headers: { origin: ORIGIN, "access-control-request-method": "POST", "access-control-request-headers": "x-anything" },
      }),
    );
    expect(names(other.headers.get("access-control-allow-headers"))).not.toContain("x-anything");
  });

  test("D16 + second document part 8: Access-Control-Expose-Headers lists X-RateLimit-*, Retry-After, Mcp-Session-Id, X-Request-Id, never the request's own header names", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: ORIGIN });
    const r = await app.handle(req("/v1/connectors", { headers: { origin: ORIGIN, "x-private-header-name": "1", cookie: "a=b" } }));
    expect(r.status).toBe(401);
    const exposed = names(r.headers.get("access-control-expose-headers"));
    for (const name of [
      "x-ratelimit-limit",
      "x-ratelimit-remaining",
      "x-ratelimit-reset",
      "x-ratelimit-remaining-minute",
      "x-ratelimit-reset-day",
      "retry-after",
      "mcp-session-id",
      "x-request-id",
      "www-authenticate",
    ])
      expect(exposed).toContain(name);
    for (const echoed of ["x-private-header-name", "cookie", "origin", "host"]) expect(exposed).not.toContain(echoed);
  });

  test("second document part 4: the preflight 204 carries the security headers (HSTS over HTTPS only)", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: ORIGIN });
    for (const scheme of ["http", "https"]) {
      const pre = await app.handle(
        new Request(`${scheme}://localhost/v1/query`, {
          method: "OPTIONS",
          headers: {
            origin: ORIGIN,
            "access-control-request-method": "POST",
            "access-control-request-headers": "content-type,authorization",
          },
        }),
      );
      expect(pre.status).toBe(204);
      expect(pre.headers.get("x-content-type-options")).toBe("nosniff");
      expect(pre.headers.get("x-frame-options")).toBe("DENY");
      expect(pre.headers.get("x-xss-protection")).toBe("1; mode=block");
      expect(pre.headers.get("strict-transport-security")).toBe(scheme === "https" ? "max-age=31536000; includeSubDomains" : null);
      expect(pre.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    }
  });
});

describe("CORS in a real headless Chromium (issue 18 gap 3): a page on an allowed origin calls REST and /mcp as a browser client written from the spec would", () => {
  let running: Running | undefined;
  let page: ReturnType<typeof Bun.serve> | undefined;
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
    page?.stop(true);
    await running?.stop();
  });

  test("D11 Idempotency-Key on a POST, the limits read from the response, the MCP session header sent and read, an error's X-Request-Id read", async () => {
    page = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch: () => new Response("<!doctype html><title>app</title>", { headers: { "content-type": "text/html" } }),
    });
    const origin = `http://127.0.0.1:${page.port}`;
    running = await startServer(
      testConfig({ CORPUS_PORT: "0", CORPUS_CORS_ALLOW_ORIGINS_CSV: origin, CORPUS_WEBHOOK_ALLOW_PRIVATE: "true" }),
      createLogger("ERROR", memorySink().sink),
    );
    const token = (await running.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write", "corpus:search"])).token;
    browser = await launchChromium();
    const tab = await browser.newPage();
    await tab.goto(`${origin}/`);
    const seen = await tab.evaluate(
      async ({ base, token, origin }) => {
        const auth = { authorization: `Bearer ${token}` };
        const webhook = await fetch(`${base}/v1/webhooks`, {
          method: "POST",
          headers: { ...auth, "content-type": "application/json", "idempotency-key": "k-1" },
          body: JSON.stringify({ url: `${origin}/hook`, events: ["user.deleted"] }),
        });
        const mcp = {
          ...auth,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": "2025-06-18",
        };
        const init = await fetch(`${base}/mcp`, {
          method: "POST",
          headers: mcp,
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "browser", version: "1" } },
          }),
        });
        const session = init.headers.get("mcp-session-id");
        const list = await fetch(`${base}/mcp`, {
          method: "POST",
          headers: { ...mcp, "mcp-session-id": session ?? "" },
          body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
        });
        const missing = await fetch(`${base}/v1/connectors/nope`, { method: "DELETE", headers: auth });
        return {
          webhook: webhook.status,
          remaining: webhook.headers.get("x-ratelimit-remaining-minute"),
          session,
          mcpLimit: init.headers.get("x-ratelimit-limit"),
          tools: ((await list.json()) as { result: { tools: Array<{ name: string }> } }).result.tools.map((t) => t.name),
          missing: missing.status,
          requestId: missing.headers.get("x-request-id"),
        };
      },
      { base: running.url, token, origin },
    );
    expect(seen.webhook).toBe(200);
    expect(Number(seen.remaining)).toBeGreaterThan(0);
    expect(seen.session).toBeTruthy();
    expect(Number(seen.mcpLimit)).toBe(60);
    expect(seen.tools.sort()).toEqual(["corpus_answer", "corpus_search", "fetch", "open_connectors", "search"]);
    expect(seen.missing).toBe(404);
    expect(seen.requestId).toMatch(/^req_/);
  });
});
