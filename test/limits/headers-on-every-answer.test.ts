// Issue 13 finding 11: D16 puts the six X-RateLimit-* headers "on every response of those
// endpoints, errors included", but the refusals of stages before the guard (Host, Origin,
// Content-Type, body size, JSON), a bad Idempotency-Key and the 503 timeout went out without
// them; /mcp's 503 lacked its per-IP headers. Driven against the real app.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { ERROR_SHAPES } from "../../src/app";
import { beginRequest } from "../../src/http/request-context";
import { withTimeout } from "../../src/http/timeout";
import { bearer, postJson, req, testApp } from "../helpers";
import { steppedClock } from "../support/stepped-clock";

setDefaultTimeout(60_000);

const SIX = ["limit-minute", "remaining-minute", "reset-minute", "limit-day", "remaining-day", "reset-day"].map((n) => `x-ratelimit-${n}`);

/** The six headers of a response, by name (null where missing). */
const sixOf = (r: Response) => Object.fromEntries(SIX.map((n) => [n, r.headers.get(n)]));

function chunked(bytes: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= bytes) return controller.close();
      sent += 16_384;
      controller.enqueue(new Uint8Array(16_384).fill(0x20));
    },
  });
}

describe("the six X-RateLimit-* headers on every answer of a limited route (D16, issue 13 finding 11)", () => {
  test("refusals before the caller is known: 403 Host, 403 Origin, 415, 413 declared and chunked: whole windows", async () => {
    const { app } = await testApp({
      CORPUS_MAX_REQUEST_SIZE: "4096",
      CORPUS_LIMIT_QUERY_PER_MINUTE: "7",
      CORPUS_LIMIT_QUERY_PER_DAY: "70",
    });
    const body = JSON.stringify({ query: "x" });
    const cases: Array<[string, Request, number]> = [
      ["Host", postJson("/v1/query", body, { host: "attacker.example" }), 403],
      ["Origin", postJson("/v1/query", body, { origin: "http://attacker.example" }), 403],
      ["Content-Type", req("/v1/query", { method: "POST", body, headers: { "content-type": "text/plain" } }), 415],
      [
        "declared size",
        req("/v1/query", {
          method: "POST",
          body: "x".repeat(5000),
          headers: { "content-type": "application/json", "content-length": "5000" },
        }),
        413,
      ],
      [
        "chunked size",
        // @ts-expect-error: Bun and the fetch standard need duplex for a streamed body
        req("/v1/query", { method: "POST", body: chunked(100_000), duplex: "half", headers: { "content-type": "application/json" } }),
        413,
      ],
    ];
    for (const [name, request, status] of cases) {
      const r = await app.handle(request);
      expect({ name, status: r.status }).toEqual({ name, status });
      expect({ name, six: sixOf(r) }).toEqual({
        name,
        six: {
          "x-ratelimit-limit-minute": "7",
          "x-ratelimit-remaining-minute": "7",
          "x-ratelimit-reset-minute": expect.stringMatching(/^\d+$/),
          "x-ratelimit-limit-day": "70",
          "x-ratelimit-remaining-day": "70",
          "x-ratelimit-reset-day": expect.stringMatching(/^\d+$/),
        },
      });
    }
    // The other limited routes too; a route that is not limited gets none.
    for (const [method, path] of [
      ["POST", "/v1/deep_search"],
      ["DELETE", "/v1/delete_my_data"],
      ["POST", "/v1/connectors"],
      ["POST", "/v1/webhooks"],
    ]) {
      const r = await app.handle(
        req(path!, {
          method,
          headers: { host: "attacker.example", "content-type": "application/json" },
          body: method === "POST" ? "{}" : undefined,
        }),
      );
      expect({ path, status: r.status, limit: r.headers.get("x-ratelimit-limit-minute") }).toEqual({
        path,
        status: 403,
        limit: expect.stringMatching(/^\d+$/),
      });
    }
    const other = await app.handle(req("/v1/connectors", { headers: { host: "attacker.example" } }));
    expect(other.status).toBe(403);
    expect(other.headers.get("x-ratelimit-limit-minute")).toBeNull();
  });

  test("refusals once the caller is known: unparsable and too deep JSON, a bad Idempotency-Key: the caller's own windows", async () => {
    const { app, services } = await testApp({ CORPUS_LIMIT_QUERY_PER_MINUTE: "7" });
    const token = (await services.auth.issuer.issue("alice", ["corpus:search"] as never)).token;
    const cases: Array<[string, Request]> = [
      ["not JSON", postJson("/v1/query", "{nope", bearer(token))],
      ["too deep", postJson("/v1/query", "[".repeat(1000), bearer(token))],
      ["not JSON, with a key", postJson("/v1/query", "{nope", { ...bearer(token), "idempotency-key": "k1" })],
      ["bad key", postJson("/v1/query", { query: "x" }, { ...bearer(token), "idempotency-key": "a b" })],
    ];
    const remaining: string[] = [];
    for (const [name, request] of cases) {
      const r = await app.handle(request);
      expect({ name, status: r.status }).toEqual({ name, status: 400 });
      expect({ name, missing: SIX.filter((n) => r.headers.get(n) === null) }).toEqual({ name, missing: [] });
      remaining.push(r.headers.get("x-ratelimit-remaining-minute")!);
    }
    // Counted before its body was read (without a key), then given back as the caller's mistake (D31); with a key, not yet counted.
    expect(remaining).toEqual(["7", "7", "7", "7"]);
  });

  test("the 503 timeout of /v1/query carries the caller's headers; /mcp's its per-IP headers and the message's id", async () => {
    const { app, services } = await testApp({ CORPUS_LIMIT_QUERY_PER_MINUTE: "7", CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "9" });
    // The search never ends; the timeout runs out only once a request has reached it (counted,
    // its headers gathered): a stepped clock, not a 50 ms race with a loaded machine.
    let reached = Promise.withResolvers<void>();
    services.query.run = () => {
      reached.resolve();
      return new Promise(() => {});
    };
    const token = (await services.auth.issuer.issue("alice", ["corpus:search"] as never)).token;
    const time = steppedClock();
    const handle = withTimeout((r) => app.handle(r), 0.05, { shapes: ERROR_SHAPES, clock: time.clock });
    const timed = async (r: Request) => {
      reached = Promise.withResolvers<void>();
      const answer = handle(r);
      await reached.promise;
      time.advance(50);
      return answer;
    };
    const rest = postJson("/v1/query", { query: "x" }, bearer(token));
    beginRequest(rest, "192.0.2.31");
    const late = await timed(rest);
    expect(late.status).toBe(503);
    expect(await late.json()).toEqual({ type: "service_unavailable", message: "request timed out after 0.05 s" });
    expect(sixOf(late)).toMatchObject({ "x-ratelimit-limit-minute": "7", "x-ratelimit-remaining-minute": "6" });
    expect(SIX.filter((n) => late.headers.get(n) === null)).toEqual([]);

    const rpc = postJson(
      "/mcp",
      { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "corpus_search", arguments: { query: "x" } } },
      { accept: "application/json, text/event-stream", ...bearer(token) },
    );
    beginRequest(rpc, "192.0.2.31");
    const mcp = await timed(rpc);
    expect(mcp.status).toBe(503);
    expect(await mcp.json()).toEqual({ jsonrpc: "2.0", id: 7, error: { code: -32603, message: "request timed out after 0.05 s" } });
    expect({
      limit: mcp.headers.get("x-ratelimit-limit"),
      remaining: mcp.headers.get("x-ratelimit-remaining"),
      reset: mcp.headers.get("x-ratelimit-reset"),
    }).toEqual({
      limit: "9",
      remaining: "8",
      reset: expect.stringMatching(/^\d+$/),
    });
  });
});
