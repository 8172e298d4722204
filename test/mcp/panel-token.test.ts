// The connector panel's token (issue 13 item 8, D25): never longer-lived than the caller's own,
// revoked with it, unable to open a panel of its own (mint), to delete the user or to do
// anything but manage connectors, and handed to the page in the result's _meta, never in
// what the model reads.

import { describe, expect, test } from "bun:test";
import { decodeJwt } from "jose";
import { PANEL_META } from "../../src/mcp/widget";
import { bearer, postJson, req, testApp } from "../helpers";

const rpc = (method: string, params: Record<string, unknown>, token: string) =>
  postJson("/mcp", { jsonrpc: "2.0", id: 1, method, params }, { ...bearer(token), accept: "application/json" });
const openPanel = (token: string) => rpc("tools/call", { name: "open_connectors", arguments: {} }, token);

interface ToolResult {
  isError?: boolean;
  content: Array<{ type: string; text?: string; resource?: { text: string } }>;
  structuredContent?: unknown;
  _meta?: Record<string, any>;
}

async function result(r: Response): Promise<ToolResult> {
  return ((await r.json()) as { result: ToolResult }).result;
}

/** The panel token, taken where the page takes it: the result's _meta. */
const panelToken = (r: ToolResult): string | undefined => r._meta?.[PANEL_META]?.token;

const JWT = /eyJ[\w-]+\.[\w-]+\.[\w-]+/;

async function setup() {
  const t = await testApp();
  const parent = await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write", "corpus:search"], 3600);
  const opened = await result(await t.app.handle(openPanel(parent.token)));
  const panel = panelToken(opened)!;
  expect(panel).toMatch(JWT);
  return { ...t, parent, opened, panel };
}

describe("the panel token", () => {
  test("is in _meta only: neither the text, the page, nor structuredContent carries a token (it was in the page)", async () => {
    const { opened, app, parent, services } = await setup();
    expect(JSON.stringify(opened.content)).not.toMatch(JWT);
    expect(JSON.stringify(opened.structuredContent)).not.toMatch(JWT);
    expect(opened._meta![PANEL_META]).toMatchObject({ apiBase: "http://localhost", canWrite: true, expiresAt: expect.any(Number) });
    expect(opened.content.find((c) => c.type === "resource")!.resource!.text).toContain("<!doctype html>");
    // The template from resources/read is the same for everyone and carries none either.
    const read = (await (await app.handle(rpc("resources/read", { uri: "ui://corpus/connectors.html" }, parent.token))).json()) as {
      result: { contents: Array<{ text: string; _meta: unknown }> };
    };
    expect(JSON.stringify(read.result)).not.toMatch(JWT);
    expect(read.result.contents[0]!._meta).toEqual({
      ui: { csp: { connectDomains: ["http://localhost"], resourceDomains: ["http://localhost"] }, permissions: {}, prefersBorder: true },
    });
    await services.close();
  });

  test("serves the connector routes: list, add, remove", async () => {
    const { app, panel, services } = await setup();
    expect((await app.handle(req("/v1/connectors", { headers: bearer(panel) }))).status).toBe(200);
    const missing = await app.handle(req("/v1/connectors/none", { method: "DELETE", headers: bearer(panel) }));
    expect(missing.status).toBe(404);
    await services.close();
  });

  test("cannot open a panel of its own: /mcp refuses it, so no token begets another (it minted forever)", async () => {
    const { app, panel, services } = await setup();
    const r = await app.handle(openPanel(panel));
    expect(r.status).toBe(403);
    expect(await r.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32600, message: expect.stringContaining("connector panel") } });
    expect(r.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    // Nor any other method: not a search, not even a ping.
    expect((await app.handle(rpc("ping", {}, panel))).status).toBe(403);
    await services.close();
  });

  test("cannot delete the user's data, nor touch webhooks, despite connectors:write (it could delete)", async () => {
    const { app, panel, services } = await setup();
    expect(decodeJwt(panel).scope).toBe("connectors:read connectors:write");
    const del = await app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(panel) }));
    expect(del.status).toBe(403);
    expect(await del.json()).toEqual({ type: "forbidden", message: expect.stringContaining("connector panel") });
    // The limited route still reports its windows on the refusal (D16).
    expect(del.headers.get("x-ratelimit-limit-minute")).toBe("10");
    expect(
      (await app.handle(postJson("/v1/webhooks", { url: "https://example.com/h", events: ["user.deleted"] }, bearer(panel)))).status,
    ).toBe(403);
    expect((await app.handle(req("/v1/webhooks", { headers: bearer(panel) }))).status).toBe(403);
    // Alice is still there: her own token still works.
    expect((await app.handle(req("/v1/connectors", { headers: bearer(panel) }))).status).toBe(200);
    await services.close();
  });

  test("is revoked with its parent's jti, at once, even once verified and cached (it survived)", async () => {
    const { app, panel, parent, services } = await setup();
    expect(decodeJwt(panel).corpus_panel).toEqual({ parent: parent.jti });
    expect((await app.handle(req("/v1/connectors", { headers: bearer(panel) }))).status).toBe(200);
    services.auth.store.revokeToken(parent.jti, parent.expiresAt);
    const r = await app.handle(req("/v1/connectors", { headers: bearer(panel) }));
    expect(r.status).toBe(401);
    expect(((await r.json()) as { message: string }).message).toContain("revoked");
    await services.close();
  });

  test("expires with its parent, and a parent near its end gets none", async () => {
    const t = await testApp();
    const parent = await t.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"], 120);
    const child = panelToken(await result(await t.app.handle(openPanel(parent.token))));
    expect(decodeJwt(child!).exp).toBeLessThanOrEqual(parent.expiresAt);
    await t.services.close();

    let clock = Date.now();
    const late = await testApp({}, () => clock);
    const soon = await late.services.auth.issuer.sign("alice", ["connectors:read"], 120);
    clock += 90_000;
    const r = await result(await late.app.handle(openPanel(soon.token)));
    expect(r.isError).toBe(true);
    expect(r.content[0]!.text).toContain("sign in again");
    await late.services.close();
  });

  test("with CORPUS_AUTH_DISABLED there is no token to derive one from: a read-only panel, no error", async () => {
    const t = await testApp({ CORPUS_AUTH_DISABLED: "true" });
    const r = await result(
      await t.app.handle(
        postJson(
          "/mcp",
          { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "open_connectors", arguments: {} } },
          { accept: "application/json" },
        ),
      ),
    );
    expect(r.isError).toBeUndefined();
    expect(r._meta![PANEL_META]).toEqual({ apiBase: "http://localhost", canWrite: false });
    await t.services.close();
  });
});
