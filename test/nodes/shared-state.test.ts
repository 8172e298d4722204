// Two corpus nodes on one PostgreSQL share one state (D33, issue 37): a connector added on B is
// searched from A, a question answered by A is found by deep_search on B, rate limits and the /mcp
// per-address bucket count across the nodes, a POST retried on B with A's Idempotency-Key is
// replayed, and a user deleted on A is refused by B at its next request (no cache keeps them).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { call, type TwoNodes, twoNodes } from "../support/two-nodes";
import { until } from "../support/wait";

setDefaultTimeout(180_000);

/** deep_search requests a user may make in a day, on both nodes together. */
const DEEP_SEARCH_LIMIT = 10;
/** /mcp requests one client address may make a minute, on both nodes together. */
const MCP_PER_MINUTE = 10;
/** A made-up word no text holds: found only in the note written here. */
const WORD = "zorvaltique";

let nodes: TwoNodes;
beforeAll(async () => {
  nodes = await twoNodes({
    CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE: String(DEEP_SEARCH_LIMIT),
    CORPUS_LIMIT_DEEP_SEARCH_PER_DAY: String(DEEP_SEARCH_LIMIT),
    CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: String(MCP_PER_MINUTE),
  });
});
afterAll(() => nodes?.close());

describe("two nodes on one PostgreSQL", () => {
  test("a connector added on B is searched from A; A's answer is found by deep_search on B; the user deleted on A is refused by B", async () => {
    const token = await nodes.token("alice");
    const docs = join(nodes.folderOf("alice"), "notes");
    mkdirSync(docs, { recursive: true });
    writeFileSync(join(docs, "warehouse.txt"), `The ${WORD} shipment of copper cable leaves the Rotterdam warehouse every Tuesday.\n`);
    writeFileSync(join(docs, "clinic.txt"), "The board approved hiring two nurses for the night shift at the clinic.\n");
    const added = await call(nodes.b, token, "POST", "/v1/connectors", { id: "notes", kind: "files", config: { path: docs } });
    expect({ status: added.status, errors: nodes.b.errors() }).toEqual({ status: 200, errors: [] });

    // Searched from A: the connector B added, read and embedded by whichever node took its lease.
    const question = `when does the ${WORD} shipment leave?`;
    const answered = await until("A to find the note of the connector added on B", async () => {
      const r = await call(nodes.a, token, "POST", "/v1/query", { query: question, max_results: 5 });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { query_id: string; results: Array<{ chunks: unknown[] }> };
      return JSON.stringify(body.results).includes(WORD) ? body : undefined;
    });

    // A's answer, archived by A, found by deep_search on B.
    const found = await until("B's deep_search to find A's answer", async () => {
      const r = await call(nodes.b, token, "POST", "/v1/deep_search", { query: question, max_results: 50 });
      expect(r.status).toBe(200);
      const hits = ((await r.json()) as { archive_results: Array<{ original_query_id: string }> }).archive_results;
      return hits.some((h) => h.original_query_id === answered.query_id) ? true : undefined;
    });
    expect(found).toBe(true);

    // B has alice's principal in hand (it answered her just now); A deletes her.
    expect((await call(nodes.b, token, "GET", "/v1/connectors")).status).toBe(200);
    const deleted = await call(nodes.a, token, "DELETE", "/v1/delete_my_data");
    expect(deleted.status).toBe(200);
    // B's next request: refused at once, no cache keeps her.
    expect((await call(nodes.b, token, "GET", "/v1/connectors")).status).toBe(401);
    expect((await call(nodes.b, token, "POST", "/v1/query", { query: question })).status).toBe(401);
    // And a new token of hers finds nothing on B: her connector and archive are gone.
    // (A token issued in the second of the deletion's stamp is refused too: one made after it.)
    let fresh = "";
    const listed = await until("a new token of hers to be accepted on B", async () => {
      fresh = await nodes.token("alice");
      const r = await call(nodes.b, fresh, "GET", "/v1/connectors");
      return r.status === 200 ? ((await r.json()) as { connectors: unknown[] }) : undefined;
    });
    expect(listed.connectors).toEqual([]);
    const searched = (await (await call(nodes.b, fresh, "POST", "/v1/deep_search", { query: question, max_results: 50 })).json()) as {
      archive_results: unknown[];
    };
    expect(searched.archive_results).toEqual([]);
  });

  test("rate limits count across nodes: A and B together give one user no more than the limit", async () => {
    const token = await nodes.token("rita");
    // Twice the limit on each node, all at once: each node alone would pass the limit.
    const statuses = await Promise.all(
      Array.from({ length: 4 * DEEP_SEARCH_LIMIT }, (_, i) =>
        call(i % 2 ? nodes.b : nodes.a, token, "POST", "/v1/deep_search", { query: "copper cable" }).then(async (r) => {
          await r.body?.cancel();
          return { node: i % 2 ? "b" : "a", status: r.status };
        }),
      ),
    );
    expect(statuses.filter((s) => s.status !== 200 && s.status !== 429)).toEqual([]);
    expect(statuses.filter((s) => s.status === 200).length).toBe(DEEP_SEARCH_LIMIT);
    // Refused on both nodes once the shared count is spent.
    for (const node of [nodes.a, nodes.b])
      expect((await call(node, token, "POST", "/v1/deep_search", { query: "copper cable" })).status).toBe(429);
  });

  test("a POST with an Idempotency-Key done on A and retried on B is replayed by B, not done twice", async () => {
    const token = await nodes.token("ivan");
    const docs = join(nodes.folderOf("ivan"), "notes");
    mkdirSync(docs, { recursive: true });
    const post = (node: typeof nodes.a) =>
      fetch(`${node.url()}/v1/connectors`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": "add-notes-1" },
        body: JSON.stringify({ id: "notes", kind: "files", config: { path: docs } }),
      });
    const first = await post(nodes.a);
    expect(first.status).toBe(200);
    const firstBody = await first.text();
    // A stores the answer behind it: until then B's retry is told the first still runs (409, Retry-After).
    const retried = await until("B to replay A's answer", async () => {
      const r = await post(nodes.b);
      if (r.status === 409 && r.headers.get("retry-after")) {
        await r.body?.cancel();
        return undefined;
      }
      return { status: r.status, replayed: r.headers.get("idempotent-replayed"), body: await r.text() };
    });
    // Done again, B would answer 409: the connector exists.
    expect(retried).toEqual({ status: 200, replayed: "true", body: firstBody });
    const listed = (await (await call(nodes.b, token, "GET", "/v1/connectors")).json()) as { connectors: unknown[] };
    expect(listed.connectors.length).toBe(1);
  });

  test("the /mcp per-address bucket counts across nodes: A and B together give one address no more than its tokens", async () => {
    const token = await nodes.token("mona");
    // Twice the bucket on each node, all at once: each node alone would let the bucket's worth through.
    const answers = await Promise.all(
      Array.from({ length: 4 * MCP_PER_MINUTE }, (_, i) =>
        fetch(`${(i % 2 ? nodes.b : nodes.a).url()}/mcp`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({ jsonrpc: "2.0", id: i, method: "ping" }),
        }).then(async (r) => {
          await r.body?.cancel();
          return { status: r.status, charged: r.headers.has("x-ratelimit-remaining") };
        }),
      ),
    );
    expect(answers.filter((a) => !a.charged)).toEqual([]);
    // A token more may have refilled while they ran (one per 60/MCP_PER_MINUTE s), never a node's own bucket.
    const through = answers.filter((a) => a.status !== 429).length;
    expect(through).toBeGreaterThanOrEqual(MCP_PER_MINUTE);
    expect(through).toBeLessThanOrEqual(MCP_PER_MINUTE + 1);
    for (const node of [nodes.a, nodes.b]) {
      const r = await fetch(`${node.url()}/mcp`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
        body: JSON.stringify({ jsonrpc: "2.0", id: "last", method: "ping" }),
      });
      await r.body?.cancel();
      expect(r.status).toBe(429);
    }
  });
});
