import { describe, expect, test } from "bun:test";
import { Elysia } from "elysia";
import { errorMapper } from "../../src/http/errors";
import { beginRequest, infoOf, requestContext } from "../../src/http/request-context";
import { constantBody, HSTS_HEADER, jsonResponse, responseWriter, SECURITY_HEADERS } from "../../src/http/response";
import { createLogger } from "../../src/log";
import { postJson, req, testApp } from "../helpers";

// Over plain HTTP (every in-process request here is http://localhost) no HSTS: it belongs to
// responses sent over HTTPS (RFC 6797 section 7.2; second document part 4).
const expectHeaders = (r: Response, secure = false) => {
  expect(r.headers.get("x-content-type-options")).toBe("nosniff");
  expect(r.headers.get("x-frame-options")).toBe("DENY");
  expect(r.headers.get("x-xss-protection")).toBe("1; mode=block");
  expect(r.headers.get("strict-transport-security")).toBe(secure ? "max-age=31536000; includeSubDomains" : null);
};

/** An app with the response writer and the error mapper, and the four kinds of answer: JSON, a raw Response, text, a thrown error. */
function fourAnswers() {
  return new Elysia()
    .use(responseWriter)
    .use(errorMapper(createLogger("CRITICAL")))
    .get("/ok", () => ({ ok: true }))
    .get("/raw", () => new Response("raw"))
    .get("/text", () => "plain")
    .get("/boom", () => {
      throw new Error("x");
    });
}

/** One request of each kind the whole app answers apart: a route, no route (404), a body too large (413), the docs page, a UI asset. */
const eachKind = () => [
  req("/"),
  req("/no/such/route"),
  postJson("/", "x".repeat(5000), { "content-length": "5000" }),
  req("/openapi"),
  req("/openapi/assets/swagger-ui.css"),
];

/** The app's answers to `requests`, one after another. */
async function answers(app: { handle(r: Request): Promise<Response> | Response }, requests: Request[]): Promise<Response[]> {
  const out: Response[] = [];
  for (const r of requests) out.push(await app.handle(r));
  return out;
}

