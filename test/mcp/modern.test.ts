// /mcp at revision 2026-07-28 on the wire (issue 20, D28), and what corpus keeps doing in front
// of the SDK on both wires: its own authentication (a token for another resource, a panel's
// token), scopes with a step-up challenge, limits, the Host/Origin check, and a request's id in
// every JSON-RPC error that answers it. Each of these was seen wrong (or missing) before.
import { describe, expect, test } from "bun:test";
import { SignJWT } from "jose";
import { ERROR_SHAPES } from "../../src/app";
import { beginRequest } from "../../src/http/request-context";
import { withTimeout } from "../../src/http/timeout";
import { PANEL_META } from "../../src/mcp/widget";
import { bearer, req, testApp } from "../helpers";
import { steppedClock } from "../support/stepped-clock";

const MODERN = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };

async function setup(env: Record<string, string> = {}) {
  const t = await testApp(env);
  const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read"])).token;
  const send = (body: unknown, headers: Record<string, string>, ip = "192.0.2.1") => {
    const r = req("/mcp", {
      method: "POST",
      body: typeof body === "string" ? body : JSON.stringify(body),
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    });
    beginRequest(r, ip);
    return t.app.handle(r);
  };
  /** A 2026-07-28 request as a conforming client sends it: the envelope and the standard headers. */
  const modern = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, id: string | number = 1) =>
    send(
      { jsonrpc: "2.0", id, method, params: { ...params, _meta: META } },
      {
        ...bearer(token),
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof (params.name ?? params.uri) === "string" ? { "mcp-name": String(params.name ?? params.uri) } : {}),
        ...headers,
      },
    );
  const legacy = (method: string, params: Record<string, unknown> = {}, headers: Record<string, string> = {}, id: string | number = 1) =>
    send({ jsonrpc: "2.0", id, method, params }, { ...bearer(token), ...headers });
  return { ...t, token, send, modern, legacy };
}

const json = async (r: Response) => (await r.json()) as any;

