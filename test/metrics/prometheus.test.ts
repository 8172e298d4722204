// A real Prometheus (Debian's `prometheus`, brought by scripts/test-needs.ts) scrapes corpus's
// metrics listener on loopback (D35); the series are read back through Prometheus's HTTP API. A
// second corpus, its operator table held part-way through being embedded, gives the progress gauges samples.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { AHEAD_PAGE } from "../../src/connectors/embed-ahead";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { bearer, connectorsSettled, tempDir, testConfig, tokenFor } from "../helpers";
import { operatorSqliteTable, shopOrders } from "../support/sources";
import { freePort } from "../support/tcp";
import { vectorsWithoutModel } from "../support/vectors-without-model";
import { until } from "../support/wait";

// Prometheus starts, then scrapes every second; a busy two-core machine makes that slow.
setDefaultTimeout(90_000);

const ALERTS = join(import.meta.dir, "../../docs/monitoring/corpus-alerts.yml");
let running: Running;
/** A second corpus whose operator table is being embedded ahead, held part-way: its progress gauges have samples. */
let embedding: Running;
const EMBEDDING_ROWS = AHEAD_PAGE + 22;
let releaseEmbedding = () => {};
let prometheus: Subprocess;
let api: string;

beforeAll(async () => {
  const docs = tempDir("corpus-prometheus-docs-");
  writeFileSync(join(docs, "acme-march.txt"), "Acme invoice for March: 2,400.00 EUR for the harbour crane inspection.");
  running = await startServer(
    testConfig({
      CORPUS_PORT: "0",
      CORPUS_METRICS_LISTEN: "127.0.0.1:0",
      CORPUS_CONNECTOR_ROOTS: docs,
      // One question a day: the second is refused, so the refusals' series has a sample.
      CORPUS_LIMIT_QUERY_PER_MINUTE: "1",
      CORPUS_LIMIT_QUERY_PER_DAY: "1",
    }),
    createLogger("WARNING", memorySink().sink),
  );
  await running.services.connectors.add("alice", { id: "papers", kind: "files", config: { path: docs } });
  await connectorsSettled(running.services, "alice");
  embedding = await startServer(
    testConfig({
      CORPUS_PORT: "0",
      CORPUS_METRICS_LISTEN: "127.0.0.1:0",
      ...operatorSqliteTable("shop", "orders", shopOrders(EMBEDDING_ROWS)),
    }),
    createLogger("WARNING", memorySink().sink),
  );
  // Every page of the table's rows waits until the test ends: the connector stays in its embedding phase.
  const held = new Promise<void>((resolve) => (releaseEmbedding = resolve));
  vectorsWithoutModel(embedding.services.embeddings, () => held);
  // A user's listing starts the operator's connector, and with it the embedding ahead of its newest rows.
  const lister = await tokenFor(embedding.services, "carol", ["connectors:read"]);
  await until("the operator's table shown embedding", async () => {
    const r = await fetch(`${embedding.url}/v1/connectors`, { headers: bearer(lister) });
    const { connectors } = (await r.json()) as { connectors: Array<{ id: string; status: string }> };
    return connectors.find((c) => c.id === "shop")?.status === "embedding" ? true : undefined;
  });
  const dir = tempDir("corpus-prometheus-");
  writeFileSync(
    join(dir, "prometheus.yml"),
    `global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ["${ALERTS}"]
scrape_configs:
  - job_name: corpus
    static_configs:
      - targets: ["${new URL(running.metricsUrl!).host}"]
  - job_name: corpus-embedding
    static_configs:
      - targets: ["${new URL(embedding.metricsUrl!).host}"]
`,
  );
  const listen = `127.0.0.1:${freePort()}`;
  api = `http://${listen}/api/v1`;
  prometheus = Bun.spawn(
    [
      tool("prometheus"),
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=${listen}`,
    ],
    { cwd: dir, stdout: "ignore", stderr: "ignore" },
  );
});

afterAll(async () => {
  prometheus?.kill();
  await prometheus?.exited;
  releaseEmbedding();
  await embedding?.services.connectors.embeddedAhead();
  await embedding?.stop();
  await running?.stop();
});

function tool(name: string): string {
  return Bun.which(name, { PATH: `${process.env.PATH}:/usr/sbin` })!;
}

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

/** The samples of an instant query, once Prometheus has some. */
const query = (q: string) =>
  until(`Prometheus to hold ${q}`, async () => {
    try {
      const r = (await (await fetch(`${api}/query?query=${encodeURIComponent(q)}`)).json()) as { data?: { result: Sample[] } };
      return r.data?.result.length ? r.data.result : undefined;
    } catch {
      return undefined; // not listening yet
    }
  });

test("Prometheus scrapes corpus and holds its series", async () => {
  const token = await tokenFor(running.services, "alice", ["corpus:search"]);
  await fetch(`${running.url}/`);
  expect((await fetch(`${running.url}/metrics`, { headers: bearer(token) })).status).toBe(403);
  await running.services.accounts.add("bob", "a long enough password");
  await running.services.accounts.verify("bob", "not the password at all");
  const ask = () =>
    fetch(`${running.url}/v1/query`, {
      method: "POST",
      headers: { ...bearer(token), "content-type": "application/json" },
      body: JSON.stringify({ query: "How much did Acme invoice us in March?", conversation_id: null }),
    });
  expect((await ask()).status).toBe(200);
  expect((await ask()).status).toBe(429);

  const [up] = await query('up{job="corpus"} == 1');
  expect(up!.value[1]).toBe("1");
  const requests = await query('corpus_http_request_duration_seconds_count{job="corpus",route="/metrics",status="403"}');
  expect(requests[0]!.metric.method).toBe("GET");
  const buckets = await query('corpus_http_request_duration_seconds_bucket{job="corpus",route="/",status="200"}');
  expect(buckets.map((s) => s.metric.le)).toContain("+Inf");
  expect(Number((await query('corpus_sign_ins_total{job="corpus",method="password",result="failure"}'))[0]!.value[1])).toBe(1);
  expect(Number((await query('corpus_data_free_bytes{job="corpus"}'))[0]!.value[1])).toBeGreaterThan(0);
  expect((await query('corpus_embedding_queue_depth{job="corpus"}'))[0]!.value[1]).toMatch(/^\d+$/);
  // A scrape may fall within the question, between its stages: until one holds all three.
  const stages = await until("each stage scraped", async () => {
    const held = await query('corpus_question_stage_duration_seconds_count{job="corpus"} == 1');
    return held.length === 5 ? held : undefined;
  });
  expect(stages.map((s) => s.metric.stage).sort()).toEqual(["answer", "archive", "gather", "plan", "rank"]);
  // The question's embedding, and the connectors by kind and state (the test's own folder).
  expect(Number((await query('corpus_embedded_texts_total{job="corpus",priority="urgent"}'))[0]!.value[1])).toBeGreaterThan(0);
  const [folder] = await query('corpus_connector_states{job="corpus",kind="files",state="ok"}');
  expect(folder!.value[1]).toBe("1");
  expect(Number((await query('corpus_connector_chunks{job="corpus",kind="files",embedded="true"}'))[0]!.value[1])).toBeGreaterThan(0);
  expect(Number((await query('corpus_rate_limit_refusals_total{job="corpus",route="/v1/query"}'))[0]!.value[1])).toBe(1);

  // Every metric corpus declares is held by Prometheus, but the two progress gauges: they have
  // samples only while a phase is under way, and none is once the folder is read and embedded.
  const text = await (await fetch(`${running.metricsUrl}/metrics`)).text();
  const declared = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => (type === "histogram" ? `${name}_count` : name!));
  const sampled = declared.filter((name) => new RegExp(`^${name}[{ ]`, "m").test(text));
  expect(declared.filter((name) => !sampled.includes(name)).sort()).toEqual([
    "corpus_connector_progress_done",
    "corpus_connector_progress_total",
  ]);
  expect(sampled.length).toBeGreaterThanOrEqual(12);
  for (const name of sampled) expect((await query(`${name}{job="corpus"}`)).length, name).toBeGreaterThan(0);
});

test("the progress gauges, scraped from a corpus whose operator table is being embedded: records done of all, by kind and phase", async () => {
  const [total] = await query('corpus_connector_progress_total{job="corpus-embedding",kind="sql",phase="embedding",unit="records"}');
  expect(Number(total!.value[1])).toBe(EMBEDDING_ROWS);
  const [done] = await query('corpus_connector_progress_done{job="corpus-embedding",kind="sql",phase="embedding",unit="records"}');
  // Every page is held: none is done yet.
  expect(Number(done!.value[1])).toBe(0);
  const [state] = await query('corpus_connector_states{job="corpus-embedding",kind="sql",state="embedding"}');
  expect(state!.value[1]).toBe("1");
});

test("the alerts of docs/monitoring pass promtool, and Prometheus evaluates them: none firing on a healthy corpus", async () => {
  const checked = Bun.spawnSync([tool("promtool"), "check", "rules", ALERTS]);
  expect(checked.stdout.toString()).toContain("SUCCESS: 3 rules found");
  expect(checked.exitCode).toBe(0);
  type Rule = { name: string; health: string; state: string; lastEvaluation: string };
  const rules = await until("the rules evaluated", async () => {
    const r = (await (await fetch(`${api}/rules`)).json()) as { data: { groups: Array<{ rules: Rule[] }> } };
    const all = r.data.groups.flatMap((g) => g.rules);
    return all.length === 3 && all.every((rule) => !rule.lastEvaluation.startsWith("0001")) ? all : undefined;
  });
  expect(rules.map((r) => [r.name, r.health, r.state])).toEqual([
    ["CorpusDown", "ok", "inactive"],
    ["CorpusDiskNearlyFull", "ok", "inactive"],
    ["CorpusOwedWorkGrowing", "ok", "inactive"],
  ]);
  // Each expression reads series corpus serves: the disk alert's compares two of them.
  expect(await query('corpus_data_free_bytes{job="corpus"} > 2 * corpus_data_min_free_bytes')).toHaveLength(1);
});
