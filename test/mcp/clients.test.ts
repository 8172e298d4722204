// Issue 20, done when: the same session against a real corpus over HTTP with a bearer token,
// driven by every kind of client /mcp serves: the v2 SDK client pinned to 2026-07-28 (it could
// not connect: "the server did not offer pinned protocol version 2026-07-28"), the v2 client
// in its default (2025 handshake) and auto modes, the v1 client (@modelcontextprotocol/sdk) and a
// raw seed-style client at protocol 1.0. Each lists the tools, finds a known document with
// corpus_search and opens the connector panel.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client as V2Client, StreamableHTTPClientTransport as V2Transport } from "@modelcontextprotocol/client";
import { InitializeResultSchema, JSONRPCErrorResponseSchema } from "@modelcontextprotocol/core";
import { Client as V1Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport as V1Transport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createLogger, memorySink } from "../../src/log";
import { PANEL_META } from "../../src/mcp/widget";
import { type Running, startServer } from "../../src/server";
import { connectorsSettled, tempDir, testConfig } from "../helpers";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(120_000);

let running: Running;
let token: string;

beforeAll(async () => {
  const roots = tempDir("corpus-mcp-clients-");
  mkdirSync(join(roots, "docs"));
  for (const f of ["Orlen.txt", "AmazonWebServices.pdf"]) cpSync(join(SHARED_DATA, "invoices", f), join(roots, "docs", f));
  running = await startServer(testConfig({ CORPUS_PORT: "0", CORPUS_CONNECTOR_ROOTS: roots }), createLogger("ERROR", memorySink().sink));
  const services = running.services;
  token = (await services.auth.issuer.issue("alice", ["corpus:search", "connectors:read", "connectors:write"])).token;
  await services.connectors.add("alice", { id: "docs", kind: "files", label: "Invoices", config: { path: join(roots, "docs") } });
  await connectorsSettled(services, "alice");
});

afterAll(async () => {
  await running.stop();
});

const headers = () => ({ authorization: `Bearer ${token}` });

/** What every client must do, through the functions its SDK offers. */
interface Session {
  tools(): Promise<Array<{ name: string; annotations?: Record<string, unknown>; outputSchema?: unknown }>>;
  call(
    name: string,
    args: Record<string, unknown>,
  ): Promise<{ isError?: boolean; content: unknown; structuredContent?: unknown; _meta?: Record<string, unknown> }>;
  close(): Promise<void>;
}

async function v2(mode: "legacy" | "auto" | { pin: string }) {
  const client = new V2Client({ name: "corpus-test-v2", version: "1.0.0" }, { versionNegotiation: { mode } });
  await client.connect(new V2Transport(new URL(`${running.url}/mcp`), { requestInit: { headers: headers() } }));
  const session: Session = {
    tools: async () => (await client.listTools()).tools as never,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as never,
    close: () => client.close(),
  };
  return { client, session };
}

async function v1(): Promise<Session> {
  const client = new V1Client({ name: "corpus-test-v1", version: "1.0.0" });
  await client.connect(new V1Transport(new URL(`${running.url}/mcp`), { requestInit: { headers: headers() } }));
  return {
    tools: async () => (await client.listTools()).tools as never,
    call: async (name, args) => (await client.callTool({ name, arguments: args })) as never,
    close: () => client.close(),
  };
}

/** A client of the second document: plain JSON-RPC, `initialize` at 1.0, Accept: application/json. */
async function seed(): Promise<Session & { initialized: unknown }> {
  let next = 1;
  let session: string | null = null;
  const rpc = async (method: string, params: Record<string, unknown>) => {
    const r = await fetch(`${running.url}/mcp`, {
      method: "POST",
      headers: {
        ...headers(),
        "content-type": "application/json",
        accept: "application/json",
        ...(session ? { "mcp-session-id": session } : {}),
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: String(next++), method, params }),
    });
    session ??= r.headers.get("mcp-session-id");
    const body = (await r.json()) as { result?: any; error?: unknown };
    if (!body.result) throw new Error(`${method}: ${JSON.stringify(body)}`);
    return body.result;
  };
  const initialized = await rpc("initialize", { protocolVersion: "1.0", clientInfo: { name: "seed", version: "1" } });
  return {
    initialized,
    tools: async () => (await rpc("tools/list", {})).tools,
    call: (name, args) => rpc("tools/call", { name, arguments: args }),
    close: async () => {},
  };
}

