// Answers per second under load (issue 36): 20 clients at once ask for short answers (POST
// /v1/query, shape C) of two servers over copies of one indexed folder (scripts/bench/query.ts's
// four sources): this tree's and a baseline's (a git worktree of another commit beside this one,
// its node_modules and models in place), both in the same run. Each client asks a fixed number of
// the answer evaluation's questions (scripts/eval/answers-labels.json, each once per server: its
// vector is not in the embedding cache, forgotten before the server starts), in blocks that go to the two servers in turn, the
// first alternating, so the machine's load falls on both alike, after a warm-up block each (--warm)
// and the work it started.
// Prints answers/s, p50, p99 and the server's CPU per answer of each, where its serving thread's wall
// time went (on a CPU, waiting for one, idle), the other threads' CPU by name, the clients' own CPU,
// and the ratio. Target: this tree >= 2x fe1ff02's answers/s.
//   CORPUS_BENCH_DIR=<folder> bun scripts/bench/answers-load.ts --base <worktree> [--clients 20] [--each 2]
// CORPUS_BENCH_DIR keeps the index between runs (the same folder query.ts keeps); each server runs
// on a copy of it (kept there too, under load/), as a process of its own (`corpus serve` of its tree).

import { Database } from "bun:sqlite";
import { copyFileSync, cpSync, existsSync, mkdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { Subprocess } from "bun";
import { loadAnswerLabels } from "../eval/answers-labels";
import businessLabels from "../eval/business-labels.json";
import { fourSources } from "./four-sources";
import { indexedServer } from "./indexed-server";
import { cpuSeconds, freePort, kill, runTempDir, type ThreadTime, threadTimes, waitFor200, waitIdle } from "./lib";

const { values: args } = parseArgs({
  options: {
    base: { type: "string" },
    clients: { type: "string", default: "20" },
    each: { type: "string", default: "2" },
    warm: { type: "string", default: "1" },
  },
});
if (!args.base) {
  console.error("usage: bun scripts/bench/answers-load.ts --base <worktree of the baseline commit> [--clients 20] [--each 2] [--warm 1]");
  process.exit(2);
}
const CLIENTS = Number(args.clients);
/** Questions each client asks per block, one after another. */
const EACH = Number(args.each);
/**
 * Blocks asked of each server before the measured ones: the JIT's first compilations (~10% of a
 * new server's CPU over its first 400 answers) are start-up work, as the model's loading is.
 */
const WARM = Number(args.warm);
const USER = "bench";
/** How long a server may take to settle on its copy the first time (re-embedding ~10,000 chunks on a loaded machine). */
const SETTLE_MS = 3_600_000;

// 1. The index, made (or brought up to date) in-process with this tree, then closed.
const work = process.env.CORPUS_BENCH_DIR ?? runTempDir("corpus-bench-answers-");
mkdirSync(work, { recursive: true });
{
  const { services, server } = await indexedServer(work, fourSources(work), USER);
  server.stop(true);
  await services.close();
}

// 2. Each tree's server on a copy of the data folder of its own, kept in the folder for the next run
// (the sources' folders are read in place): a tree may first bring the index to its own terms
// (fe1ff02 embeds every chunk again, ~20 min), and is measured once it has settled.
interface Served {
  name: string;
  url: string;
  token: string;
  proc: Subprocess;
}
/** The servers started, stopped however this script ends (a server that never settles included). */
const started: Subprocess[] = [];
process.on("exit", () => {
  for (const proc of started) proc.kill();
});
/**
 * The asker's cached vectors (their questions', from an earlier run on this copy) go before the
 * server starts: each question measured is embedded, as a new question is (both trees keep the
 * cache in the same table). The operator's vectors of indexed chunks stay.
 */
function forgetAskedVectors(data: string): void {
  const db = new Database(join(data, "corpus.db"));
  try {
    const { changes } = db.query("DELETE FROM embedding_cache WHERE owner = ?").run(USER);
    if (changes) console.error(`${data}: ${changes} cached vectors of ${USER}'s questions forgotten`);
  } finally {
    db.close();
  }
}
async function serve(name: string, tree: string): Promise<Served> {
  const dir = join(work, "load", name);
  if (!existsSync(join(dir, "data"))) {
    mkdirSync(dir, { recursive: true });
    cpSync(join(work, "data"), join(dir, "data.part"), { recursive: true });
    renameSync(join(dir, "data.part"), join(dir, "data"));
    copyFileSync(join(work, "data.master.key"), join(dir, "data.master.key"));
  }
  forgetAskedVectors(join(dir, "data"));
  const port = freePort();
  const env = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? "/tmp",
    CORPUS_PORT: String(port),
    CORPUS_DATA_DIR: join(dir, "data"),
    CORPUS_CONNECTORS_FILE: join(work, "connectors.json"),
    CORPUS_LOG_LEVEL: "ERROR",
    CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
    CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
    CORPUS_MIN_FREE_BYTES: "1048576",
    // Twenty clients on a loaded machine can wait past the default 30 s: the bench measures them, it does not end them.
    CORPUS_REQUEST_TIMEOUT: "600",
  };
  const cli = [process.execPath, join(tree, "src/cli.ts")];
  const minted = Bun.spawnSync([...cli, "token", "create", "--user", USER, "--scopes", "corpus:search"], { cwd: tree, env });
  if (minted.exitCode !== 0) throw new Error(`${name}: token create failed: ${minted.stderr.toString()}`);
  const proc = Bun.spawn([...cli, "serve"], { cwd: tree, env, stdin: "ignore", stdout: "ignore", stderr: "inherit" });
  started.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitFor200(`${url}/`, 60_000);
  // Settled: the folders' scans found nothing new, what the tree re-indexes is done, the model is loaded.
  const since = performance.now();
  await waitIdle(proc.pid, SETTLE_MS);
  console.error(`${name}: settled in ${((performance.now() - since) / 1000).toFixed(0)} s`);
  return { name, url, token: minted.stdout.toString().trim(), proc };
}