describe("/mcp at 2026-07-28", () => {
  test("server/discover names the revisions, the capabilities and the server; no session is opened", async () => {
    const { modern } = await setup();
    const r = await modern("server/discover");
    expect(r.status).toBe(200);
    expect(r.headers.get("mcp-session-id")).toBeNull();
    const { result } = await json(r);
    expect(result).toMatchObject({
      supportedVersions: [MODERN],
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } },
      resultType: "complete",
      _meta: { "io.modelcontextprotocol/serverInfo": { name: "corpus", version: "0.1.0" } },
    });
  });

  test("tools/list: annotations, output schemas and a private cache hint; a tool's call goes through the SDK", async () => {
    const { modern } = await setup();
    const { result } = await json(await modern("tools/list"));
    expect(result.cacheScope).toBe("private");
    expect(result.tools.map((t: any) => [t.name, t.annotations.readOnlyHint, t.outputSchema.type])).toEqual([
      ["corpus_search", true, "object"],
      ["open_connectors", true, "object"],
      ["search", true, "object"],
      ["fetch", true, "object"],
      ["corpus_answer", true, "object"],
    ]);
    const call = await json(await modern("tools/call", { name: "corpus_search", arguments: { query: "   " } }));
    expect(call.result).toMatchObject({ isError: true, resultType: "complete" });
    expect(call.result.content[0].text).toBe("Input validation error: Invalid arguments for tool corpus_search: Query cannot be empty");
  });

  test("methods the revision removed are unknown: 404 and -32601, with the request's id", async () => {
    const { modern } = await setup();
    for (const method of ["ping", "initialize", "logging/setLevel", "resources/subscribe"]) {
      const r = await modern(method, {}, {}, `m-${method}`);
      expect(r.status).toBe(404);
      expect(await json(r)).toEqual({ jsonrpc: "2.0", id: `m-${method}`, error: { code: -32601, message: "Method not found" } });
    }
  });

  test("envelope and headers are checked: a missing _meta is -32602, header and body disagreeing -32020 (both 400)", async () => {
    const { send, token } = await setup();
    const noMeta = await send(
      { jsonrpc: "2.0", id: 5, method: "tools/list", params: {} },
      { ...bearer(token), "mcp-protocol-version": MODERN, "mcp-method": "tools/list" },
    );
    expect(noMeta.status).toBe(400);
    expect(await json(noMeta)).toMatchObject({ id: 5, error: { code: -32602 } });
    const wrongName = await send(
      { jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "corpus_search", arguments: { query: "x" }, _meta: META } },
      { ...bearer(token), "mcp-protocol-version": MODERN, "mcp-method": "tools/call", "mcp-name": "open_connectors" },
    );
    expect(wrongName.status).toBe(400);
    expect(await json(wrongName)).toMatchObject({ id: 6, error: { code: -32020 } });
  });

  test("a token without the tool's scope: 403 insufficient_scope naming the scope to step up to, on both wires", async () => {
    const { modern, legacy, services } = await setup();
    const weak = (await services.auth.issuer.issue("bob", ["connectors:read"])).token;
    for (const r of [
      await modern("tools/call", { name: "corpus_search", arguments: { query: "x" } }, bearer(weak), "s-1"),
      await legacy("tools/call", { name: "corpus_search", arguments: { query: "x" } }, bearer(weak), "s-1"),
    ]) {
      expect(r.status).toBe(403);
      expect(r.headers.get("www-authenticate")).toBe(
        'Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource", error="insufficient_scope", scope="corpus:search"',
      );
      expect(await json(r)).toMatchObject({ jsonrpc: "2.0", id: "s-1", error: { code: -32600 } });
    }
    // It does not even see the tool it cannot call.
    const listed = await json(await modern("tools/list", {}, bearer(weak)));
    expect(listed.result.tools.map((t: any) => t.name)).toEqual(["open_connectors"]);
  });

  test("a token issued for another resource (RFC 8707 audience) is refused, on both wires", async () => {
    const { modern, legacy, services } = await setup();
    const key = services.auth.key;
    const foreign = await new SignJWT({ scope: "corpus:search connectors:read" })
      .setProtectedHeader({ alg: "EdDSA", kid: key.kid })
      .setSubject("alice")
      .setIssuer("http://127.0.0.1:8080")
      .setAudience("https://other-resource.example")
      .setIssuedAt()
      .setExpirationTime("1h")
      .setJti("foreign-1")
      .sign(key.privateKey);
    for (const r of [await modern("tools/list", {}, bearer(foreign), 7), await legacy("tools/list", {}, bearer(foreign), 7)]) {
      expect(r.status).toBe(401);
      expect(r.headers.get("www-authenticate")).toContain('error="invalid_token"');
      expect(await json(r)).toMatchObject({ id: 7, error: { code: -32600, message: expect.stringContaining("aud") } });
    }
  });

  test("the panel's token opens no panel of its own at 2026-07-28 either; the panel's access is in _meta only", async () => {
    const { modern, services } = await setup();
    const writer = (await services.auth.issuer.issue("alice", ["connectors:read", "connectors:write"])).token;
    const opened = await json(await modern("tools/call", { name: "open_connectors", arguments: {} }, bearer(writer)));
    const panel = opened.result._meta[PANEL_META] as { apiBase: string; canWrite: boolean; token: string };
    expect([panel.apiBase, panel.canWrite, panel.token.startsWith("eyJ")]).toEqual(["http://localhost", true, true]);
    expect(JSON.stringify(opened.result.content)).not.toContain(panel.token);
    const again = await modern("tools/call", { name: "open_connectors", arguments: {} }, bearer(panel.token));
    expect(again.status).toBe(403);
    expect(await json(again)).toMatchObject({ id: 1, error: { message: expect.stringContaining("connector panel") } });
  });

  test("the panel is an MCP App: resource _meta.ui with CSP and permissions from CORPUS_OAUTH_RESOURCE_URL, and the OpenAI Apps form", async () => {
    const { modern } = await setup({
      CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com:8443",
      CORPUS_ALLOWED_HOSTS: "corpus.example.com",
    });
    const listed = await json(await modern("resources/list"));
    expect(listed.result.resources).toEqual([
      expect.objectContaining({
        uri: "ui://corpus/connectors.html",
        mimeType: "text/html;profile=mcp-app",
        _meta: {
          ui: {
            csp: { connectDomains: ["https://corpus.example.com:8443"], resourceDomains: ["https://corpus.example.com:8443"] },
            permissions: {},
            prefersBorder: true,
          },
        },
      }),
    ]);
    const read = await json(await modern("resources/read", { uri: "ui://corpus/connectors.html" }));
    const [app, openai] = read.result.contents;
    expect(app._meta.ui.csp.connectDomains).toEqual(["https://corpus.example.com:8443"]);
    expect(openai).toMatchObject({
      mimeType: "text/html+skybridge",
      _meta: {
        "openai/widgetCSP": { connect_domains: ["https://corpus.example.com:8443"], resource_domains: ["https://corpus.example.com:8443"] },
      },
    });
    const tools = await json(await modern("tools/list"));
    expect(tools.result.tools[1]._meta).toEqual({
      ui: { resourceUri: "ui://corpus/connectors.html" },
      "ui/resourceUri": "ui://corpus/connectors.html",
      "openai/outputTemplate": "ui://corpus/connectors.html",
      "openai/widgetAccessible": true,
    });
    // A resource it does not have: -32602 with the uri (SEP-2164).
    const missing = await json(await modern("resources/read", { uri: "ui://corpus/nope.html" }, {}, "r-9"));
    expect(missing).toMatchObject({ id: "r-9", error: { code: -32602, data: { uri: "ui://corpus/nope.html" } } });
  });

  test("a batch is refused at 2026-07-28; a foreign Origin is 403 before anything (host-check is app-wide)", async () => {
    const { send, token, modern } = await setup();
    const batch = await send([{ jsonrpc: "2.0", id: 1, method: "tools/list", params: { _meta: META } }], {
      ...bearer(token),
      "mcp-protocol-version": MODERN,
      "mcp-method": "tools/list",
    });
    expect(batch.status).toBe(400);
    expect((await modern("server/discover", {}, { origin: "https://evil.example" })).status).toBe(403);
  });

  test("the per-IP bucket counts 2026-07-28 requests too", async () => {
    const { send, token } = await setup({ CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "2" });
    const discover = () =>
      send(
        { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: META } },
        { ...bearer(token), "mcp-protocol-version": MODERN, "mcp-method": "server/discover" },
        "198.51.100.20",
      );
    expect((await discover()).status).toBe(200);
    expect((await discover()).status).toBe(200);
    const over = await discover();
    expect(over.status).toBe(429);
    expect(await json(over)).toEqual({ error: "Rate limit exceeded", retry_after: 30 });
  });
});

