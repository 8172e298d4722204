// A citation's url opens wherever the server listens (D36, D4). Without CORPUS_OAUTH_RESOURCE_URL
// the configured address may name no place a browser can go: CORPUS_PORT=0 (a free port) and a
// wildcard CORPUS_HOST (0.0.0.0). Real listeners, real requests: every wire that writes a
// citation's url (REST shapes B and C, GET /v1/documents/{id}, MCP search, fetch and
// corpus_search) names the address reached, and that url, followed, opens the /d page.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { connectorsSettled, tempDir, testConfig } from "../helpers";

setDefaultTimeout(180_000);

const QUESTION = "Lisbon ferry timetable for the harbour pilots";
const TEXT = "Lisbon ferry timetable: the harbour pilots board at 06:40 and 18:20 from the Cais do Sodré pier.";

interface Listening {
  running: Running;
  token: string;
  /** How the tests reach it: the origin put in every request. */
  origin: string;
}

async function listen(host: string, reachAs: string, extra: Record<string, string> = {}): Promise<Listening> {
  const roots = tempDir("corpus-citation-links-");
  mkdirSync(join(roots, "alice"), { recursive: true });
  writeFileSync(join(roots, "alice", "ferries.txt"), TEXT);
  const running = await startServer(
    testConfig({ CORPUS_HOST: host, CORPUS_PORT: "0", CORPUS_CONNECTOR_ROOTS: join(roots, "{user}"), ...extra }),
    createLogger("ERROR", memorySink().sink),
  );
  const s = running.services;
  const token = (await s.auth.issuer.issue("alice", ["corpus:search", "corpus:read", "connectors:write"])).token;
  await s.connectors.add("alice", { id: "docs", kind: "files", label: "Papers", config: { path: join(roots, "alice") } });
  await connectorsSettled(s, "alice");
  return { running, token, origin: `http://${reachAs}:${running.server.port}` };
}

/** Every citation url the wires give for QUESTION, by wire. */
async function citationUrls(l: Listening): Promise<Record<string, string>> {
  const headers = { authorization: `Bearer ${l.token}`, "content-type": "application/json" };
  const post = async (body: object) => {
    const r = await fetch(`${l.origin}/v1/query`, { method: "POST", headers, body: JSON.stringify(body) });
    expect(r.status).toBe(200);
    return (await r.json()) as unknown;
  };
  const b = (await post({ query: QUESTION, max_results: 1 })) as {
    results: Array<{ chunks: Array<{ metadata: { citation_url: string } }> }>;
  };
  const c = (await post({ query: QUESTION, conversation_id: null })) as { sources: Array<{ url: string }> };
  const chunkUrl = b.results[0]!.chunks[0]!.metadata.citation_url;
  const id = chunkUrl.slice(chunkUrl.lastIndexOf("/") + 1);
  const document = await fetch(`${l.origin}/v1/documents/${id}`, { headers });
  expect(document.status).toBe(200);

  const client = new Client(
    { name: "corpus-test-citation-links", version: "1.0.0" },
    { versionNegotiation: { mode: { pin: "2026-07-28" } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${l.origin}/mcp`), { requestInit: { headers: { authorization: headers.authorization } } }),
  );
  const call = async (name: string, args: Record<string, unknown>) => {
    const r = await client.callTool({ name, arguments: args });
    expect(r.isError).toBeFalsy();
    return r.structuredContent as unknown;
  };
  const search = (await call("search", { query: QUESTION })) as { results: Array<{ id: string; url: string }> };
  const fetched = (await call("fetch", { id: search.results[0]!.id })) as { url: string };
  const corpusSearch = (await call("corpus_search", { query: QUESTION, maxResults: 1 })) as { results: Array<{ url: string }> };
  await client.close();
  return {
    "REST shape B citation_url": chunkUrl,
    "REST shape C url": c.sources[0]!.url,
    "GET /v1/documents/{id} url": ((await document.json()) as { url: string }).url,
    "MCP search url": search.results[0]!.url,
    "MCP fetch url": fetched.url,
    "MCP corpus_search url": corpusSearch.results[0]!.url,
  };
}

/** Follows a citation's url as its owner would with a token: the page of the cited text. */
async function opens(url: string, token: string): Promise<void> {
  const page = await fetch(url, { headers: { authorization: `Bearer ${token}` }, redirect: "manual" });
  expect(page.status).toBe(200);
  expect(await page.text()).toContain("Cais do Sodr");
}

describe.each([
  ["loopback, CORPUS_PORT=0", "127.0.0.1", "127.0.0.1"],
  ["wildcard 0.0.0.0, CORPUS_PORT=0, reached as localhost", "0.0.0.0", "localhost"],
])("%s, no CORPUS_OAUTH_RESOURCE_URL", (_, host, reachAs) => {
  let l: Listening;
  beforeAll(async () => {
    l = await listen(host, reachAs);
  });
  afterAll(async () => {
    await l?.running.stop();
  });

  test("every wire's citation names the address reached, with the real port, and opens", async () => {
    const urls = await citationUrls(l);
    for (const [wire, url] of Object.entries(urls)) {
      expect({ wire, url }).toEqual({ wire, url: expect.stringMatching(new RegExp(`^${l.origin}/d/(chnk|doc)_[0-9a-f]{32}$`)) });
      await opens(url, l.token);
    }
  });
});

describe("CORPUS_OAUTH_RESOURCE_URL set: the one truth, whatever the request reached", () => {
  let l: Listening;
  beforeAll(async () => {
    l = await listen("0.0.0.0", "127.0.0.1", { CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com" });
  });
  afterAll(async () => {
    await l?.running.stop();
  });

  test("every wire's citation is under the public URL", async () => {
    const urls = await citationUrls(l);
    for (const [wire, url] of Object.entries(urls))
      expect({ wire, url }).toEqual({ wire, url: expect.stringMatching(/^https:\/\/corpus\.example\.com\/d\/(chnk|doc)_[0-9a-f]{32}$/) });
    // The page itself is served at the address reached, under the path the url names.
    await opens(`${l.origin}${new URL(urls["MCP search url"]!).pathname}`, l.token);
  });
});