async function answer(s: Served, question: string): Promise<number> {
  const started = performance.now();
  const r = await fetch(`${s.url}/v1/query`, {
    method: "POST",
    headers: { authorization: `Bearer ${s.token}`, "content-type": "application/json" },
    body: JSON.stringify({ query: question, conversation_id: null }),
  });
  const body = (await r.json()) as { answer?: unknown };
  if (r.status !== 200 || typeof body.answer !== "string") throw new Error(`${s.name}: ${r.status} ${JSON.stringify(body).slice(0, 200)}`);
  return performance.now() - started;
}

interface Tally {
  latencies: number[];
  ms: number;
  cpu: number;
  /** The serving thread's time and the other threads' (lib.ts threadTimes), seconds. */
  main: ThreadTime;
  others: ThreadTime;
  /** The other threads' CPU seconds by name. */
  byName: Map<string, number>;
}

/** `CLIENTS` clients at once, client c asking its EACH questions of `block` in turn: each answer's latency, the block's wall time, where the server's threads spent it. */
async function block(s: Served, questions: string[]): Promise<Tally> {
  const latencies: number[] = [];
  const started = performance.now();
  const cpu = cpuSeconds(s.proc.pid);
  const threads = threadTimes(s.proc.pid);
  await Promise.all(
    Array.from({ length: CLIENTS }, async (_, c) => {
      for (let i = 0; i < EACH; i++) latencies.push(await answer(s, questions[c * EACH + i]!));
    }),
  );
  const after = threadTimes(s.proc.pid);
  const spent = (a: ThreadTime, b: ThreadTime) => ({ cpu: a.cpu - b.cpu, queued: a.queued - b.queued });
  return {
    latencies,
    ms: performance.now() - started,
    cpu: cpuSeconds(s.proc.pid) - cpu,
    main: spent(after.main, threads.main),
    others: spent(after.others, threads.others),
    byName: new Map([...after.byName].map(([name, cpu]) => [name, cpu - (threads.byName.get(name) ?? 0)])),
  };
}

const businessQuestions = () => (businessLabels as { questions: Array<{ question: string }> }).questions.map((q) => q.question);