describe("a JSON-RPC error carries the request's id when it was readable (it came back null)", () => {
  test("406, 401, an unsupported MCP-Protocol-Version, an unknown session, a bad tools/call, an unknown tool", async () => {
    const { legacy, send } = await setup();
    const body = { jsonrpc: "2.0", id: "q-7", method: "tools/list" };
    const cases: Array<[string, Response]> = [
      ["406", await send(body, { accept: "text/html" })],
      ["401", await send(body, {})],
      ["400 version", await legacy("tools/list", {}, { "mcp-protocol-version": "2099-01-01" }, "q-7")],
      ["404 session", await legacy("tools/list", {}, { "mcp-session-id": "made-up" }, "q-7")],
      ["bad name", await legacy("tools/call", { name: 42 }, {}, "q-7")],
      ["bad arguments", await legacy("tools/call", { name: "corpus_search", arguments: [] }, {}, "q-7")],
      ["unknown tool", await legacy("tools/call", { name: "nope", arguments: {} }, {}, "q-7")],
    ];
    for (const [name, r] of cases) expect({ name, id: (await json(r)).id }).toEqual({ name, id: "q-7" });
    // An id that cannot be read (no JSON) stays null, as JSON-RPC 2.0 requires.
    expect((await json(await send("{not json", {}))).id).toBeNull();
  });

  test("a request that times out, and a tool that fails, answer with the id too (and leak nothing of the failure)", async () => {
    const { app, services, token, logs } = await setup();
    // A search that never ends, and a connector list that fails with a path in its message.
    // The timeout runs out when the search is reached (a stepped clock, not a 50 ms race with a loaded machine).
    const reached = Promise.withResolvers<void>();
    services.query.run = () => {
      reached.resolve();
      return new Promise(() => {});
    };
    services.connectors.list = async () => {
      throw new Error("SQLITE_BUSY: /srv/corpus-data/secret.db is locked");
    };
    const time = steppedClock();
    const timed = withTimeout((r) => app.handle(r), 0.05, { shapes: ERROR_SHAPES, clock: time.clock });
    const call = (name: string) => {
      const r = req("/mcp", {
        method: "POST",
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: `t-${name}`,
          method: "tools/call",
          params: { name, arguments: name === "corpus_search" ? { query: "x" } : {} },
        }),
        headers: { "content-type": "application/json", accept: "application/json", ...bearer(token) },
      });
      beginRequest(r, "192.0.2.30");
      return timed(r);
    };
    const searching = call("corpus_search");
    await reached.promise;
    time.advance(50);
    const late = await searching;
    expect(late.status).toBe(503);
    expect(await json(late)).toEqual({
      jsonrpc: "2.0",
      id: "t-corpus_search",
      error: { code: -32603, message: "request timed out after 0.05 s" },
    });
    const failed = await json(await call("open_connectors"));
    expect(failed.id).toBe("t-open_connectors");
    expect(failed.result.isError).toBe(true);
    expect(failed.result.content[0].text).toStartWith(
      "Internal error: open_connectors failed; the server log has the details under request id req_",
    );
    expect(JSON.stringify(failed)).not.toContain("secret.db");
    expect(logs.records().some((l) => l.message === "tool failed" && l.tool === "open_connectors")).toBe(true);
  });
});
