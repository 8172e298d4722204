import { describe, expect, test } from "bun:test";
import { withTimeout } from "../../src/http/timeout";
import { req } from "../helpers";

describe("request timeout (D17)", () => {
  test("a request still running after the timeout is 503 with a clear body and the security headers", async () => {
    let timedOut = false;
    const handler = withTimeout(
      () => new Promise<Response>((resolve) => setTimeout(() => resolve(new Response("late")), 3000)),
      1,
      () => (timedOut = true),
    );
    const started = performance.now();
    const r = await handler(req("/slow"));
    expect(performance.now() - started).toBeLessThan(2500);
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ type: "service_unavailable", message: "request timed out after 1 s" });
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    expect(timedOut).toBe(true);
  });

  test("on /mcp the timeout is a JSON-RPC error, which is all an MCP client reads (it was a REST body)", async () => {
    const handler = withTimeout(() => new Promise<Response>(() => {}), 1);
    const r = await handler(req("/mcp", { method: "POST" }));
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "request timed out after 1 s" } });
    expect(r.headers.get("retry-after")).toBe("1");
  });

  test("a fast request is untouched", async () => {
    const handler = withTimeout(() => new Response("fast"), 1);
    const r = await handler(req("/fast"));
    expect(await r.text()).toBe("fast");
  });
});
