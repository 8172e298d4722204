// Issue 35 item 8 (D29): when the model cannot load (the executable's data folder on a disk too
// small for its checked copies: ENOSPC at every start of the embedding worker), /v1/query answered
// 500 "internal error". A question is a read: it is answered by its words, with a note that
// meaning was not used and why; deep search, which is by meaning alone, says it as D29 says a full
// disk (507). The worker is not started again for every question. The real app, with an
// embedding worker that fails to load as the executable's does (workers/no-room.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { createLogger, memorySink } from "../../src/log";
import { MEANING_NOT_USED_NO_ROOM } from "../../src/retrieval/search";
import { createServices, type Services } from "../../src/services";
import { bearer, postJson, testConfig } from "../helpers";
import { chinookOperatorFile } from "../support/chinook";

const logs = memorySink();
let services: Services;
let app: ReturnType<typeof createApp>;
let token: string;

beforeAll(async () => {
  const config = testConfig({ CORPUS_CONNECTORS_FILE: chinookOperatorFile(), CORPUS_LIMIT_QUERY_PER_MINUTE: "1000" });
  services = await createServices(config, createLogger("INFO", logs.sink), undefined, undefined, {
    embeddingWorker: { entry: join(import.meta.dir, "../embedding/workers/no-room.ts") },
  });
  app = createApp(services);
  token = (await services.auth.issuer.issue("alice", ["corpus:search", "corpus:read"])).token;
});

afterAll(async () => {
  await services?.close();
});

const ask = (path: string, body: unknown) => app.handle(postJson(path, body, bearer(token)));

describe("a model that cannot load (issue 35 item 8, D29)", () => {
  test("/v1/query answers by words, with a note that meaning was not used; every shape; never 500", async () => {
    const b = await ask("/v1/query", { query: "invoices billed to Berlin" });
    expect(b.status).toBe(200);
    const body = (await b.json()) as any;
    expect(body.search_summary.notes).toContain(MEANING_NOT_USED_NO_ROOM);
    const rows = body.results.flatMap((g: any) => g.chunks);
    expect(rows.length).toBeGreaterThan(0);
    expect(rows[0].content).toContain("Berlin");
    const a = await ask("/v1/query", { q: "invoices billed to Berlin", top_k: 3 });
    expect(a.status).toBe(200);
    expect(((await a.json()) as any).results.length).toBeGreaterThan(0);
    const c = await ask("/v1/query", { query: "invoices billed to Berlin", conversation_id: null });
    expect(c.status).toBe(200);
    const answered = (await c.json()) as any;
    expect(answered.sources.length).toBeGreaterThan(0);
    expect(answered.conversation_id).toBeString();
  });

  test("deep search, by meaning alone, is 507 insufficient_storage with the reason", async () => {
    const r = await ask("/v1/deep_search", { query: "invoices billed to Berlin" });
    expect(r.status).toBe(507);
    const body = (await r.json()) as { type: string; message: string };
    expect(body.type).toBe("insufficient_storage");
    expect(body.message).toContain("no room to load the embedding model");
  });

  test("MCP corpus_search answers with the note, not an error", async () => {
    const r = await app.handle(
      postJson(
        "/mcp",
        {
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: { name: "corpus_search", arguments: { query: "invoices billed to Berlin" } },
        },
        { ...bearer(token), accept: "application/json, text/event-stream" },
      ),
    );
    expect(r.status).toBe(200);
    const rpc = (await r.json()) as any;
    expect(rpc.result.isError).toBeFalsy();
    expect(rpc.result.content[0].text).toContain(`Note: ${MEANING_NOT_USED_NO_ROOM}`);
  });

  test("the worker is not started again for every question: one failed start logged, with the room it needs", async () => {
    for (let i = 0; i < 5; i++) expect((await ask("/v1/query", { query: `invoices ${i}` })).status).toBe(200);
    const failed = logs
      .records()
      .filter((l) => l.message === "the embedding model could not be loaded: questions are answered by their words until it is");
    expect(failed.length).toBe(1);
    expect(String(failed[0]!.error)).toContain("it needs 44 MB, 39 MB free");
    expect(logs.records().some((l) => l.level === "ERROR" && l.message === "unhandled error")).toBe(false);
  });
});
