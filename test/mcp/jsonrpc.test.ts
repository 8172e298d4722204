// /mcp at the wire: JSON-RPC codes, versions, headers, auth, limits (second document; D6, D21).
import { describe, expect, test } from "bun:test";
import { beginRequest } from "../../src/http/request-context";
import { bearer, postJson, req, testApp } from "../helpers";

async function setup(env: Record<string, string> = {}, now?: () => number) {
  const t = await testApp(env, now);
  const token = (await t.services.auth.issuer.issue("alice", ["corpus:search", "connectors:read"])).token;
  const post = (body: unknown, headers: Record<string, string> = {}, ip = "192.0.2.1") => {
    const r = req("/mcp", {
      method: "POST",
      body: typeof body === "string" ? body : JSON.stringify(body),
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...bearer(token), ...headers },
    });
    beginRequest(r, ip);
    return t.app.handle(r);
  };
  return { ...t, token, post };
}

const init = (protocolVersion: unknown, id: unknown = 1) => ({
  jsonrpc: "2.0",
  id,
  method: "initialize",
  params: { protocolVersion, clientInfo: { name: "raw", version: "0" } },
});

describe("JSON-RPC 2.0 on /mcp", () => {
  test("codes: -32700 parse, -32600 invalid request, -32601 unknown method, -32602 bad params; ids echoed", async () => {
    const { post } = await setup();
    const parse = await post("{not json");
    expect(parse.status).toBe(400);
    expect(await parse.json()).toEqual({ jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body is not JSON" } });
    const invalid = (await (await post({ jsonrpc: "1.0", id: 7, method: "ping" })).json()) as any;
    expect(invalid).toMatchObject({ id: 7, error: { code: -32600 } });
    expect(((await (await post({ jsonrpc: "2.0", id: "a", method: 42 })).json()) as any).error.code).toBe(-32600);
    const unknown = (await (await post({ jsonrpc: "2.0", id: "x-1", method: "tools/frobnicate" })).json()) as any;
    expect(unknown).toEqual({ jsonrpc: "2.0", id: "x-1", error: { code: -32601, message: "Method not found" } });
    const badParams = (await (
      await post({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "nope", arguments: {} } })
    ).json()) as any;
    expect(badParams).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32602, message: "Tool not found" } });
    const pong = (await (await post({ jsonrpc: "2.0", id: 0, method: "ping" })).json()) as any;
    expect(pong).toEqual({ jsonrpc: "2.0", id: 0, result: {} });
  });

  test("a __proto__ key anywhere, tool arguments included, and a body nested too deep are -32600, as REST refuses them", async () => {
    const { post } = await setup();
    const proto =
      '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"corpus_search","arguments":{"query":"gas","__proto__":{"isAdmin":true}}}}';
    const refused = await post(proto);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: body: the key __proto__ is not allowed" },
    });
    const deep = `{"jsonrpc":"2.0","id":6,"method":"ping","params":${"[".repeat(200)}${"]".repeat(200)}}`;
    const tooDeep = (await (await post(deep)).json()) as any;
    expect(tooDeep.error.code).toBe(-32600);
    expect(tooDeep.error.message).toStartWith("Invalid Request: ");
    // The word alone, in a value, is a question like any other.
    const asked = (await (
      await post({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "corpus_search", arguments: { query: "__proto__" } } })
    ).json()) as any;
    expect(asked.error).toBeUndefined();
  });

  test("notifications are answered 202 with no body", async () => {
    const { post } = await setup();
    const r = await post({ jsonrpc: "2.0", method: "notifications/initialized" });
    expect(r.status).toBe(202);
    expect(await r.text()).toBe("");
  });

  test("initialize: 1.0 and 1.0.0 answer 1.0; known revisions answer themselves; others (2026-07-28 too: it has no initialize) the newest 2025 one", async () => {
    const { post } = await setup();
    for (const [asked, answered] of [
      ["1.0", "1.0"],
      ["1.0.0", "1.0"],
      ["2024-11-05", "2024-11-05"],
      ["2025-03-26", "2025-03-26"],
      ["2025-06-18", "2025-06-18"],
      ["1999-01-01", "2025-11-25"],
      [undefined, "2025-11-25"],
      ["2026-07-28", "2025-11-25"],
    ] as const) {
      const body = (await (await post(init(asked))).json()) as any;
      expect(body.result.protocolVersion).toBe(answered);
      expect(body.result.serverInfo).toEqual({ name: "corpus", version: "0.1.0" });
      expect(body.result.capabilities.tools).toBeDefined();
    }
  });

  test("sessions: issued at initialize, honoured, unknown ones 404, ended with DELETE", async () => {
    const { post, app, token } = await setup();
    const r = await post(init("2025-06-18"));
    const session = r.headers.get("mcp-session-id")!;
    expect(session).toMatch(/^[0-9a-f-]{36}$/);
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": session })).status).toBe(200);
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": "nope" })).status).toBe(404);
    expect((await app.handle(req("/mcp", { method: "DELETE", headers: { ...bearer(token), "mcp-session-id": session } }))).status).toBe(
      204,
    );
    expect((await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, { "mcp-session-id": session })).status).toBe(404);
  });

  test("DELETE /mcp needs a token and ends only its own user's session (anyone could end any)", async () => {
    const { post, app, token, services } = await setup();
    const session = (await post(init("2025-06-18"))).headers.get("mcp-session-id")!;
    const del = (headers: Record<string, string>) =>
      app.handle(req("/mcp", { method: "DELETE", headers: { "mcp-session-id": session, ...headers } }));
    const anonymous = await del({});
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("www-authenticate")).toContain("resource_metadata=");
    expect(((await anonymous.json()) as any).error.code).toBe(-32600);
    const bob = (await services.auth.issuer.issue("bob", ["corpus:search"])).token;
    expect((await del(bearer(bob))).status).toBe(404);
    // Still alice's, and alive.
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session })).status).toBe(200);
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session, ...bearer(bob) })).status).toBe(404);
    expect((await del(bearer(token))).status).toBe(204);
  });

  test("a session unused for a day is gone (swept, or refused when met)", async () => {
    let clock = Date.UTC(2026, 10, 22, 10);
    // Without tokens, which would expire first.
    const { post } = await setup({ CORPUS_AUTH_DISABLED: "true" }, () => clock);
    const session = (await post(init("2025-06-18"))).headers.get("mcp-session-id")!;
    clock += 23 * 3600_000;
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session })).status).toBe(200);
    clock += 24 * 3600_000 + 1;
    expect((await post({ jsonrpc: "2.0", id: 2, method: "ping" }, { "mcp-session-id": session })).status).toBe(404);
  });

  test("batches: capped at 32 messages with a clear error; each message takes a token of the per-IP bucket (150 cost one)", async () => {
    const { post } = await setup({ CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "40" });
    const old = { "mcp-protocol-version": "2025-03-26" };
    const calls = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        jsonrpc: "2.0",
        id: i,
        method: "tools/call",
        params: { name: "corpus_search", arguments: { query: "invoice" } },
      }));
    const huge = await post(calls(150), old, "203.0.113.9");
    expect(huge.status).toBe(400);
    expect(await huge.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "Invalid Request: a batch holds at most 32 messages; this one has 150" },
    });
    const pings = (n: number) => Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ping" }));
    const first = await post(pings(30), old, "203.0.113.10");
    expect(first.status).toBe(200);
    expect(((await first.json()) as unknown[]).length).toBe(30);
    expect(first.headers.get("x-ratelimit-remaining")).toBe("10");
    const over = await post(pings(11), old, "203.0.113.10");
    expect(over.status).toBe(429);
    expect(over.headers.get("retry-after")).not.toBeNull();
    expect(((await over.json()) as any).error).toBe("Rate limit exceeded");
    // The revision told by the session (no header), or by nothing at all: each message a token too.
    const init2025 = await post(init("2025-03-26"), {}, "203.0.113.11");
    const session = { "mcp-session-id": init2025.headers.get("mcp-session-id")! };
    expect(init2025.headers.get("x-ratelimit-remaining")).toBe("39");
    expect((await post(pings(30), session, "203.0.113.11")).headers.get("x-ratelimit-remaining")).toBe("9");
    expect((await post(pings(30), {}, "203.0.113.12")).headers.get("x-ratelimit-remaining")).toBe("10");
  });

  test("corpus_search counts against the user's query limit, shared with POST /v1/query (it had none)", async () => {
    // A clock that stands still: the searches cannot straddle two minute windows.
    const { post, app, token } = await setup({ CORPUS_LIMIT_QUERY_PER_MINUTE: "2", CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000" }, () =>
      Date.UTC(2026, 10, 22, 10, 0, 30),
    );
    const search = (id: number) =>
      post({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "corpus_search", arguments: { query: "invoice" } } });
    for (const id of [1, 2]) expect(((await (await search(id)).json()) as any).result.isError).toBeFalsy();
    const third = (await (await search(3)).json()) as any;
    expect(third.result.isError).toBe(true);
    expect(third.result.content[0].text).toMatch(/^Rate limit exceeded: the query limit is reached; retry after \d+ s$/);
    // A batch cannot spread past it either.
    const batch = await post(
      [1, 2, 3].map((id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "corpus_search", arguments: { query: "x" } } })),
      { "mcp-protocol-version": "2025-03-26" },
    );
    expect(((await batch.json()) as any[]).every((m) => m.result.isError)).toBe(true);
    // The same windows as the REST route.
    const rest = await app.handle(postJson("/v1/query", { query: "invoice" }, bearer(token)));
    expect(rest.status).toBe(429);
  });

  test("MCP-Protocol-Version: an unsupported one is 400; batches only where the revision allows them", async () => {
    const { post } = await setup();
    const bad = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { "mcp-protocol-version": "2099-01-01" });
    expect(bad.status).toBe(400);
    const batch = [
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "nope" },
    ];
    const old = await post(batch, { "mcp-protocol-version": "2025-03-26" });
    expect(await old.json()).toEqual([
      { jsonrpc: "2.0", id: 1, result: {} },
      { jsonrpc: "2.0", id: 2, error: { code: -32601, message: "Method not found" } },
    ]);
    const current = await post(batch, { "mcp-protocol-version": "2025-06-18" });
    expect(current.status).toBe(400);
    expect(((await current.json()) as any).error.code).toBe(-32600);
    expect(((await (await post([])).json()) as any).error.code).toBe(-32600);
  });

  test("GET /mcp is 405; an Accept without JSON is 406; a foreign Origin is 403 (http/host-check)", async () => {
    const { post, app, token } = await setup({ CORPUS_CORS_ALLOW_ORIGINS_CSV: "https://app.example.com" });
    const get = await app.handle(req("/mcp", { headers: bearer(token) }));
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST, DELETE");
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { accept: "text/html" })).status).toBe(406);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "https://evil.example" })).status).toBe(403);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "https://app.example.com" })).status).toBe(200);
    expect((await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { origin: "http://localhost" })).status).toBe(200);
  });

  test("D6: 401 with WWW-Authenticate resource_metadata; 403 insufficient_scope with the scope", async () => {
    const { post } = await setup();
    const none = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, { authorization: "" });
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(
      'Bearer resource_metadata="http://127.0.0.1:8080/.well-known/oauth-protected-resource"',
    );
    expect(((await none.json()) as any).error.message).toStartWith("Unauthorized");
    const t2 = await setup();
    const weak = (await t2.services.auth.issuer.issue("bob", ["connectors:read"])).token;
    const r = await t2.post(
      { jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "corpus_search", arguments: { query: "x" } } },
      bearer(weak),
    );
    expect(r.status).toBe(403);
    expect(r.headers.get("www-authenticate")).toContain('error="insufficient_scope", scope="corpus:search"');
  });

  test("CORPUS_AUTH_DISABLED=true lets requests in without a token (development only)", async () => {
    const { post } = await setup({ CORPUS_AUTH_DISABLED: "true" });
    expect((await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, { authorization: "" })).status).toBe(200);
  });

  test("per-IP limit: headers, 429 body and Retry-After; 413 is a JSON-RPC error", async () => {
    const { post } = await setup({ CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "2", CORPUS_MAX_REQUEST_SIZE: "2048" });
    const a = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, {}, "198.51.100.7");
    expect(a.headers.get("x-ratelimit-limit")).toBe("2");
    expect(a.headers.get("x-ratelimit-remaining")).toBe("1");
    await post({ jsonrpc: "2.0", id: 1, method: "ping" }, {}, "198.51.100.7");
    const over = await post({ jsonrpc: "2.0", id: 1, method: "ping" }, {}, "198.51.100.7");
    expect(over.status).toBe(429);
    expect(await over.json()).toEqual({ error: "Rate limit exceeded", retry_after: 30 });
    expect(over.headers.get("retry-after")).toBe("30");
    const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: { pad: "x".repeat(5000) } });
    const tooLarge = await post(big, { "content-length": String(big.length) }, "198.51.100.8");
    expect(tooLarge.status).toBe(413);
    expect(await tooLarge.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "request body exceeds the limit of 2048 bytes" },
    });
  });

  test("/debug/tools lists the same definitions as tools/list", async () => {
    const { post, app } = await setup({ CORPUS_DEBUG_MODE: "true" });
    const listed = ((await (await post({ jsonrpc: "2.0", id: 1, method: "tools/list" })).json()) as any).result.tools;
    const debug = ((await (await app.handle(req("/debug/tools"))).json()) as any).tools;
    expect(debug).toEqual(listed);
  });
});

