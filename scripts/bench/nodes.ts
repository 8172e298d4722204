// Two corpus nodes on one PostgreSQL under load (D33, issue 37 "Done when"): 20 clients ask for
// short answers (POST /v1/query, shape C, the answer evaluation's invoice questions) for a fixed
// time, first of one node alone, then of two nodes behind a small load balancer made here (a Bun
// proxy sending each request to a live node in turn and, when a node refuses the connection or
// drops it before answering, retrying the query once on the other, as nginx's `proxy_next_upstream
// error timeout non_idempotent` does); a third of the way into the second run node A is killed
// with SIGKILL and started again. Prints answers/s, p50, p99, errors and retries of each run side
// by side. Target: 0 errors. Both runs use the same PostgreSQL, index and questions (the second
// goes on where the first stopped in the question list: each question's vector is new to a node).
//   bun scripts/bench/nodes.ts [--clients 20] [--seconds 40]
// The PostgreSQL is CORPUS_BENCH_PG_ADMIN_URL's (a superuser's URL), default the test servers'
// (scripts/test-servers.sh, started if they are not running); a database of its own, dropped after.
import { cpSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { SHARED_DATA } from "../../test/support/servers";
import { type CorpusNode, call, twoNodes } from "../../test/support/two-nodes";
import { until } from "../../test/support/wait";
import { loadAnswerLabels } from "../eval/answers-labels";
import { runTempDir, sleep } from "./lib";

const { values: args } = parseArgs({ options: { clients: { type: "string", default: "20" }, seconds: { type: "string", default: "40" } } });
const CLIENTS = Number(args.clients);
const RUN_MS = Number(args.seconds) * 1000;
const USER = "bench";

const root = runTempDir("corpus-bench-nodes-");
const nodes = await twoNodes(
  {
    // INFO: the harness learns a node's address from its "listening" line.
    CORPUS_LOG_LEVEL: "INFO",
    CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
    CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
    // Twenty clients on a loaded machine can wait past the default 30 s: the bench measures them, it does not end them.
    CORPUS_REQUEST_TIMEOUT: "600",
  },
  { adminUrl: process.env.CORPUS_BENCH_PG_ADMIN_URL, root },
);
process.on("exit", () => {
  for (const node of [nodes.a, nodes.b])
    try {
      process.kill(node.server().proc.pid, "SIGKILL");
    } catch {}
});

/** The load balancer: each request to the next live node; a failed connection marks it down and the other is tried. */
class Balancer {
  private readonly down = new Set<CorpusNode>();
  private turn = 0;
  retries = 0;
  private readonly server = Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (r) => this.forward(r) });
  private readonly probe = setInterval(() => void this.revive(), 50);
  constructor(private readonly upstreams: CorpusNode[]) {}

  get url(): string {
    return `http://127.0.0.1:${this.server.port}`;
  }

  private async forward(request: Request): Promise<Response> {
    const body = await request.arrayBuffer();
    const { pathname, search } = new URL(request.url);
    const first = this.turn++ % this.upstreams.length;
    const order = [...this.upstreams.slice(first), ...this.upstreams.slice(0, first)];
    let tried = 0;
    for (const node of order) {
      if (this.down.has(node)) continue;
      let base: string;
      try {
        base = node.url();
      } catch {
        this.down.add(node);
        continue;
      }
      if (tried++ > 0) this.retries++;
      try {
        const r = await fetch(`${base}${pathname}${search}`, { method: request.method, headers: request.headers, body });
        return new Response(await r.arrayBuffer(), { status: r.status, headers: r.headers });
      } catch {
        // Refused, or dropped before an answer (the node died): the other node gets the query.
        this.down.add(node);
      }
    }
    return new Response("no node answered", { status: 502 });
  }

  /** A node marked down comes back once GET / answers 200 (a restarted one, on its new port). */
  private async revive(): Promise<void> {
    for (const node of this.down) {
      let base: string;
      try {
        base = node.url();
      } catch {
        continue;
      }
      if (
        await fetch(`${base}/`).then(
          (r) => r.ok,
          () => false,
        )
      )
        this.down.delete(node);
    }
  }

  stop(): void {
    clearInterval(this.probe);
    this.server.stop(true);
  }
}

