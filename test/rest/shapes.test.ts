// Request shapes (first document part 4's request tables, D7): a field of another shape is a
// 400 naming it, never silently dropped (issue 18, gap 5). Refused before anything is searched,
// so an empty server is enough.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { bearer, postJson, testApp, tokenFor } from "../helpers";

let t: Awaited<ReturnType<typeof testApp>>;
let token: string;

beforeAll(async () => {
  t = await testApp();
  token = await tokenFor(t.services, "alice", ["corpus:search", "corpus:read"]);
});
afterAll(() => t.services.close());

const post = (path: string, body: unknown) => t.app.handle(postJson(path, body, bearer(token)));

async function refused(path: string, body: unknown, field: string) {
  const r = await post(path, body);
  expect(r.status).toBe(400);
  const error = (await r.json()) as { type: string; message: string };
  expect(error.type).toBe("bad_request");
  expect(error.message.startsWith(`${field}: not a field of shape`)).toBe(true);
}

describe("POST /v1/query: fields of another shape are refused (part 4, D7)", () => {
  test("shape B (query) refuses shape A's top_k and filters", async () => {
    await refused("/v1/query", { query: "invoices", top_k: 3 }, "top_k");
    await refused("/v1/query", { query: "invoices", filters: { source_type: "email" } }, "filters");
  });
  test("shape A (q) refuses connectors, max_results, query and conversation_id", async () => {
    await refused("/v1/query", { q: "invoices", connectors: ["docs"] }, "connectors");
    await refused("/v1/query", { q: "invoices", max_results: 2 }, "max_results");
    await refused("/v1/query", { q: "invoices", query: "other" }, "query");
    await refused("/v1/query", { q: "invoices", conversation_id: null }, "conversation_id");
  });
  test("shape C (conversation_id) refuses max_results, top_k and filters", async () => {
    await refused("/v1/query", { query: "invoices", conversation_id: null, max_results: 2 }, "max_results");
    await refused("/v1/query", { query: "invoices", conversation_id: "", top_k: 2 }, "top_k");
    await refused("/v1/query", { query: "invoices", conversation_id: null, filters: {} }, "filters");
  });
  test("each shape's own fields are answered", async () => {
    expect((await post("/v1/query", { query: "invoices", connectors: [], max_results: 2 })).status).toBe(200);
    expect((await post("/v1/query", { q: "invoices", top_k: 2, filters: { source_type: "file" } })).status).toBe(200);
    expect((await post("/v1/query", { query: "invoices", connectors: [], conversation_id: null })).status).toBe(200);
  });
});

describe("a __proto__ key, which a copy by assignment turns into a prototype past the schema", () => {
  test("is refused at any depth, on every JSON route (attack report of this session)", async () => {
    for (const [path, body] of [
      ["/v1/query", '{"query":"x","__proto__":{"top_k":3}}'],
      ["/v1/query", '{"q":"x","filters":{"__proto__":{"source_type":"email"}}}'],
      ["/v1/deep_search", '{"query":"x","__proto__":{}}'],
    ] as const) {
      // A string body is sent as it is: the key must reach the server, not be dropped by JSON.stringify.
      const r = await post(path, body);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { message: string }).message).toBe("body: the key __proto__ is not allowed");
    }
    // As a value it is only text.
    expect((await post("/v1/query", { query: "what is __proto__?" })).status).toBe(200);
  });
});

describe("POST /v1/deep_search: fields of another shape are refused (part 4, D7)", () => {
  test("shape B/C (query) refuses shape A's time_range and filters", async () => {
    await refused("/v1/deep_search", { query: "invoices", time_range: "2026-01-01..2026-02-01" }, "time_range");
    await refused("/v1/deep_search", { query: "invoices", filters: { connectors: ["docs"] } }, "filters");
  });
  test("shape A (q) refuses max_results, date_from and date_to", async () => {
    await refused("/v1/deep_search", { q: "invoices", max_results: 3 }, "max_results");
    await refused("/v1/deep_search", { q: "invoices", date_from: "2026-01-01" }, "date_from");
    await refused("/v1/deep_search", { q: "invoices", date_to: "2026-01-01" }, "date_to");
  });
  test("shape A: time_range and filters' dates together are refused, not one of them dropped", async () => {
    const r = await post("/v1/deep_search", { q: "invoices", time_range: "2026-01-01..2026-02-01", filters: { date_from: "2025-01-01" } });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { message: string }).message).toStartWith("time_range:");
  });
  test("each shape's own fields are answered", async () => {
    expect(
      (await post("/v1/deep_search", { query: "invoices", max_results: 3, date_from: "2026-01-01", date_to: "2026-12-31" })).status,
    ).toBe(200);
    expect((await post("/v1/deep_search", { query: "invoices", top_k: 3 })).status).toBe(200);
    expect((await post("/v1/deep_search", { q: "invoices", top_k: 3, time_range: "2026-01-01..2026-02-01" })).status).toBe(200);
  });
});