describe("the response writer: security headers (second document part 4) on every response", () => {
  test("the four headers and values of the specification, HSTS apart", () => {
    expect(Object.keys(SECURITY_HEADERS)).toHaveLength(3);
    expect(HSTS_HEADER).toEqual({ "strict-transport-security": "max-age=31536000; includeSubDomains" });
  });

  test("Strict-Transport-Security on every response over HTTPS (D27), on none over HTTP: JSON, raw, text, errors, 404s, a timeout", async () => {
    const app = new Elysia()
      .use(responseWriter)
      .use(errorMapper(createLogger("CRITICAL")))
      .use(requestContext)
      .onTransform(({ request, info }) => {
        infoOf(request, info).fixedHeaders = Object.freeze({ "x-ratelimit-limit-minute": "60" });
      })
      .get("/ok", () => ({ ok: true }))
      .get("/raw", () => new Response("raw"))
      .get("/text", () => "plain")
      .get("/boom", () => {
        throw new Error("x");
      });
    for (const path of ["/ok", "/raw", "/text", "/boom", "/missing"]) {
      expectHeaders(await app.handle(new Request(`https://localhost${path}`)), true);
      expectHeaders(await app.handle(new Request(`http://localhost${path}`)), false);
    }
    // The listener says which it is (an HTTP/1.0 request without Host has no scheme in its URL).
    const overTls = new Request("http://localhost/ok");
    const info = beginRequest(overTls, "127.0.0.1");
    info.secure = true;
    expectHeaders(await app.handle(overTls), true);
    expectHeaders(jsonResponse({ type: "service_unavailable" }, 503, info), true);
  });

  test("on a plain route, a raw Response, text, a thrown error and a 404 (errors reach it through the error mapper)", async () => {
    const app = fourAnswers();
    for (const path of ["/ok", "/raw", "/text", "/boom", "/missing"]) {
      const r = await app.handle(req(path));
      expectHeaders(r);
      // The request id on every response, successes too: an operator finds the log line of any.
      expect(r.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{20}$/);
    }
    expect(await (await app.handle(req("/text"))).text()).toBe("plain");
  });

  test("JSON values: status and headers set by earlier stages are kept, the body is the JSON", async () => {
    const app = new Elysia().use(responseWriter).get("/made", ({ set }) => {
      set.status = 202;
      set.headers["x-ratelimit-limit-minute"] = "60";
      return { list: [1, 2], note: "é" };
    });
    const r = await app.handle(req("/made"));
    expect(r.status).toBe(202);
    expect(r.headers.get("content-type")).toBe("application/json;charset=utf-8");
    expect(r.headers.get("x-ratelimit-limit-minute")).toBe("60");
    expectHeaders(r);
    expect(await r.json()).toEqual({ list: [1, 2], note: "é" });
  });

  test("shared and own headers from RequestInfo, on JSON, errors and raw Responses; one response's own headers never reach the next", async () => {
    const shared = Object.freeze({ "x-ratelimit-limit-minute": "60" });
    let n = 0;
    const app = new Elysia()
      .use(responseWriter)
      .use(errorMapper(createLogger("CRITICAL")))
      .use(requestContext)
      .onTransform(({ request, info: scoped }) => {
        const info = infoOf(request, scoped);
        info.fixedHeaders = shared;
        info.ownHeaders = { "x-ratelimit-remaining-minute": String(59 - n++) };
      })
      .get("/json", () => ({ ok: true }))
      .get("/raw", () => new Response("raw"))
      .get("/fail", () => {
        throw new Error("x");
      });
    const responses = [];
    for (const path of ["/json", "/json", "/raw", "/fail", "/json"]) responses.push(await app.handle(req(path)));
    expect(responses.map((r) => r.headers.get("x-ratelimit-remaining-minute"))).toEqual(["59", "58", "57", "56", "55"]);
    for (const r of responses) {
      expect(r.headers.get("x-ratelimit-limit-minute")).toBe("60");
      expectHeaders(r);
    }
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(5);
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{20}$/);
    // The prepared list itself is untouched: a response without own headers has none.
    const plain = await new Elysia()
      .use(responseWriter)
      .get("/", () => ({ a: 1 }))
      .handle(req("/"));
    expect(plain.headers.get("x-ratelimit-limit-minute")).toBeNull();
    expect(plain.headers.get("x-ratelimit-remaining-minute")).toBeNull();
  });

  test("a constant body is serialised once and frozen; its headers", async () => {
    const body = constantBody({ status: "ok" });
    expect(Object.isFrozen(body)).toBe(true);
    const r = jsonResponse(body, 200, "req_x");
    expect(await r.text()).toBe('{"status":"ok"}');
    expect(r.headers.get("x-request-id")).toBe("req_x");
    expect(jsonResponse(body, 404, "req_x").headers.get("x-request-id")).toBe("req_x");
  });

  test("the exact bytes of a JSON body reach a stage that asked for them", async () => {
    const seen: Array<[number, string]> = [];
    const app = new Elysia()
      .use(responseWriter)
      .use(requestContext)
      .onTransform(({ request, info }) => {
        infoOf(request, info).onJsonWritten = (status, text) => seen.push([status, text]);
      })
      .get("/x", () => ({ b: 2, a: 1 }));
    const request = req("/x");
    const info = beginRequest(request, "127.0.0.1");
    const text = await (await app.handle(request)).text();
    expect(seen).toEqual([[200, text]]);
    expect(info.status).toBe(200);
  });

  test("on every response of the app: success, 404, 400, 413, docs, UI assets", async () => {
    const { app } = await testApp({ CORPUS_MAX_REQUEST_SIZE: "1024" });
    const responses = await answers(app, [...eachKind(), req("/api/auth/health"), req("/openapi/json")]);
    for (const r of responses) expectHeaders(r);
  });

  test("X-Request-Id on every response of the app, each its own: success, 404, 405, 413, docs, assets, a preflight, /mcp", async () => {
    const { app } = await testApp({ CORPUS_MAX_REQUEST_SIZE: "1024", CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://app.example" });
    const responses = await answers(app, [
      ...eachKind(),
      req("/v1/query"),
      req("/v1/query", { method: "OPTIONS", headers: { origin: "https://app.example", "access-control-request-method": "POST" } }),
      postJson("/mcp", { jsonrpc: "2.0", id: 1, method: "ping" }),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 404, 413, 200, 200, 405, 204, 401]);
    const ids = responses.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{20}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  // The response writer hands Elysia a finished Response: a route whose stages are all
  // synchronous answers without a promise, so the listener's timeout has nothing to watch.
  test("a synchronous route's app.fetch returns a settled Response, not a Promise", async () => {
    const { app } = await testApp();
    const answer = app.fetch(req("/"));
    expect(answer).toBeInstanceOf(Response);
    expect((answer as Response).status).toBe(200);
    expect((answer as Response).headers.get("content-type")).toBe("application/json;charset=utf-8");
  });
});