// The index: the invoices folder, read and embedded once into the shared database.
const token = await nodes.token(USER, "corpus:search,connectors:read,connectors:write");
const folder = join(nodes.folderOf(USER), "invoices");
mkdirSync(folder, { recursive: true });
cpSync(join(SHARED_DATA, "invoices"), folder, { recursive: true });
const added = await call(nodes.a, token, "POST", "/v1/connectors", { id: "invoices", kind: "files", config: { path: folder } });
if (added.status !== 200) throw new Error(`connector not added: ${added.status} ${await added.text()}`);
const indexing = performance.now();
await until(
  "the invoices to be indexed",
  async () => {
    const r = await call(nodes.a, token, "GET", "/v1/connectors");
    const c = ((await r.json()) as { connectors: Array<{ id: string; status: string; records?: number }> }).connectors[0];
    return c?.status === "ok" ? c : undefined;
  },
  1_800_000,
).then((c) => console.error(`indexed ${c.records} records in ${((performance.now() - indexing) / 1000).toFixed(0)} s`));

const questions = loadAnswerLabels()
  .questions.filter((q) => q.source === "invoices")
  .map((q) => q.question);
let nextQuestion = 0;

interface Run {
  name: string;
  latencies: number[];
  errors: string[];
  ms: number;
  retries: number;
}

/** CLIENTS clients asking one question after another of `base` for RUN_MS; `during` runs beside them. */
async function run(name: string, base: string, during: () => Promise<void> = async () => {}): Promise<Run> {
  const latencies: number[] = [];
  const errors: string[] = [];
  const started = performance.now();
  const end = started + RUN_MS;
  const client = async () => {
    while (performance.now() < end) {
      const question = questions[nextQuestion++ % questions.length]!;
      const t = performance.now();
      try {
        const r = await fetch(`${base}/v1/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ query: question, conversation_id: null }),
        });
        const body = (await r.json().catch(() => ({}))) as { answer?: unknown };
        if (r.status !== 200 || typeof body.answer !== "string") errors.push(`${r.status} ${JSON.stringify(body).slice(0, 160)}`);
        else latencies.push(performance.now() - t);
      } catch (error) {
        errors.push(String(error));
      }
    }
  };
  await Promise.all([...Array.from({ length: CLIENTS }, client), during()]);
  return { name, latencies, errors, ms: performance.now() - started, retries: 0 };
}

try {
  // One node alone (B stopped: A has the machine).
  await nodes.b.stop();
  const one = await run("one node", nodes.a.url());
  // Two nodes behind the balancer; A killed and started again a third of the way in.
  await nodes.b.start();
  const balancer = new Balancer([nodes.a, nodes.b]);
  let restartedInMs = 0;
  const two = await run("two nodes", balancer.url, async () => {
    await sleep(RUN_MS / 3);
    await nodes.a.kill9();
    const t = performance.now();
    await nodes.a.start();
    restartedInMs = performance.now() - t;
  });
  two.retries = balancer.retries;
  balancer.stop();

  const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
  console.log(`${CLIENTS} clients, ${RUN_MS / 1000} s a run, POST /v1/query shape C over ${questions.length} invoice questions`);
  for (const r of [one, two]) {
    const sorted = r.latencies.sort((x, y) => x - y);
    console.log(
      `${r.name.padEnd(10)} ${(r.latencies.length / (r.ms / 1000)).toFixed(1).padStart(6)} answers/s   p50 ${pct(sorted, 0.5).toFixed(0).padStart(5)} ms   p99 ${pct(sorted, 0.99).toFixed(0).padStart(6)} ms   ${r.latencies.length} answers, ${r.errors.length} errors, ${r.retries} retried on the other node`,
    );
    for (const e of r.errors.slice(0, 5)) console.log(`           error: ${e}`);
  }
  console.log(
    `node A killed (SIGKILL) ${(RUN_MS / 3000).toFixed(0)} s into the two-node run, listening again ${(restartedInMs / 1000).toFixed(1)} s later`,
  );
  // What the nodes logged as errors (a 500's cause is in its node's log, never in the answer).
  for (const node of [nodes.a, nodes.b])
    for (const e of node.errors().slice(0, 5)) console.log(`node ${node.name} logged: ${JSON.stringify(e).slice(0, 600)}`);
  if (one.errors.length + two.errors.length > 0) process.exitCode = 1;
} finally {
  await nodes.close();
}
