// Bodies are JSON (issue 13 item 14): any other Content-Type on a POST is 415, in the REST
// shape or as a JSON-RPC error on /mcp. A text/plain or form POST is what a foreign page can
// send without a CORS preflight, so it must never reach a handler.
import { describe, expect, test } from "bun:test";
import { isJsonContentType } from "../../src/http/content-type";
import { bearer, req, testApp } from "../helpers";

const post = (path: string, contentType: string | undefined, body: string, headers: Record<string, string> = {}) =>
  req(path, { method: "POST", body, headers: { ...(contentType ? { "content-type": contentType } : {}), ...headers } });

describe("Content-Type of POST bodies", () => {
  test("REST: text/plain, a form, XML and no type at all are 415 unsupported_media_type", async () => {
    const t = await testApp();
    const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:write"])).token;
    for (const type of [
      "text/plain",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/xml",
      "application/jsonx",
      undefined,
    ]) {
      for (const path of ["/v1/query", "/v1/connectors", "/v1/webhooks"]) {
        const r = await t.app.handle(post(path, type, '{"query":"x"}', bearer(token)));
        expect({ type, path, status: r.status }).toEqual({ type, path, status: 415 });
        expect(await r.json()).toEqual({ type: "unsupported_media_type", message: "Content-Type: must be application/json" });
      }
    }
    await t.services.close();
  });

  test("/mcp: a simple cross-site POST (text/plain) is 415 with a JSON-RPC error, not run (it was 200)", async () => {
    const t = await testApp({ CORPUS_AUTH_DISABLED: "true" });
    const r = await t.app.handle(
      post("/mcp", "text/plain;charset=UTF-8", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }), {
        accept: "application/json",
      }),
    );
    expect(r.status).toBe(415);
    expect(await r.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Content-Type: must be application/json" },
    });
    await t.services.close();
  });

  test("application/json with parameters, in any case, is accepted", async () => {
    expect(
      ["application/json", "application/json; charset=utf-8", "Application/JSON;charset=UTF-8", " application/json "].every(
        isJsonContentType,
      ),
    ).toBe(true);
    expect([null, "", "text/json", "application/json-patch+json", "application/jsonp"].some(isJsonContentType)).toBe(false);
    const t = await testApp({ CORPUS_AUTH_DISABLED: "true" });
    const r = await t.app.handle(
      post("/mcp", "application/json; charset=utf-8", JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }), {
        accept: "application/json",
      }),
    );
    expect(r.status).toBe(200);
    await t.services.close();
  });

  test("bodiless methods need no Content-Type", async () => {
    const t = await testApp();
    expect((await t.app.handle(req("/"))).status).toBe(200);
    await t.services.close();
  });
});
