// The OpenAPI document is complete and valid (issue 18, gap 4): a real OpenAPI 3.0 validator
// accepts it; each route lists the statuses the shared stages can give it; the rate-limit
// headers it names are the ones a limited response carries; integers are integers (and a
// string is refused); no enum default pre-fills a form; no internal reference in a text.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { bearer, postJson, req, testApp, tokenFor } from "../helpers";

type Json = Record<string, any>;
let t: Awaited<ReturnType<typeof testApp>>;
let doc: Json;
let token: string;

beforeAll(async () => {
  t = await testApp();
  token = await tokenFor(t.services, "alice", ["corpus:search", "corpus:read"]);
  doc = (await (await t.app.handle(req("/openapi/json"))).json()) as Json;
});
afterAll(() => t.services.close());

/** Every schema object of the document, depth first. */
function* nodes(value: unknown): Generator<Json> {
  if (Array.isArray(value)) for (const v of value) yield* nodes(v);
  else if (value && typeof value === "object") {
    yield value as Json;
    for (const v of Object.values(value)) yield* nodes(v);
  }
}

const headerNames = (r: Response) => {
  const names: string[] = [];
  r.headers.forEach((_, name) => names.push(name));
  return names;
};
const lower = (names: string[]) => names.map((n) => n.toLowerCase()).sort();

describe("the OpenAPI document (issue 18, gap 4)", () => {
  test("passes an OpenAPI 3.0 schema validator", async () => {
    const result = await new Validator().validate(doc);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  test("each route lists the statuses of the shared stages, with the spec's bodies", () => {
    const query = doc.paths["/v1/query"].post;
    expect(Object.keys(query.responses).sort()).toEqual([
      "200",
      "400",
      "401",
      "403",
      "404",
      "409",
      "413",
      "415",
      "429",
      "500",
      "503",
      "507",
    ]);
    // The request timeout's 503 (D17), with Retry-After, on every route.
    expect(query.responses["503"].headers).toHaveProperty("Retry-After");
    expect(query.responses["429"].content["application/json"].schema.properties.error.properties).toHaveProperty("retry_after_seconds");
    expect(query.responses["401"].headers).toHaveProperty("WWW-Authenticate");
    expect(Object.keys(doc.paths["/"].get.responses).sort()).toEqual(["200", "403", "500", "503"]);
    expect(doc.paths["/v1/delete_my_data"].delete.responses).toHaveProperty("429");
    // /mcp: its body, its own statuses, and JSON-RPC error objects but its 429.
    const mcp = doc.paths["/mcp"].post;
    expect(mcp.requestBody.content["application/json"].schema.oneOf).toHaveLength(2);
    expect(Object.keys(mcp.responses).sort()).toEqual(["200", "202", "400", "401", "403", "404", "406", "413", "415", "429", "500", "503"]);
    expect(mcp.responses["503"].content["application/json"].schema.properties).toHaveProperty("jsonrpc");
    expect(mcp.responses["401"].content["application/json"].schema.properties).toHaveProperty("jsonrpc");
    expect(mcp.responses["429"].content["application/json"].schema.properties).toHaveProperty("retry_after");
  });

  test("the X-RateLimit-* headers it names are those a limited answer carries, on every status", async () => {
    const r = await t.app.handle(postJson("/v1/query", { query: "invoices" }, bearer(token)));
    expect(r.status).toBe(200);
    const sent = headerNames(r).filter((h) => h.startsWith("x-ratelimit-"));
    const query = doc.paths["/v1/query"].post.responses;
    expect(lower(Object.keys(query["200"].headers))).toEqual(lower(sent));
    expect(lower(Object.keys(query["400"].headers))).toEqual(lower(sent));
    expect(query["429"].headers).toHaveProperty("Retry-After");
    const m = await t.app.handle(
      postJson("/mcp", { jsonrpc: "2.0", id: 1, method: "ping" }, { ...bearer(token), accept: "application/json, text/event-stream" }),
    );
    const mcpSent = headerNames(m).filter((h) => h.startsWith("x-ratelimit-"));
    expect(mcpSent.length).toBeGreaterThan(0);
    expect(lower(Object.keys(doc.paths["/mcp"].post.responses["200"].headers).filter((h) => h.startsWith("X-RateLimit")))).toEqual(
      lower(mcpSent),
    );
  });

  test("guarded POSTs take Idempotency-Key (D11)", () => {
    for (const path of ["/v1/query", "/v1/deep_search", "/v1/connectors", "/v1/webhooks"]) {
      expect(doc.paths[path].post.parameters.map((p: Json) => p.name)).toContain("Idempotency-Key");
    }
  });

  test("integers are integers, and a numeric string is refused", async () => {
    const max = doc.paths["/v1/query"].post.requestBody.content["application/json"].schema.properties.max_results;
    expect(max).toMatchObject({ type: "integer", minimum: 1, maximum: 100 });
    expect(max.anyOf).toBeUndefined();
    expect(
      [...nodes(doc)].some((n) => Array.isArray(n.anyOf) && n.anyOf.some((m: Json) => m?.format === "integer" && m?.type === "string")),
    ).toBe(false);
    const r = await t.app.handle(postJson("/v1/query", { query: "invoices", max_results: "2" }, bearer(token)));
    expect(r.status).toBe(400);
  });

  test("no enum default pre-fills the UI's forms; no internal decision number in a text", () => {
    expect([...nodes(doc)].filter((n) => Array.isArray(n.enum) && "default" in n)).toEqual([]);
    const texts = [...nodes(doc)].flatMap((n) => [n.description, n.summary].filter((x): x is string => typeof x === "string"));
    expect(texts.filter((x) => /\bD\d{1,2}\b/.test(x))).toEqual([]);
  });

  test("/openapi/ leads to the page, whose relative link to the document then resolves", async () => {
    const r = await t.app.handle(req("/openapi/"));
    expect(r.status).toBe(308);
    expect(r.headers.get("location")).toBe("/openapi");
  });
});