const base = await serve("base", args.base);
const head = await serve("this", join(import.meta.dir, "../.."));
try {
  const questions = loadAnswerLabels().questions.map((q) => q.question);
  const perBlock = CLIENTS * EACH;
  const blocks = Math.floor(questions.length / perBlock);
  if (blocks < 2) throw new Error(`${questions.length} questions make fewer than two blocks of ${perBlock}`);
  // The warm-up asks the ranking evaluation's questions (scripts/eval/business-labels.json), none of
  // them measured: every measured question is new to both servers.
  const warmQuestions = businessQuestions();
  for (let b = 0; b < WARM; b++) {
    const asked = Array.from({ length: perBlock }, (_, i) => warmQuestions[(b * perBlock + i) % warmQuestions.length]!);
    for (const s of [base, head]) await block(s, asked);
  }
  // What the first questions started is start-up work too, waited for as the start's is: a connector
  // starts at its first question (fe1ff02 then embeds a folder again whose vectors another model
  // made), and a shop's newest rows are read to be embedded ahead (embed-ahead.ts).
  for (const s of [base, head]) {
    const since = performance.now();
    await waitIdle(s.proc.pid, SETTLE_MS);
    console.error(`${s.name}: idle again ${((performance.now() - since) / 1000).toFixed(0)} s after its warm-up`);
  }
  const zero = () => ({ cpu: 0, queued: 0 });
  const tally = new Map<Served, Tally>(
    [base, head].map((s) => [s, { latencies: [], ms: 0, cpu: 0, main: zero(), others: zero(), byName: new Map() }]),
  );
  /** This process's CPU (the clients), over the measured blocks. */
  let clientCpu = 0;
  const add = (to: ThreadTime, t: ThreadTime) => {
    to.cpu += t.cpu;
    to.queued += t.queued;
  };
  for (let b = 0; b < blocks; b++) {
    const asked = questions.slice(b * perBlock, (b + 1) * perBlock);
    for (const s of b % 2 === 0 ? [base, head] : [head, base]) {
      const t = tally.get(s)!;
      const clientBefore = process.cpuUsage();
      const r = await block(s, asked);
      const client = process.cpuUsage(clientBefore);
      clientCpu += (client.user + client.system) / 1e6;
      for (const [name, cpu] of r.byName) t.byName.set(name, (t.byName.get(name) ?? 0) + cpu);
      t.latencies.push(...r.latencies);
      t.ms += r.ms;
      t.cpu += r.cpu;
      add(t.main, r.main);
      add(t.others, r.others);
    }
  }
  const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  const rate = (s: Served) => {
    const t = tally.get(s)!;
    return t.latencies.length / (t.ms / 1000);
  };
  console.log(
    `${CLIENTS} clients, ${blocks} blocks of ${perBlock} answers per server (${blocks * perBlock} each), alternating, after ${WARM} warm-up block(s) each`,
  );
  for (const s of [base, head]) {
    const t = tally.get(s)!;
    const sorted = t.latencies.sort((a, b) => a - b);
    console.log(
      `${s.name.padEnd(5)} ${rate(s).toFixed(1).padStart(6)} answers/s   p50 ${pct(sorted, 0.5).toFixed(0).padStart(5)} ms   p99 ${pct(sorted, 0.99).toFixed(0).padStart(5)} ms   server CPU ${((t.cpu * 1000) / sorted.length).toFixed(1)} ms/answer`,
    );
    // The serving thread's wall time: running, waiting for a CPU (the machine's load), or idle (waiting on something else).
    const share = (x: number) => `${((100 * x * 1000) / t.ms).toFixed(0)}%`;
    const perAnswer = (x: number) => `${((x * 1000) / sorted.length).toFixed(1)} ms/answer`;
    console.log(
      `      serving thread: on a CPU ${share(t.main.cpu)} (${perAnswer(t.main.cpu)}), waiting for one ${share(t.main.queued)}, idle ${share(t.ms / 1000 - t.main.cpu - t.main.queued)}; other threads on a CPU ${perAnswer(t.others.cpu)}, waiting for one ${perAnswer(t.others.queued)}`,
    );
    const named = [...t.byName].filter(([, cpu]) => (cpu * 1000) / sorted.length >= 0.1).sort((a, b) => b[1] - a[1]);
    console.log(
      `      other threads by name: ${named.map(([name, cpu]) => `${name} ${((cpu * 1000) / sorted.length).toFixed(1)}`).join(", ")} ms/answer`,
    );
  }
  const asked = [...tally.values()].reduce((n, t) => n + t.latencies.length, 0);
  console.log(`clients (this process): ${((clientCpu * 1000) / asked).toFixed(1)} ms of CPU per answer`);
  console.log(`ratio this / base: ${(rate(head) / rate(base)).toFixed(2)}x answers/s (target >= 2)`);
} finally {
  await Promise.all([kill(base.proc), kill(head.proc)]);
}
