// What a question to issue 35's 20 SQLite rows of 1 MB costs the serving thread (D31), beside the
// same question to a plain folder (the baseline, same server, same run): its CPU per question
// (/proc schedstat of the serving thread), the SQLite statements run on it for the rows' file and
// the CPU they took, the embedding cache's vectors looked up for it, and each stage's mean wall
// time (the operator's metrics, D35). CPU and counts are what to compare on a loaded machine.
//   bun scripts/bench/rows-question.ts            [BENCH_QUESTIONS=30]
import { Database } from "bun:sqlite";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HOSTILE_TABLE, writeHostileSources } from "../../test/support/hostile-sources";
import { indexedServer } from "./indexed-server";
import { runTempDir } from "./lib";

const QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 30);
const work = runTempDir("corpus-bench-rows-");
const sources = writeHostileSources(join(work, "sources"));
const plain = join(work, "plain");
Bun.spawnSync(["mkdir", "-p", plain]);
await Bun.write(join(plain, "notes.txt"), "The offsite is in Lisbon; the team dinner is in Porto.");
const { services, server, url, headers } = await indexedServer(
  work,
  [
    { id: "plain", kind: "files", label: "Plain", config: { path: plain } },
    { id: "shop", kind: "sql", label: "Shop", config: { url: sources.database, tables: [HOSTILE_TABLE] } },
  ],
  "bench",
);

/** CPU time of this process's serving thread so far, in ms. */
const serving = () => Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;

const counted = { statements: 0, statementMs: 0, vectorTexts: 0 };
// Every statement of this thread's connections to the rows' file (bun:sqlite's query prepares each).
const query = Database.prototype.query;
const timed = new WeakSet<object>();
Database.prototype.query = function (this: Database, sql: string) {
  const statement = query.call(this, sql);
  if (this.filename !== sources.database || timed.has(statement)) return statement;
  timed.add(statement);
  const all = statement.all.bind(statement);
  statement.all = (...params: never[]) => {
    const started = serving();
    try {
      return all(...params);
    } finally {
      counted.statementMs += serving() - started;
      counted.statements++;
    }
  };
  return statement;
} as typeof query;
const cached = services.embeddings.cached.bind(services.embeddings);
services.embeddings.cached = (owner, texts) => {
  counted.vectorTexts += texts.length;
  return cached(owner, texts);
};
const stages = new Map<string, number[]>();
services.questionStages.observe = (stage, seconds) => (stages.get(stage) ?? stages.set(stage, []).get(stage)!).push(seconds * 1000);

async function round(connectors: string[]) {
  const body = JSON.stringify({ query: "where is the team dinner in porto", connectors, max_results: 5 });
  const ask = async () => {
    const r = await fetch(`${url}/v1/query`, { method: "POST", headers, body });
    await r.arrayBuffer();
    if (r.status !== 200) throw new Error(`status ${r.status}`);
  };
  // The rows' chunks are embedded after the first questions: asked until every vector is kept.
  for (let i = 0; i < 3; i++) await ask();
  await services.embeddings.idle();
  await ask();
  Object.assign(counted, { statements: 0, statementMs: 0, vectorTexts: 0 });
  stages.clear();
  const before = serving();
  for (let i = 0; i < QUESTIONS; i++) await ask();
  const cpu = (serving() - before) / QUESTIONS;
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(
    `${connectors.join(",").padEnd(11)} serving thread ${cpu.toFixed(1)} ms of CPU a question; on it, statements on the rows' file ` +
      `${(counted.statements / QUESTIONS).toFixed(1)} (${(counted.statementMs / QUESTIONS).toFixed(1)} ms), vectors looked up ` +
      `${(counted.vectorTexts / QUESTIONS).toFixed(1)}; stages ${[...stages].map(([s, xs]) => `${s} ${mean(xs).toFixed(1)}`).join(", ")} ms`,
  );
  return cpu;
}

const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
console.log(`${QUESTIONS} questions one at a time each; load ${load()}`);
const baseline = await round(["plain"]);
const rows = await round(["plain", "shop"]);
console.log(`the rows asked too: x${(rows / baseline).toFixed(1)} the serving thread's CPU of the plain folder's question; load ${load()}`);
server.stop(true);
await services.close();
