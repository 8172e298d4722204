import { describe, expect, test } from "bun:test";
import { ERROR_SHAPES } from "../../src/app";
import { withTimeout } from "../../src/http/timeout";
import { req } from "../helpers";
import { steppedClock } from "../support/stepped-clock";

const pendingStill = (p: Response | Promise<Response>) => Bun.peek(p) === p;

describe("request timeout (D17)", () => {
  test("a request still running after the timeout is 503 with a clear body and the security headers", async () => {
    const time = steppedClock();
    let timedOut = false;
    const late = Promise.withResolvers<Response>();
    const handler = withTimeout(() => late.promise, 1, {
      onTimeout: () => {
        timedOut = true;
      },
      clock: time.clock,
    });
    const answer = handler(req("/slow"));
    time.advance(999);
    expect(pendingStill(answer)).toBe(true);
    time.advance(1);
    const r = await answer;
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ type: "service_unavailable", message: "request timed out after 1 s" });
    expect(r.headers.get("x-frame-options")).toBe("DENY");
    expect(r.headers.get("x-request-id")).toMatch(/^req_/);
    expect(timedOut).toBe(true);
    // Nothing left to watch: the sweep stops; the late answer goes nowhere.
    expect(time.sweeping).toBe(false);
    late.resolve(new Response("late"));
  });

  test("on /mcp the timeout is a JSON-RPC error, which is all an MCP client reads (it was a REST body)", async () => {
    const time = steppedClock();
    const handler = withTimeout(() => new Promise<Response>(() => {}), 1, { clock: time.clock, shapes: ERROR_SHAPES });
    const answer = handler(req("/mcp", { method: "POST" }));
    time.advance(1_000);
    const r = await answer;
    expect(r.status).toBe(503);
    expect(await r.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32603, message: "request timed out after 1 s" } });
    expect(r.headers.get("retry-after")).toBe("1");
  });

  test("an answer within the timeout is passed on; a fast request is untouched", async () => {
    const time = steppedClock();
    const handler = withTimeout(async () => new Response("in time"), 1, { clock: time.clock });
    expect(await (await handler(req("/soon"))).text()).toBe("in time");
    const fast = withTimeout(() => new Response("fast"), 1);
    const r = await fast(req("/fast"));
    expect(await r.text()).toBe("fast");
  });

  test("the real clock still times out (one request, a short timeout)", async () => {
    const handler = withTimeout(() => new Promise<Response>(() => {}), 0.02);
    expect((await handler(req("/slow"))).status).toBe(503);
  });
});
