// Issue 13 finding 4: bodies were parsed before the token was checked. A 2 MB object of 200,000
// keys with no token cost 0.5-0.9 s of the one thread on /v1/query, /v1/connectors,
// /v1/webhooks and /v1/deep_search; adding connectors and webhooks had no limit at all. Driven
// in-process against the real app, with the body's bytes in memory and its length declared as
// the listener gives them; the parses of the body are counted where they happen.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { bearer, req, testApp } from "../helpers";

setDefaultTimeout(60_000);

/**
 * `{"0":1,"1":1,…}` of about 200 KB: parsing it builds an object of ~20,000 keys. A tenth of the
 * attack's 2 MB: the parses are counted, so its size proves nothing more, and the four 2 MB bodies
 * below cost a second of the unit suite's CPU (issue 35).
 */
function wideJson(bytes = 200_000): string {
  const parts: string[] = [];
  let size = 2;
  for (let i = 0; size < bytes - 16; i++) {
    const part = `"${i.toString(16)}":1`;
    parts.push(part);
    size += part.length + 1;
  }
  return `{${parts.join(",")}}`;
}

const WIDE = wideJson();
const WIDE_BYTES = new TextEncoder().encode(WIDE);
const ROUTES = ["/v1/query", "/v1/connectors", "/v1/webhooks", "/v1/deep_search"];

type App = { handle(r: Request): Promise<Response> | Response };

function post(path: string, body: string | Uint8Array<ArrayBuffer>, tok?: string): Request {
  const bytes = typeof body === "string" ? new TextEncoder().encode(body) : body;
  return req(path, {
    method: "POST",
    body: bytes,
    headers: { "content-type": "application/json", "content-length": String(bytes.length), ...(tok ? bearer(tok) : {}) },
  });
}

/**
 * The response to `make()`'s request, and how many times the app parsed a text at least half as
 * long as the wide body meanwhile (JSON.parse, or a Request's own json()). Counted, not timed
 * against a parse (a busy machine slows either at any moment).
 */
async function parsesOfTheBody(app: App, make: () => Request): Promise<{ status: number; parses: number; response: Response }> {
  const parse = JSON.parse;
  const json = Request.prototype.json;
  let parses = 0;
  JSON.parse = ((text: string, reviver?: (key: string, value: unknown) => unknown) => {
    if (String(text).length >= WIDE.length / 2) parses++;
    return parse(text, reviver);
  }) as typeof JSON.parse;
  Request.prototype.json = function (this: Request) {
    parses++;
    return json.call(this);
  };
  try {
    const response = await app.handle(make());
    return { status: response.status, parses, response };
  } finally {
    JSON.parse = parse;
    Request.prototype.json = json;
  }
}

describe("the caller is known before the body is parsed (issue 13 finding 4)", () => {
  test("the wide body takes a parse of its own (at 2 MB half a second of the one thread, measured): the parses counted below are of it", () => {
    expect(Object.keys(JSON.parse(WIDE) as object).length).toBeGreaterThan(15_000);
  });

  test("no token: 401 in the spec's shape without a parse of the body on every guarded POST route", async () => {
    const { app } = await testApp();
    for (const path of ROUTES) {
      const { parses, status, response } = await parsesOfTheBody(app, () => post(path, WIDE_BYTES));
      expect({ path, status, parses }).toEqual({ path, status: 401, parses: 0 });
      expect(response.headers.get("www-authenticate")).toStartWith("Bearer ");
      expect(await response.json()).toEqual({ type: "unauthorized", message: "Unauthorized: a bearer token is required" });
    }
  });

  test("a token without the route's scope: 403 without a parse either", async () => {
    const { app, services } = await testApp();
    const narrow = (await services.auth.issuer.issue("mallory", ["corpus:read"] as never)).token;
    for (const path of ["/v1/query", "/v1/connectors", "/v1/webhooks"]) {
      const { parses, status } = await parsesOfTheBody(app, () => post(path, WIDE_BYTES, narrow));
      expect({ path, status, parses }).toEqual({ path, status: 403, parses: 0 });
    }
  });

  test("the body is still parsed and judged once the caller is known: a wide body is a 400, bad JSON too", async () => {
    const { app, services } = await testApp();
    const alice = (await services.auth.issuer.issue("alice", ["corpus:search"] as never)).token;
    // Parsed once, here: the count above would see a parse before the caller is known.
    const { parses, response: r } = await parsesOfTheBody(app, () => post("/v1/query", WIDE_BYTES, alice));
    expect({ status: r.status, parses }).toEqual({ status: 400, parses: 1 });
    expect(((await r.json()) as { type: string }).type).toBe("bad_request");
    const deep = await app.handle(post("/v1/query", "[".repeat(10_000), alice));
    expect(await deep.json()).toEqual({ type: "bad_request", message: "body: JSON nested deeper than 32 levels" });
    const broken = await app.handle(post("/v1/query", "{nope", alice));
    expect(await broken.json()).toEqual({ type: "bad_request", message: "body: not valid JSON" });
  });
});

