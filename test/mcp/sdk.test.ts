// /mcp with the official MCP TypeScript SDK client over Streamable HTTP, against the app
// in-process: the transport's own `fetch` option hands each request to app.handle (no listener).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { connectorsSettled, tempDir, testApp } from "../helpers";
import { SHARED_DATA } from "../support/servers";

setDefaultTimeout(120_000);

let running: Awaited<ReturnType<typeof testApp>>;
let token: string;

async function connect(tok = token) {
  const client = new Client({ name: "corpus-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL("http://localhost/mcp"), {
    requestInit: { headers: { authorization: `Bearer ${tok}` } },
    fetch: (url, init) => running.app.handle(new Request(url, init)),
  });
  await client.connect(transport);
  return client;
}

beforeAll(async () => {
  const roots = tempDir("corpus-mcp-roots-");
  mkdirSync(join(roots, "docs"));
  for (const f of ["Orlen.txt", "AmazonWebServices.pdf"]) cpSync(join(SHARED_DATA, "invoices", f), join(roots, "docs", f));
  running = await testApp({ CORPUS_CONNECTOR_ROOTS: roots, CORPUS_LOG_LEVEL: "INFO" });
  const services = running.services;
  token = (await services.auth.issuer.issue("alice", ["corpus:search", "corpus:read", "connectors:read", "connectors:write"])).token;
  await services.connectors.add("alice", { id: "docs", kind: "files", label: "Invoices", config: { path: join(roots, "docs") } });
  await connectorsSettled(services, "alice");
});

afterAll(async () => {
  await running.services.close();
});

describe("the official MCP client", () => {
  test("connects, negotiates, lists both tools with schemas", async () => {
    const client = await connect();
    expect(client.getServerVersion()).toEqual({ name: "corpus", version: "0.1.0" });
    expect(client.getServerCapabilities()).toMatchObject({ tools: {}, resources: {} });
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(["corpus_search", "open_connectors", "search", "fetch", "corpus_answer"]);
    const search = tools[0]!;
    expect(search.title).toBe("Search Corpus");
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(search.outputSchema).toBeDefined();
    expect(tools[1]!._meta).toMatchObject({
      ui: { resourceUri: "ui://corpus/connectors.html" },
      "openai/outputTemplate": "ui://corpus/connectors.html",
    });
    await client.ping();
    await client.close();
  });

  test("corpus_search returns cited text and structured results, and is archived", async () => {
    const client = await connect();
    const r = await client.callTool({ name: "corpus_search", arguments: { query: "  Amazon Web Services invoice  ", maxResults: 2 } });
    expect(r.isError).toBeFalsy();
    const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
    expect(text).toContain('Results for "Amazon Web Services invoice"');
    expect(text).toContain("Source: Invoices · AmazonWebServices.pdf");
    // A document's date is its file's, and says so (not the invoice's date).
    expect(text).toMatch(/Date: \d{4}-\d{2}-\d{2}T[\d:.]+Z \(file modified\)/);
    const structured = r.structuredContent as { query: string; results: Array<Record<string, unknown>> };
    expect(structured.query).toBe("Amazon Web Services invoice");
    expect(structured.results.length).toBeLessThanOrEqual(2);
    expect(structured.results[0]).toMatchObject({
      title: expect.any(String),
      source_url: expect.stringMatching(/^file:/),
      connector: "docs",
    });
    await running.services.archive.settled();
    const archived = await running.services.archive.search(
      "alice",
      (await running.services.embeddings.embed("alice", ["Amazon invoice"]))[0]!,
      {
        limit: 5,
      },
    );
    expect(archived.some((m) => m.question === "Amazon Web Services invoice")).toBe(true);
    await client.close();
  });

  test("tool errors: empty, too long, bad maxResults, unknown tool", async () => {
    const client = await connect();
    const empty = await client.callTool({ name: "corpus_search", arguments: { query: "   " } });
    expect(empty.isError).toBe(true);
    expect((empty.content as Array<{ text: string }>)[0]!.text).toContain("Query cannot be empty");
    const long = await client.callTool({ name: "corpus_search", arguments: { query: "x".repeat(1001) } });
    expect(long.isError).toBe(true);
    expect((long.content as Array<{ text: string }>)[0]!.text).toContain("Query length exceeds maximum");
    for (const maxResults of [0, 21, 2.5, "5"]) {
      const bad = await client.callTool({ name: "corpus_search", arguments: { query: "invoice", maxResults } });
      expect(bad.isError).toBe(true);
      expect((bad.content as Array<{ text: string }>)[0]!.text).toContain("maxResults must be an integer from 1 to 20");
    }
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toThrow("Tool not found");
    await client.close();
  });

  test("open_connectors returns a summary and the widget resource; resources list and read", async () => {
    const client = await connect();
    const r = await client.callTool({ name: "open_connectors", arguments: {} });
    const [summary, widget] = r.content as Array<Record<string, any>>;
    expect(summary!.text).toContain("Invoices (docs, files): ok");
    expect(widget!.type).toBe("resource");
    expect(widget!.resource).toMatchObject({ uri: "ui://corpus/connectors.html", mimeType: "text/html;profile=mcp-app" });
    expect(widget!.resource.text).toContain("<!doctype html>");
    const { resources } = await client.listResources();
    expect(resources).toEqual([expect.objectContaining({ uri: "ui://corpus/connectors.html", mimeType: "text/html;profile=mcp-app" })]);
    const read = await client.readResource({ uri: "ui://corpus/connectors.html" });
    expect(read.contents.map((c) => c.mimeType)).toEqual(["text/html;profile=mcp-app", "text/html+skybridge"]);
    await client.close();
  });

  test("a token without the tool's scope is refused; no token is refused", async () => {
    const readOnly = (await running.services.auth.issuer.issue("bob", ["connectors:read"])).token;
    const client = await connect(readOnly);
    await expect(client.callTool({ name: "corpus_search", arguments: { query: "x" } })).rejects.toThrow(
      "Forbidden: this token lacks the scope corpus:search",
    );
    await client.close();
    await expect(connect("not-a-token")).rejects.toThrow("Unauthorized: token is malformed");
  });

  test("logs name the tool", async () => {
    // The access line is written after the response, on a later turn of the event loop (Elysia's
    // afterResponse): on a loaded machine the client has its answer first.
    const line = await running.logs.written((l) => l.logger === "http.access" && l.tool === "corpus_search");
    expect(line.path).toBe("/mcp");
  });
});
