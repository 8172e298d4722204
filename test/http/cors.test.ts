import { describe, expect, test } from "bun:test";
import { req, testApp } from "../helpers";

const preflight = (origin: string) =>
  req("/", { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization" } });

describe("CORS from CORPUS_CORS_ALLOW_ORIGINS_CSV", () => {
  test("with no origins configured, no origin is ever reflected", async () => {
    const { app } = await testApp();
    for (const r of [await app.handle(req("/", { headers: { origin: "https://evil.example" } })), await app.handle(preflight("https://evil.example"))]) {
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
    expect(pre.headers.get("access-control-allow-headers")).toBe("Content-Type, Authorization");
  });

  test("an origin not in the list is not reflected", async () => {
    const { app } = await testApp({ CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://app.example.com" });
    const r = await app.handle(req("/", { headers: { origin: "https://app.example.com.evil.example" } }));
    expect(r.headers.get("access-control-allow-origin")).toBeNull();
    const p = await app.handle(preflight("https://evil.example"));
    expect(p.headers.get("access-control-allow-origin")).toBeNull();
  });
});