describe("MCP edges (issue 18 gap 6)", () => {
  // The second document's envelope (part 2: jsonrpc "2.0", a method, params an object) is the
  // same in every dialect: the seed's 1.0 is a protocolVersion, not a JSON-RPC version (D21).
  // The SDK's classification of the request (since issue 20) already refuses these with 400;
  // pinned here because the audit of issue 18 saw 200.
  const invalidMessages: Array<[string, unknown, string | number | null]> = [
    ['jsonrpc "1.0"', { jsonrpc: "1.0", id: 7, method: "ping" }, 7],
    ["no jsonrpc", { id: 7, method: "ping" }, 7],
    ["a method that is no string", { jsonrpc: "2.0", id: 7, method: 42 }, null],
    ["params an array", { jsonrpc: "2.0", id: "p", method: "tools/list", params: [] }, "p"],
    ["an id that is an object", { jsonrpc: "2.0", id: { x: 1 }, method: "ping" }, null],
    ["not an object", JSON.stringify("ping"), null],
  ];

  test("second document parts 4 and 7 (400: invalid request format) + D21: an invalid request object is HTTP 400 with -32600, in the 2025 wire and in the seed's 1.0 dialect", async () => {
    const { post } = await setup();
    const session = (await post(init("1.0"))).headers.get("mcp-session-id");
    const dialects: Array<Record<string, string>> = [{}, { "mcp-protocol-version": "2025-06-18" }];
    if (session) dialects.push({ "mcp-session-id": session });
    for (const headers of dialects) {
      for (const [what, message, id] of invalidMessages) {
        const r = await post(message, headers);
        const body = (await r.json()) as any;
        expect([what, r.status, body.error.code, body.id]).toEqual([what, 400, -32600, id]);
      }
    }
  });

  test("second document part 7 + Streamable HTTP (input that cannot be accepted is 400): a batch holding an invalid message is 400", async () => {
    const { post } = await setup();
    const old = { "mcp-protocol-version": "2025-03-26" };
    for (const batch of [
      [
        { jsonrpc: "1.0", id: 1, method: "ping" },
        { jsonrpc: "2.0", id: 2, method: "ping" },
      ],
      [{ jsonrpc: "2.0", id: 1, method: "ping" }, 5],
    ]) {
      const r = await post(batch, old);
      expect(r.status).toBe(400);
      expect(((await r.json()) as any).error.code).toBe(-32600);
    }
  });

  test("second document part 2 (tool definition: name, title, description) + D22: titles, and annotations that say neither tool changes anything, in every dialect's tools/list", async () => {
    const { post } = await setup();
    const dialects: Array<Record<string, string>> = [{}, { "mcp-protocol-version": "2025-06-18" }];
    for (const headers of dialects) {
      const tools = ((await (await post({ jsonrpc: "2.0", id: 1, method: "tools/list" }, headers)).json()) as any).result.tools as any[];
      const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
      expect(byName.corpus_search.title).toBe("Search Corpus");
      expect(byName.open_connectors.title).toBe("Open Connectors");
      for (const t of tools) {
        expect(t.annotations.readOnlyHint).toBe(true);
        // destructiveHint defaults to true: a host reading it alone must not take either for destructive.
        expect(t.annotations.destructiveHint).toBe(false);
      }
    }
  });
});
