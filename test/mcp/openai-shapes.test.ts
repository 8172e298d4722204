// The `search` and `fetch` tools against the shapes OpenAI publishes for ChatGPT's deep research
// and company knowledge connectors. Source: OpenAI, "Building MCP servers for ChatGPT and API
// integrations", https://platform.openai.com/docs/mcp (sections "search tool" and "fetch tool"):
// search takes a single query string and returns `{ results: [{ id, title, url }] }`; fetch takes
// a single id string and returns `{ id, title, text, url, metadata? }` (metadata: key/value
// pairs); each as exactly one text content item holding that JSON. Written out here as JSON
// Schema, and compared with what tools/list says (2026-07-28, cache-hinted) and what a call returns.
import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { beginRequest } from "../../src/http/request-context";
import { bearer, req, testApp } from "../helpers";

const OPENAI = {
  searchInput: { query: "string" },
  searchResult: Type.Object({ id: Type.String(), title: Type.String(), url: Type.String() }),
  fetchInput: { id: "string" },
  fetchResult: Type.Object({
    id: Type.String(),
    title: Type.String(),
    text: Type.String(),
    url: Type.String(),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]))),
  }),
};

const MODERN = "2026-07-28";
const META = { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} };

async function setup() {
  const t = await testApp();
  const token = (await t.services.auth.issuer.issue("alice", ["corpus:search"])).token;
  const modern = async (method: string, params: Record<string, unknown> = {}) => {
    const r = req("/mcp", {
      method: "POST",
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { ...params, _meta: META } }),
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...bearer(token),
        "mcp-protocol-version": MODERN,
        "mcp-method": method,
        ...(typeof params.name === "string" ? { "mcp-name": params.name } : {}),
      },
    });
    beginRequest(r, "192.0.2.1");
    return (await (await t.app.handle(r)).json()) as any;
  };
  return { ...t, modern };
}

/** The properties of a listed JSON Schema object. */
const propertiesOf = (schema: any) => schema.properties as Record<string, any>;

describe("search and fetch in OpenAI's published shapes", () => {
  test("tools/list: one string argument each, outputs with OpenAI's required fields; read-only, titled; cached privately", async () => {
    const { modern } = await setup();
    const { result } = await modern("tools/list");
    expect(result.cacheScope).toBe("private");
    const byName = new Map<string, any>(result.tools.map((t: any) => [t.name, t]));
    const search = byName.get("search");
    const fetch = byName.get("fetch");
    for (const [tool, input] of [
      [search, OPENAI.searchInput],
      [fetch, OPENAI.fetchInput],
    ] as const) {
      expect(Object.fromEntries(Object.entries(propertiesOf(tool.inputSchema)).map(([k, v]) => [k, v.type]))).toEqual(input);
      expect(tool.inputSchema.required).toEqual(Object.keys(input));
      expect(tool.annotations).toMatchObject({ title: expect.any(String), readOnlyHint: true, destructiveHint: false });
    }
    const item = propertiesOf(search.outputSchema).results.items;
    for (const field of OPENAI.searchResult.required) {
      expect(item.required).toContain(field);
      expect(item.properties[field].type).toBe("string");
    }
    for (const field of OPENAI.fetchResult.required!) {
      expect(fetch.outputSchema.required).toContain(field);
      expect(propertiesOf(fetch.outputSchema)[field].type).toBe("string");
    }
    expect(propertiesOf(fetch.outputSchema).metadata.type).toBe("object");
    // The template resources/read opens (what corpus_search's resource_link items point at), cache-hinted too.
    const templates = (await modern("resources/templates/list")).result;
    expect(templates.cacheScope).toBe("private");
    expect(templates.resourceTemplates.map((t: any) => [t.uriTemplate, t.mimeType])).toEqual([["corpus://doc/{id}", "text/plain"]]);
  });

  test("a call's answer: exactly one text item, OpenAI's object as JSON (search with no hit; fetch of an unknown id refused)", async () => {
    const { modern } = await setup();
    const searched = (await modern("tools/call", { name: "search", arguments: { query: "lighthouse keepers" } })).result;
    expect(searched.content).toHaveLength(1);
    expect(searched.content[0].type).toBe("text");
    const parsed = JSON.parse(searched.content[0].text);
    expect(Value.Check(Type.Object({ results: Type.Array(OPENAI.searchResult) }), parsed)).toBe(true);
    expect(parsed).toEqual(searched.structuredContent);
    const missing = (await modern("tools/call", { name: "fetch", arguments: { id: "chnk_0123456789abcdef0123456789abcdef" } })).result;
    expect(missing.isError).toBe(true);
    expect(missing.content[0].text).toStartWith("Document not found");
    const empty = (await modern("tools/call", { name: "search", arguments: { query: "  " } })).result;
    expect(empty.isError).toBe(true);
    expect(empty.content[0].text).toContain("Query cannot be empty");
  });
});
