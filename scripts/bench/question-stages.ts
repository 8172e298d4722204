// Where the wall time of one question goes (issue 36): the answer evaluation's questions
// (scripts/eval/answers-labels.json) asked one at a time of an in-process server over
// scripts/bench/query.ts's four sources, in shape C (or shape B with --shape B), after a first
// round that fills the caches. Prints the wall time per question (p50, p99), each stage's (the
// operator's metrics, D35: plan, gather, rank, answer, archive), how long the question waited for
// its vector (the embedding worker, behind a background batch or not), and each thread's CPU per
// question (the serving thread, the search worker, the embedding worker), with the machine's load
// before and after: a figure taken under load is compared with one taken beside it, not alone.
//   CORPUS_BENCH_DIR=<folder> bun scripts/bench/question-stages.ts [--shape C|B] [--rounds 1]
import { readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { loadAnswerLabels } from "../eval/answers-labels";
import { fourSources } from "./four-sources";
import { indexedServer } from "./indexed-server";
import { runTempDir } from "./lib";

const { values: args } = parseArgs({ options: { shape: { type: "string", default: "C" }, rounds: { type: "string", default: "1" } } });
const work = process.env.CORPUS_BENCH_DIR ?? runTempDir("corpus-bench-stages-");
const { services, server, url, headers } = await indexedServer(work, fourSources(work), "bench", {
  CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
});
const questions = loadAnswerLabels().questions.map((q) => q.question);
const body = (q: string) => JSON.stringify(args.shape === "B" ? { query: q } : { query: q, conversation_id: null });
async function ask(question: string): Promise<void> {
  const r = await fetch(`${url}/v1/query`, { method: "POST", headers, body: body(question) });
  await r.arrayBuffer();
  if (r.status !== 200) throw new Error(`status ${r.status}`);
}

const times = new Map<string, number[]>();
const add = (name: string, ms: number) => (times.get(name) ?? times.set(name, []).get(name)!).push(ms);
services.questionStages.observe = (stage, seconds) => add(stage, seconds * 1000);
// The question's own vector: how long it waited for the embedding worker (one text, urgent).
const embed = services.embeddings.embed.bind(services.embeddings);
services.embeddings.embed = async (owner, texts, priority = "urgent", wanted) => {
  const started = performance.now();
  try {
    return await embed(owner, texts, priority, wanted);
  } finally {
    if (priority === "urgent" && texts.length === 1) add("its vector", performance.now() - started);
  }
};

/** Each thread's CPU so far (ms), by id and name (/proc schedstat). */
function threads(): Map<string, number> {
  const out = new Map<string, number>();
  for (const tid of readdirSync("/proc/self/task")) {
    try {
      const cpu = Number(readFileSync(`/proc/self/task/${tid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
      out.set(`${tid} ${readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim()}`, cpu);
    } catch {
      // ended meanwhile
    }
  }
  return out;
}
const load = () => readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");

for (const q of questions) await ask(q);
times.clear();
const loadBefore = load();
const before = threads();
// Work done again in the measured round though the first round read it: shape C's sources (statement-memo.ts).
const memo = services.query.chunkStatements;
const readsBefore = { chunks: memo.reads, sources: memo.sourceReads };
const walls: number[] = [];
for (let r = 0; r < Number(args.rounds); r++)
  for (const q of questions) {
    const started = performance.now();
    await ask(q);
    walls.push(performance.now() - started);
  }
const after = threads();
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))]!;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ms = (x: number) => x.toFixed(1).padStart(7);
console.log(`shape ${args.shape}, ${walls.length} questions one at a time; load ${loadBefore} before, ${load()} after`);
console.log(
  `read again: ${memo.sourceReads - readsBefore.sources} shape C sources, ${memo.reads - readsBefore.chunks} chunks' statements (statement-memo.ts)`,
);
console.log(`${"wall".padEnd(12)} mean ${ms(mean(walls))}   p50 ${ms(pct(walls, 0.5))}   p99 ${ms(pct(walls, 0.99))} ms`);
for (const [name, xs] of times)
  console.log(`${name.padEnd(12)} mean ${ms(mean(xs))}   p50 ${ms(pct(xs, 0.5))}   p99 ${ms(pct(xs, 0.99))} ms`);
console.log("CPU per question by thread (the first is the serving thread; Worker: the search and embedding workers):");
for (const [thread, cpu] of after) {
  const per = (cpu - (before.get(thread) ?? 0)) / walls.length;
  if (per >= 0.5) console.log(`  ${thread.padEnd(24)} ${ms(per)} ms`);
}
server.stop(true);
await services.close();