describe("adding connectors and webhooks is limited per user (D16, issue 13 finding 4)", () => {
  test("POST /v1/connectors and POST /v1/webhooks: the six headers, 429 past the minute's limit, the next user unaffected", async () => {
    const at = Date.now();
    const { app, services } = await testApp(
      {
        CORPUS_LIMIT_CONNECTORS_PER_MINUTE: "2",
        CORPUS_LIMIT_WEBHOOKS_PER_MINUTE: "2",
        CORPUS_LIMIT_WEBHOOKS_PER_DAY: "50",
        // Requests that are carried out, so that they count (a refused one is given back, D31).
        CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1",
        CORPUS_WEBHOOK_ALLOW_PRIVATE: "true",
      },
      // A stopped clock: the minute's window must not roll over between the second and third.
      () => at,
    );
    const issue = async (user: string) => (await services.auth.issuer.issue(user, ["connectors:read", "connectors:write"] as never)).token;
    const [mallory, gina] = [await issue("mallory"), await issue("gina")];
    for (const [path, body, limits] of [
      [
        "/v1/connectors",
        { id: "x", kind: "imap", config: { host: "127.0.0.1", port: 9, secure: false, user: "u", password: "p" } },
        ["2", "1000"],
      ],
      ["/v1/webhooks", { url: "http://127.0.0.1:9/hook", events: ["user.deleted"] }, ["2", "50"]],
    ] as const) {
      const statuses: number[] = [];
      let last: Response | undefined;
      for (let i = 0; i < 3; i++) {
        last = await app.handle(post(path, JSON.stringify(body), mallory));
        statuses.push(last.status);
        expect(last.headers.get("x-ratelimit-limit-minute")).toBe(limits[0]);
        expect(last.headers.get("x-ratelimit-limit-day")).toBe(limits[1]);
        expect(last.headers.get("x-ratelimit-remaining-minute")).toBe(String(Math.max(0, 1 - i)));
        expect(last.headers.get("x-ratelimit-reset-minute")).toMatch(/^\d+$/);
        expect(last.headers.get("x-ratelimit-remaining-day")).toMatch(/^\d+$/);
        expect(last.headers.get("x-ratelimit-reset-day")).toMatch(/^\d+$/);
      }
      // The first two are carried out, the third is not even read.
      expect({ path, third: statuses[2] }).toEqual({ path, third: 429 });
      expect(statuses.slice(0, 2).every((s) => s !== 429)).toBe(true);
      expect(((await last!.json()) as { error: { type: string } }).error.type).toBe("rate_limited");
      expect(Number(last!.headers.get("retry-after"))).toBeGreaterThan(0);
      // Over the limit, a wide body costs no parsing either.
      const { parses, status } = await parsesOfTheBody(app, () => post(path, WIDE_BYTES, mallory));
      expect({ path, status, parses }).toEqual({ path, status: 429, parses: 0 });
      expect((await app.handle(post(path, JSON.stringify(body), gina))).status).not.toBe(429);
    }
  });
});
