import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { beginRequest } from "../../src/http/request-context";
import { ipLimit } from "../../src/limits/ip-limit";
import { bucketMigrations, TokenBuckets } from "../../src/limits/token-bucket";
import { openDatabase } from "../../src/store/database";
import { postJson, tempDir, testApp } from "../helpers";

async function appWith(perMinute: number, trusted = "") {
  const { app } = await testApp();
  const buckets = new TokenBuckets(openDatabase(tempDir(), bucketMigrations), perMinute);
  return app.use(new Elysia().use(ipLimit(buckets, trusted)).post("/mcp", () => ({ ok: true }), { ipLimit: true }));
}

const from = (ip: string, headers: Record<string, string> = {}) => {
  const r = postJson("/mcp", {}, headers);
  beginRequest(r, ip);
  return r;
};

describe("the /mcp per-IP limit (second document parts 7, 8)", () => {
  test("headers on every response; 429 body and Retry-After when exhausted", async () => {
    const app = await appWith(3);
    for (let i = 0; i < 3; i++) {
      const r = await app.handle(from("198.51.100.1"));
      expect(r.status).toBe(200);
      expect(r.headers.get("x-ratelimit-limit")).toBe("3");
      expect(r.headers.get("x-ratelimit-remaining")).toBe(String(2 - i));
      expect(Number(r.headers.get("x-ratelimit-reset"))).toBeGreaterThan(Date.now() / 1000);
    }
    const over = await app.handle(from("198.51.100.1"));
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: "Rate limit exceeded", retry_after: 20 });
    expect(over.headers.get("retry-after")).toBe("20");
    expect(over.headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await app.handle(from("198.51.100.2"))).status).toBe(200);
  });

  test("X-Forwarded-For counts only from a trusted proxy", async () => {
    const app = await appWith(1, "10.0.0.0/8");
    expect((await app.handle(from("203.0.113.5", { "x-forwarded-for": "1.1.1.1" }))).status).toBe(200);
    // Untrusted socket: the header is ignored, the socket address is limited.
    expect((await app.handle(from("203.0.113.5", { "x-forwarded-for": "2.2.2.2" }))).status).toBe(429);
    // Trusted proxy: each forwarded client has its own bucket.
    expect((await app.handle(from("10.0.0.9", { "x-forwarded-for": "3.3.3.3" }))).status).toBe(200);
    expect((await app.handle(from("10.0.0.9", { "x-forwarded-for": "4.4.4.4" }))).status).toBe(200);
    expect((await app.handle(from("10.0.0.9", { "x-forwarded-for": "3.3.3.3" }))).status).toBe(429);
  });
});
