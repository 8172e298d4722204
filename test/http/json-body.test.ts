// Hostile JSON (issue 13 item 2): nesting past the bound is a clear 400 on every route that
// takes JSON, at once, and the server keeps answering.
import { describe, expect, test } from "bun:test";
import { MAX_JSON_DEPTH, NOT_OBJECT_MESSAGE, nestsDeeperThan, PROTO_KEY_MESSAGE, TOO_DEEP_MESSAGE } from "../../src/http/json-body";
import { bearer, postJson, req, testApp } from "../helpers";
import { howItGrows } from "../support/growth";

const ALL = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as never;

describe("JSON bodies nest at most 32 levels", () => {
  test("the scan: brackets inside strings do not count, escapes are skipped", () => {
    expect(nestsDeeperThan("[".repeat(MAX_JSON_DEPTH) + "]".repeat(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan("[".repeat(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(JSON.stringify({ q: `${"[".repeat(1000)}\\"{{{` }), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(`{"a":"\\\\"}${"[".repeat(40)}`, MAX_JSON_DEPTH)).toBe(true);
  });

  test('every JSON route answers 400 at once to 200 kB of [[[[ and 600 kB of {"a":{"a":…', async () => {
    // Timing by a ratio asks /v1/query some eighty times a minute.
    const many = Object.fromEntries(
      ["QUERY", "DEEP_SEARCH", "CONNECTORS", "WEBHOOKS"].flatMap((r) => [
        [`CORPUS_LIMIT_${r}_PER_MINUTE`, "1000"],
        [`CORPUS_LIMIT_${r}_PER_DAY`, "100000"],
      ]),
    );
    const t = await testApp({ CORPUS_AUTH_DISABLED: "true", ...many });
    const token = (await t.services.auth.issuer.issue("nester", ALL)).token;
    const arraysOf = (n: number) => "[".repeat(n);
    const objectsOf = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;
    const [arrays, objects] = [arraysOf(200_000), objectsOf(120_000)];
    for (const path of ["/v1/query", "/v1/deep_search", "/v1/connectors", "/v1/webhooks"]) {
      for (const [body, nested] of [
        [arrays, arraysOf],
        [objects, objectsOf],
      ] as const) {
        const refused = async (n: number) => {
          const r = await t.app.handle(postJson(path, nested(n), bearer(token)));
          expect(r.status).toBe(400);
          expect(await r.json()).toEqual({ type: "bad_request", message: TOO_DEEP_MESSAGE });
        };
        await refused(body === arrays ? 200_000 : 120_000);
        // At once: in linear time, not a parse or a validation of every level (every route reads its body with parseJsonText).
        if (path === "/v1/query") expect(await howItGrows(refused, body === arrays ? 12_500 : 7_500)).toBe("linear");
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

describe("a body that is JSON but not an object, and a value outside its list (outside walkthrough; D15: the field and the rule)", () => {
  test("every guarded JSON route: an array, a string, a number or null is 'body: expected a JSON object' (it was '0: unexpected property' or a missing field)", async () => {
    const t = await testApp();
    const token = (await t.services.auth.issuer.issue("shaper", ALL)).token;
    for (const path of ["/v1/query", "/v1/deep_search", "/v1/connectors", "/v1/webhooks"])
      for (const body of ['"hi"', '["query"]', '[{"query":"x"}]', "null", "123", "[]"]) {
        const r = await t.app.handle(postJson(path, body, bearer(token)));
        expect([path, body, r.status, await r.json()]).toEqual([path, body, 400, { type: "bad_request", message: NOT_OBJECT_MESSAGE }]);
      }
    await t.services.close();
  });

  test("an enumerated field names its values; deep_search's time_range names itself", async () => {
    const t = await testApp();
    const token = (await t.services.auth.issuer.issue("shaper", ALL)).token;
    const message = async (path: string, body: object) =>
      ((await (await t.app.handle(postJson(path, body, bearer(token)))).json()) as { message: string }).message;
    expect(await message("/v1/connectors", { id: "x1", kind: "ftp", config: {} })).toBe(
      "kind: must be one of imap, maildir, files, sql, books",
    );
    expect(await message("/v1/query", { q: "meeting", filters: { source_type: "pdf" } })).toBe(
      "filters.source_type: must be one of email, file",
    );
    expect(await message("/v1/webhooks", { url: "https://hooks.example/x", events: ["user.created"] })).toStartWith(
      "events.0: must be one of ",
    );
    expect(await message("/v1/deep_search", { q: "x", time_range: "2026-11-30..2026-11-01" })).toBe(
      "time_range: the start must be before the end",
    );
    await t.services.close();
  });
});

test("a __proto__ key spelled with escapes is refused as the plain one is (outside attack: its object became the body's prototype)", async () => {
  const t = await testApp();
  const token = (await t.services.auth.issuer.issue("shaper", ALL)).token;
  for (const [path, body] of [
    ["/v1/query", '{"\\u005f_proto__":{"conversation_id":"conv_x"},"query":"y"}'],
    ["/v1/query", '{"query":"x","\\u005f\\u005fproto__":{"evil":1}}'],
    ["/v1/connectors", '{"\\u005f_proto__":{"id":"p1"},"kind":"files","config":{"path":"/tmp"}}'],
  ] as const) {
    const r = await t.app.handle(postJson(path, body, bearer(token)));
    expect([path, r.status, await r.json()]).toEqual([path, 400, { type: "bad_request", message: PROTO_KEY_MESSAGE }]);
  }
  await t.services.close();
});
