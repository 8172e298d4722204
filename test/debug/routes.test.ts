import { describe, expect, test } from "bun:test";
import { toolDefinitionsJson } from "../../src/mcp/tool-definitions";
import { req, testApp } from "../helpers";

describe("debug routes (second document part 4)", () => {
  test("404 when debug mode is off", async () => {
    const { app } = await testApp();
    for (const path of ["/debug/tools", "/debug/ping"]) {
      const r = await app.handle(req(path));
      expect(r.status).toBe(404);
      expect(((await r.json()) as { type: string }).type).toBe("not_found");
    }
  });

  test("with CORPUS_DEBUG_MODE=true: ping and the tool definitions", async () => {
    const { app } = await testApp({ CORPUS_DEBUG_MODE: "true" });
    const ping = (await (await app.handle(req("/debug/ping"))).json()) as { pong: string; timestamp: string };
    expect(ping.pong).toBe("ok");
    expect(new Date(ping.timestamp).toISOString()).toBe(ping.timestamp);
    const tools = (await (await app.handle(req("/debug/tools"))).json()) as { tools: Array<Record<string, any>> };
    expect(tools.tools).toEqual(toolDefinitionsJson());
    expect(tools.tools.map((t) => t.name)).toEqual(["corpus_search", "open_connectors", "search", "fetch", "corpus_answer"]);
    const search = tools.tools[0]!;
    expect(search.title).toBe("Search Corpus");
    expect(search.inputSchema.required).toEqual(["query"]);
    expect(search.inputSchema.properties.query.maxLength).toBe(1000);
    expect(search.inputSchema.properties.maxResults).toMatchObject({ type: "integer", minimum: 1, maximum: 20, default: 5 });
    expect(tools.tools[1]!.inputSchema).toMatchObject({ type: "object", properties: {} });
  });
});