/** The session of the issue: tools/list, a search that finds the invoice, the panel. */
async function exercise(s: Session) {
  const tools = await s.tools();
  expect(tools.map((t) => t.name)).toEqual(["corpus_search", "open_connectors", "search", "fetch", "corpus_answer"]);
  expect(tools[0]!.annotations).toMatchObject({ readOnlyHint: true });
  expect(tools[1]!.annotations).toMatchObject({ readOnlyHint: true });
  expect(tools[0]!.outputSchema).toBeDefined();

  const found = await s.call("corpus_search", { query: "  Amazon Web Services invoice ", maxResults: 2 });
  expect(found.isError).toBeFalsy();
  const structured = found.structuredContent as { query: string; results: Array<{ title: string; source: string; connector: string }> };
  expect(structured.query).toBe("Amazon Web Services invoice");
  expect(structured.results[0]).toMatchObject({ source: "Invoices · AmazonWebServices.pdf", connector: "docs" });
  expect(JSON.stringify(found.content)).toContain("Source: Invoices · AmazonWebServices.pdf");

  const panel = await s.call("open_connectors", {});
  expect(panel.isError).toBeFalsy();
  expect(JSON.stringify(panel.content)).toContain("Invoices (docs, files): ok");
  expect(panel.structuredContent).toMatchObject({ connectors: [expect.objectContaining({ id: "docs", status: "ok" })] });
  // The panel's own token reaches the page in _meta, never the text the model reads.
  expect(panel._meta?.[PANEL_META]).toMatchObject({ canWrite: true, token: expect.stringMatching(/^eyJ/) });
  expect(JSON.stringify(panel.content)).not.toContain("eyJ");
  await s.close();
}

describe("every client /mcp serves runs the same session", () => {
  test("the v2 client pinned to 2026-07-28: server/discover, then stateless requests (it could not connect)", async () => {
    const { client, session } = await v2({ pin: "2026-07-28" });
    expect(client.getProtocolEra()).toBe("modern");
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    const discovered = await client.discover();
    expect(discovered.supportedVersions).toEqual(["2026-07-28"]);
    expect(discovered.capabilities).toMatchObject({ tools: { listChanged: false }, resources: { listChanged: false } });
    expect(client.getServerVersion()).toEqual({ name: "corpus", version: "0.1.0" });
    await exercise(session);
  });

  test("the v2 client in auto mode probes server/discover and stays on 2026-07-28", async () => {
    const { client, session } = await v2("auto");
    expect(client.getNegotiatedProtocolVersion()).toBe("2026-07-28");
    await exercise(session);
  });

  test("the v2 client in its default mode: the 2025 handshake", async () => {
    const { client, session } = await v2("legacy");
    expect(client.getProtocolEra()).toBe("legacy");
    expect(client.getNegotiatedProtocolVersion()).toBe("2025-11-25");
    await exercise(session);
  });

  test("the v1 client (@modelcontextprotocol/sdk 1.x)", async () => {
    await exercise(await v1());
  });

  test("a seed client: initialize at 1.0 is answered 1.0 (D21), in the wire format of the SDK's schemas", async () => {
    const s = await seed();
    expect(InitializeResultSchema.parse(s.initialized)).toMatchObject({
      protocolVersion: "1.0",
      serverInfo: { name: "corpus", version: "0.1.0" },
      capabilities: { tools: {} },
    });
    await exercise(s);
  });

  test("tools/list is private to its caller: another token's scopes list other tools", async () => {
    const searchOnly = (await running.services.auth.issuer.issue("bob", ["corpus:search"])).token;
    const client = new V2Client({ name: "bob", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await client.connect(
      new V2Transport(new URL(`${running.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${searchOnly}` } } }),
    );
    const listed = (await client.listTools()) as { tools: Array<{ name: string }>; cacheScope?: string; ttlMs?: number };
    expect(listed.tools.map((t) => t.name)).toEqual(["corpus_search", "search", "fetch", "corpus_answer"]);
    await client.close();
    // On the wire: the hint that keeps a shared cache from serving it to anyone else.
    const raw = await fetch(`${running.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${searchOnly}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
      }),
    });
    expect(((await raw.json()) as { result: unknown }).result).toMatchObject({
      cacheScope: "private",
      ttlMs: 0,
      tools: [{ name: "corpus_search" }, { name: "search" }, { name: "fetch" }, { name: "corpus_answer" }],
    });
  });

  test("errors in the SDK's wire format carry the request's id", async () => {
    const r = await fetch(`${running.url}/mcp`, {
      method: "POST",
      headers: { ...headers(), "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: "n-1", method: "tools/call", params: { name: "nope", arguments: {} } }),
    });
    expect(JSONRPCErrorResponseSchema.parse(await r.json())).toEqual({
      jsonrpc: "2.0",
      id: "n-1",
      error: { code: -32602, message: "Tool not found" },
    });
  });
});
