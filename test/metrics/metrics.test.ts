// /metrics (D35): Prometheus text on a loopback listener of its own (CORPUS_METRICS_LISTEN); the
// service's listener refuses it to every token. A real server, its requests counted as they pass.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config";
import { createLogger, memorySink } from "../../src/log";
import { METRICS_REFUSED } from "../../src/metrics/listener";
import { type Running, startServer } from "../../src/server";
import { bearer, connectorsSettled, TEST_MIN_FREE_BYTES, tempDir, testConfig, tokenFor } from "../helpers";
import { until } from "../support/wait";

// Servers and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const logs = memorySink();
let running: Running;
let metricsUrl: string;
let userToken: string;

const scrape = async () => (await fetch(`${metricsUrl}/metrics`)).text();
/** The value of one series in a scrape (labels written as prom-client writes them), or undefined. */
const seriesValue = (text: string, series: string) => {
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

beforeAll(async () => {
  const docs = tempDir("corpus-metrics-docs-");
  writeFileSync(join(docs, "zephyr-plumbing-invoice.txt"), "Zephyr Plumbing invoice 7731: amount due 1,284.50 EUR by 15 April 2024.");
  const config = testConfig({
    CORPUS_PORT: "0",
    CORPUS_METRICS_LISTEN: "127.0.0.1:0",
    CORPUS_CONNECTOR_ROOTS: docs,
    // The day's window, not the minute's: a run straddling a minute's end cannot reopen it.
    CORPUS_LIMIT_QUERY_PER_MINUTE: "1",
    CORPUS_LIMIT_QUERY_PER_DAY: "1",
  });
  running = await startServer(config, createLogger("INFO", logs.sink));
  metricsUrl = running.metricsUrl!;
  userToken = await tokenFor(running.services, "alice", ["corpus:search", "corpus:connectors"]);
  await running.services.connectors.add("alice", { id: "alice-private-folder", kind: "files", config: { path: docs } });
  await connectorsSettled(running.services, "alice");
  docsPath = docs;
});
let docsPath: string;

afterAll(async () => {
  await running?.stop();
});

describe("the service's own listener", () => {
  test("refuses /metrics to a user's token, and to a caller without one (403)", async () => {
    for (const headers of [bearer(userToken), {}]) {
      const r = await fetch(`${running.url}/metrics`, { headers });
      expect(r.status).toBe(403);
      expect(await r.json()).toEqual({ type: "forbidden", message: METRICS_REFUSED });
    }
  });
});

describe("the metrics listener", () => {
  test("is on loopback, apart from the service's listener", () => {
    expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(metricsUrl).not.toBe(running.url);
  });

  test("answers Prometheus text: requests by route and status with latency buckets; an unknown path is no label", async () => {
    await fetch(`${running.url}/`);
    await fetch(`${running.url}/no/such/alice-secret-path`);
    const text = await until("both requests counted", async () => {
      const t = await scrape();
      return t.includes('route="unmatched"') && t.includes('route="/",status="200"') ? t : undefined;
    });
    const r = await fetch(`${metricsUrl}/metrics`);
    expect(r.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    expect(text).toContain("# TYPE corpus_http_request_duration_seconds histogram");
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="GET",route="/",status="200"}')).toBeGreaterThanOrEqual(1);
    expect(
      seriesValue(text, 'corpus_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/",status="200"}'),
    ).toBeGreaterThanOrEqual(1);
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="GET",route="unmatched",status="404"}')).toBe(1);
    // The refused /metrics requests of the test before are counted by their route too.
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="GET",route="/metrics",status="403"}')).toBe(2);
    // Never a user's name, a connector's id or a path.
    expect(text).not.toContain("alice");
  });

  test("a page or redirect a route makes itself is counted under the status it was sent with", async () => {
    const hex = "0123456789abcdef0123456789abcdef";
    // The console without a session (401), a citation's page to a caller not signed in (303).
    expect((await fetch(`${running.url}/console/users`)).status).toBe(401);
    expect((await fetch(`${running.url}/d/chnk_${hex}`, { redirect: "manual" })).status).toBe(303);
    const text = await until("both counted", async () => {
      const t = await scrape();
      return t.includes('route="/console/users"') && t.includes('route="/d/:id"') ? t : undefined;
    });
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="GET",route="/console/users",status="401"}')).toBe(1);
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="GET",route="/d/:id",status="303"}')).toBe(1);
    expect(text).not.toMatch(/route="\/(console\/users|d\/:id)",status="200"/);
  });

  test("counts rate-limit refusals by route", async () => {
    const ask = () =>
      fetch(`${running.url}/v1/query`, {
        method: "POST",
        headers: { ...bearer(userToken), "content-type": "application/json" },
        body: JSON.stringify({ q: "anything" }),
      });
    expect((await ask()).status).toBe(200);
    expect((await ask()).status).toBe(429);
    const text = await until("the refusal counted", async () => {
      const t = await scrape();
      return seriesValue(t, 'corpus_rate_limit_refusals_total{route="/v1/query"}') === 1 ? t : undefined;
    });
    expect(seriesValue(text, 'corpus_http_request_duration_seconds_count{method="POST",route="/v1/query",status="429"}')).toBe(1);
  });

  test("counts an MCP search the per-user query limit refused (a tool error, answered 200) as a refusal of /mcp", async () => {
    // Another user than the other tests' (one question a day each).
    const token = await tokenFor(running.services, "dave", ["corpus:search"]);
    const MODERN = "2026-07-28";
    const search = async () => {
      const r = await fetch(`${running.url}/mcp`, {
        method: "POST",
        headers: {
          ...bearer(token),
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          "mcp-protocol-version": MODERN,
          "mcp-method": "tools/call",
          "mcp-name": "search",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "tools/call",
          params: {
            name: "search",
            arguments: { query: "Zephyr Plumbing invoice" },
            _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {} },
          },
        }),
      });
      expect(r.status).toBe(200);
      return ((await r.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
    };
    expect((await search()).isError).toBeFalsy();
    const refused = await search();
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toStartWith("Rate limit exceeded");
    await until("the refusal counted", async () =>
      seriesValue(await scrape(), 'corpus_rate_limit_refusals_total{route="/mcp"}') === 1 ? true : undefined,
    );
  });

  test("times each stage of a question: plan, gather, rank and archive for every one, answer for shape C's", async () => {
    const before = await scrape();
    const count = (text: string, stage: string) => seriesValue(text, `corpus_question_stage_duration_seconds_count{stage="${stage}"}`) ?? 0;
    // Another user than the rate-limit test's (one question a day each).
    const token = await tokenFor(running.services, "carol", ["corpus:search"]);
    const r = await fetch(`${running.url}/v1/query`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ query: "How much did Acme invoice us in March?", conversation_id: null }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toHaveProperty("answer");
    const text = await scrape();
    for (const stage of ["plan", "gather", "rank", "answer", "archive"]) expect(count(text, stage) - count(before, stage), stage).toBe(1);
    expect(count(text, "search")).toBe(0);
    expect(text).toContain("# TYPE corpus_question_stage_duration_seconds histogram");
    expect(seriesValue(text, 'corpus_question_stage_duration_seconds_bucket{le="+Inf",stage="rank"}')).toBe(count(text, "rank"));
    // The question's own embedding, counted by the model.
    expect(seriesValue(text, 'corpus_embedded_texts_total{priority="urgent"}')).toBeGreaterThan(
      seriesValue(before, 'corpus_embedded_texts_total{priority="urgent"}') ?? 0,
    );
    expect(text).not.toContain("carol");
  });

  test("counts password sign-ins by result, and reads connectors by kind, the embedding queue, owed work, the database's size and free space", async () => {
    const { accounts } = running.services;
    await accounts.add("bob", "a long enough password");
    expect(await accounts.verify("bob", "a long enough password")).toBe(true);
    expect(await accounts.verify("bob", "not the password at all")).toBe(false);
    expect(await accounts.verify("nobody", "not the password at all")).toBe(false);
    const text = await scrape();
    expect(seriesValue(text, 'corpus_sign_ins_total{method="password",result="success"}')).toBe(1);
    expect(seriesValue(text, 'corpus_sign_ins_total{method="password",result="failure"}')).toBe(2);
    expect(seriesValue(text, 'corpus_connectors{kind="files"}')).toBe(1);
    expect(seriesValue(text, "corpus_embedding_queue_depth")).toBeGreaterThanOrEqual(0);
    expect(seriesValue(text, "corpus_data_free_bytes")).toBeGreaterThan(0);
    expect(seriesValue(text, "corpus_data_min_free_bytes")).toBe(Number(TEST_MIN_FREE_BYTES));
    const { page_size } = running.services.db.query<{ page_size: number }, []>("PRAGMA page_size").get()!;
    expect(seriesValue(text, "corpus_database_bytes")! % page_size).toBe(0);
    expect(seriesValue(text, "corpus_database_bytes")).toBeGreaterThan(10 * page_size);
    expect(text).toContain("# TYPE corpus_owed_work gauge");
    expect(text).not.toContain("alice");
  });

  test("each connector's state, chunks and embedding by kind: never its id, owner or path", async () => {
    const index = (await running.services.connectors.active("alice"))[0]!.connector as { progress(): { total: number; embedded: number } };
    const { total, embedded } = index.progress();
    expect(total).toBeGreaterThan(0);
    const text = await scrape();
    expect(seriesValue(text, 'corpus_connector_states{kind="files",state="ok"}')).toBe(1);
    expect(seriesValue(text, 'corpus_connector_chunks{kind="files",embedded="true"}')).toBe(embedded);
    expect(seriesValue(text, 'corpus_connector_chunks{kind="files",embedded="false"}')).toBe(total - embedded);
    // The folder's chunks were embedded in the background: the model's count holds them.
    expect(seriesValue(text, 'corpus_embedded_texts_total{priority="background"}')).toBeGreaterThanOrEqual(embedded);
    // Idle: no phase under way, so no progress series, only their declarations.
    expect(text).toContain("# TYPE corpus_connector_progress_done gauge");
    expect(text).not.toContain("corpus_connector_progress_done{");
    for (const name of ["alice", docsPath, "zephyr"]) expect(text).not.toContain(name);
  });

  test("refuses a page's requests (another Host, an Origin), other paths and methods", async () => {
    const port = new URL(metricsUrl).port;
    const status = async (path: string, init: RequestInit = {}) => (await fetch(`${metricsUrl}${path}`, init)).status;
    expect(await status("/metrics", { headers: { host: `rebound.example:${port}` } })).toBe(403);
    expect(await status("/metrics", { headers: { origin: "http://rebound.example" } })).toBe(403);
    expect(await status("/metrics", { headers: { host: `localhost:${port}` } })).toBe(200);
    expect(await status("/")).toBe(404);
    expect(await status("/metrics", { method: "POST" })).toBe(405);
  });
});

test("CORPUS_METRICS_LISTEN takes a loopback address only", () => {
  for (const value of ["0.0.0.0:9464", "192.168.1.2:9464", "example.com:9464", "127.0.0.1", "[::]:9464"])
    expect(() => loadConfig({ CORPUS_METRICS_LISTEN: value })).toThrow(ConfigError);
  for (const value of ["127.0.0.1:9464", "[::1]:9464", "localhost:0"])
    expect(loadConfig({ CORPUS_METRICS_LISTEN: value }).CORPUS_METRICS_LISTEN).toBe(value);
});

test("a metrics address in use stops the start, before the service listens", async () => {
  const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const config = testConfig({ CORPUS_PORT: "0", CORPUS_METRICS_LISTEN: `127.0.0.1:${taken.port}` });
    const written = memorySink();
    await expect(startServer(config, createLogger("INFO", written.sink))).rejects.toThrow(String(taken.port));
    expect(written.records().map((r) => r.message)).not.toContain("listening");
  } finally {
    taken.stop(true);
  }
});
