// Hostile JSON (issue 13 item 2): nesting past the bound is a clear 400 on every route that
// takes JSON, at once, and the server keeps answering.
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, nestsDeeperThan, TOO_DEEP_MESSAGE } from "../../src/http/json-body";
import { bearer, postJson, req, testApp } from "../helpers";

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as never;

describe("JSON bodies nest at most 32 levels", () => {
  test("the scan: brackets inside strings do not count, escapes are skipped", () => {
    expect(nestsDeeperThan("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan("[".repeat(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ q: `${"[".repeat(1000)}\\"{{{` }), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\\\"}${"[".repeat(40)}`, MAX_JSON_DEPTH)).toBe(true);
  });

  test('every JSON route answers 400 at once to 200 kB of [[[[ and 600 kB of {"a":{"a":…', async () => {
    const t = await testApp({ CORPUS_AUTH_DISABLED: "true" });
    const token = (await t.services.auth.issuer.issue("nester", ALL)).token;
    const arrays = "[".repeat(200_000);
    const objects = `${'{"a":'.repeat(120_000)}1${"}".repeat(120_000)}`;
    for (const path of ["/v1/query", "/v1/deep_search", "/v1/connectors", "/v1/webhooks"]) {
      for (const body of [arrays, objects]) {
        const started = performance.now();
        const r = await t.app.handle(postJson(path, body, bearer(token)));
        expect(r.status).toBe(400);
        expect(await r.json()).toEqual({ type: "bad_request", message: TOO_DEEP_MESSAGE });
        expect(performance.now() - started).toBeLessThan(5_000);
      }
    }
    for (const body of [arrays, objects]) {
      const r = await t.app.handle(postJson("/mcp", body, { accept: "application/json, text/event-stream" }));
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: number } }).error.code).toBe(-32600);
    }
    expect((await t.app.handle(req("/"))).status).toBe(200);
    await t.services.close();
  });
});
