// Issue 13 finding 11 (its last point): a path routed under other methods answered 404 "no such
// route"; it is 405 method_not_allowed with the Allow header (RFC 9110 15.5.6).
import { describe, expect, test } from "bun:test";
import { allowedMethods } from "../../src/http/methods";
import { req, testApp } from "../helpers";

describe("405 for a known path under another method", () => {
  test("on the real app: the spec's shape and Allow; an unknown path stays 404", async () => {
    const { app } = await testApp();
    for (const [method, path, allow] of [
      ["GET", "/v1/query", "POST"],
      ["PUT", "/v1/query", "POST"],
      ["OPTIONS", "/v1/query", "POST"],
      ["PATCH", "/v1/connectors", "GET, POST"],
      ["GET", "/v1/connectors/docs", "DELETE, PATCH"],
      ["POST", "/", "GET"],
    ] as const) {
      const r = await app.handle(
        req(path, {
          method,
          ...(method === "GET" || method === "OPTIONS" ? {} : { body: "{}", headers: { "content-type": "application/json" } }),
        }),
      );
      expect({ method, path, status: r.status, allow: r.headers.get("allow") }).toEqual({ method, path, status: 405, allow });
      expect(await r.json()).toEqual({ type: "method_not_allowed", message: `${method} is not allowed on this path; use ${allow}` });
    }
    const missing = await app.handle(req("/v1/nothing"));
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ type: "not_found", message: "no such route or resource" });
  });

  test("parameters match one segment, a trailing slash is the same path, a catch-all counts for nothing", () => {
    const of = allowedMethods(() => [
      { method: "DELETE", path: "/v1/connectors/:id" },
      { method: "GET", path: "/v1/connectors" },
      { method: "POST", path: "/v1/connectors" },
      { method: "GET", path: "/openapi/*" },
      { method: "OPTIONS", path: "/*" },
    ]);
    expect(of("/v1/connectors/")).toEqual(["GET", "POST"]);
    expect(of("/v1/connectors/a")).toEqual(["DELETE"]);
    expect(of("/v1/connectors/a/b")).toEqual([]);
    expect(of("/openapi/x/y.js")).toEqual(["GET"]);
    expect(of("/v1/connectorsX")).toEqual([]);
    // The CORS preflight's catch-all makes no path a known one.
    expect(of("/no/such")).toEqual([]);
  });
});
