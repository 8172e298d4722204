// Indexing beside serving (issue 14): dist/corpus on a fresh data folder, the Enron maildir
// added as a user's connector, and while it is read and embedded a second process
// (indexing-probe.ts) asks GET / every 50 ms and /v1/query every 500 ms. Prints the latencies
// per phase, corpus's chunks/s beside the bare onnxruntime script's on the same chunks and
// threads (bare-embed.ts, same run), and corpus's RSS: at ready, after a query on the idle
// server, the peak while embedding, after a query once done.
//   bun scripts/bench/indexing.ts [--limit 1702] [--threads 1] [--no-build] [--before <git rev>] [--skip-bare]
// --limit takes the first N messages (sorted by name); --before builds that revision's
// executable (git archive into a temporary folder) and measures its embedding on the same
// messages, without the probe (see below).
// Targets: GET / p99 < 50 ms and /v1/query p99 < 300 ms while embedding; corpus >= 0.85 x bare
// chunks/s; embedding at least 2x faster than --before; RSS < 250 MB embedding, < 150 MB idle.

import { cpSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { $ } from "bun";
import { maildirSource } from "../../src/connectors/maildir/connector";
import { type TokenizerFile, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";
import { DATABASE_FILE } from "../../src/store/database";
import type { BareResult } from "./bare-embed";
import type { Sample } from "./indexing-probe";
import { freePort, kill, mappedMb, rssMb, runTempDir, sleep, waitFor200, waitIdle } from "./lib";

const root = join(import.meta.dir, "../..");
const enron = join(root, "../shared/data/enron/messages");
const { values } = parseArgs({
  options: {
    limit: { type: "string" },
    threads: { type: "string", default: "1" },
    "no-build": { type: "boolean", default: false },
    before: { type: "string" },
    "skip-bare": { type: "boolean", default: false },
  },
});
const threads = values.threads!;

/** The maildir to add: the shared Enron folder, or a copy of its first --limit messages. */
function mailFolder(): { root: string; path: string; messages: number } {
  const all = readdirSync(enron).sort();
  if (!values.limit || Number(values.limit) >= all.length) return { root: join(enron, ".."), path: enron, messages: all.length };
  const dir = runTempDir("corpus-bench-mail-");
  const path = join(dir, "messages");
  mkdirSync(path);
  const picked = all.slice(0, Number(values.limit));
  for (const f of picked) cpSync(join(enron, f), join(path, f));
  return { root: dir, path, messages: picked.length };
}

/** The texts corpus embeds for these messages: its own reader, chunker and embedding text. */
async function chunksOf(path: string): Promise<string[]> {
  const tokenizer = new WordPieceTokenizer((await Bun.file(assets.tokenizerFile).json()) as TokenizerFile);
  const source = maildirSource(path);
  const out: string[] = [];
  for (const entry of source.scan())
    for (const r of await source.read(entry)) for (const c of recordChunks(r, tokenizer)) out.push(embeddingText(r.title, c));
  return out;
}

interface Phase {
  start: number;
  end: number;
}

interface ServerRun {
  label: string;
  readyRssMb: number;
  idleQueryRssMb: number;
  peakRssMb: number;
  /** RSS sampled every 200 ms from adding the connector to the end: [wall-clock ms, MB, MB of it the database file's mapped pages]. */
  rss: Array<[number, number, number]>;
  doneQueryRssMb: number;
  chunks: number;
  indexing: Phase;
  embedding: Phase;
  samples: { get: Sample[]; query: Sample[] };
}

async function measureServer(label: string, exe: string, mail: { root: string; path: string }, probing = true): Promise<ServerRun> {
  const dataDir = runTempDir("corpus-bench-data-");
  const port = freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dataDir,
    CORPUS_DATA_DIR: join(dataDir, "data"),
    CORPUS_PORT: String(port),
    CORPUS_CONNECTOR_ROOTS: mail.root,
    CORPUS_EMBED_THREADS: threads,
    CORPUS_LOG_LEVEL: "WARNING",
    // The probe asks far more often than a person: limits off for this user.
    CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
    CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
  };
  // As the README deploys it: `corpus check` first, which also writes the checked copies of the
  // native libraries and the model (a first start reads them out of the executable, which
  // leaves those pages resident: RSS is measured as an installed server runs).
  await $`${exe} check`.env(env).quiet();
  const token = (
    await $`${exe} token create --user bench --scopes corpus:search,connectors:read,connectors:write`.env(env).quiet().text()
  ).trim();
  const server = Bun.spawn([exe, "serve"], { env, stdout: "ignore", stderr: "inherit" });
  const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
  const ask = (query: string) =>
    fetch(`${url}/v1/query`, { method: "POST", headers: auth, body: JSON.stringify({ query, max_results: 5 }) }).then((r) =>
      r.arrayBuffer(),
    );
  try {
    await waitFor200(`${url}/`, 30_000);
    // The model loads in the background shortly after start; ready means settled.
    await sleep(2_500);
    await waitIdle(server.pid, 120_000);
    const readyRssMb = rssMb(server.pid);
    await ask("warm-up question on an empty server");
    await waitIdle(server.pid, 60_000);
    const idleQueryRssMb = rssMb(server.pid);

    const probe = probing
      ? Bun.spawn([process.execPath, join(import.meta.dir, "indexing-probe.ts"), url, token], {
          stdin: "pipe",
          stdout: "pipe",
          stderr: "inherit",
        })
      : undefined;
    let peakRssMb = 0;
    const rss: Array<[number, number, number]> = [];
    const rssTimer = setInterval(() => {
      const mb = rssMb(server.pid);
      rss.push([Date.now(), mb, mappedMb(server.pid, `/${DATABASE_FILE}`)]);
      peakRssMb = Math.max(peakRssMb, mb);
    }, 200);
    const added = Date.now();
    const r = await fetch(`${url}/v1/connectors`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ id: "enron", kind: "maildir", config: { path: mail.path } }),
    });
    if (!r.ok) throw new Error(`adding the connector: ${r.status} ${await r.text()}`);
    let indexed = 0;
    let chunks = 0;
    let lastPrint = 0;
    for (;;) {
      await sleep(1_000);
      const list = (await (await fetch(`${url}/v1/connectors`, { headers: auth })).json()) as {
        connectors: Array<{ id: string; status: string; indexed?: { chunks: number; embedded: number } }>;
      };
      const c = list.connectors.find((x) => x.id === "enron")!;
      if (c.status === "error") throw new Error(`connector error: ${JSON.stringify(c)}`);
      if (!indexed && c.status !== "indexing" && c.indexed) indexed = Date.now();
      if (Date.now() - lastPrint > 30_000) {
        lastPrint = Date.now();
        console.error(
          `  ${label}: ${c.status} ${c.indexed ? `${c.indexed.embedded}/${c.indexed.chunks} chunks embedded` : ""} after ${((Date.now() - added) / 1000).toFixed(0)} s, RSS ${rssMb(server.pid).toFixed(0)} MB`,
        );
      }
      if (indexed && c.indexed && c.indexed.chunks > 0 && c.indexed.embedded >= c.indexed.chunks) {
        chunks = c.indexed.chunks;
        break;
      }
    }
    const done = Date.now();
    clearInterval(rssTimer);
    let samples: ServerRun["samples"] = { get: [], query: [] };
    if (probe) {
      probe.stdin.end();
      samples = JSON.parse(await new Response(probe.stdout).text()) as ServerRun["samples"];
    }
    await waitIdle(server.pid, 60_000);
    await ask("a question once everything is embedded");
    await waitIdle(server.pid, 60_000);
    const doneQueryRssMb = rssMb(server.pid);
    return {
      label,
      readyRssMb,
      idleQueryRssMb,
      peakRssMb,
      rss,
      doneQueryRssMb,
      chunks,
      indexing: { start: added, end: indexed },
      embedding: { start: indexed, end: done },
      samples,
    };
  } finally {
    await kill(server);
  }
}

/** The executable of an earlier revision, built from `git archive` in a temporary folder. */
async function buildRevision(rev: string): Promise<string> {
  const dir = runTempDir("corpus-bench-before-");
  await $`git -C ${root} archive ${rev} | tar -x -C ${dir}`.quiet();
  await $`ln -s ${join(root, "node_modules")} ${join(dir, "node_modules")}`.quiet();
  await $`${process.execPath} ${join(dir, "scripts/build.ts")}`.cwd(dir).quiet();
  return join(dir, "dist", "corpus");
}

const within = (samples: Sample[], p: Phase) =>
  samples.filter(([at, , status]) => at >= p.start && at < p.end && status === 200).map(([, ms]) => ms);
function percentiles(ms: number[]): string {
  if (!ms.length) return "no samples";
  const s = [...ms].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
  return `p50 ${at(0.5).toFixed(1)} ms, p99 ${at(0.99).toFixed(1)} ms, max ${s.at(-1)!.toFixed(1)} ms (${s.length})`;
}
const failures = (samples: Sample[], p: Phase) => samples.filter(([at, , status]) => at >= p.start && at < p.end && status !== 200).length;
const peakWithin = (run: ServerRun, p: Phase) => Math.max(0, ...run.rss.filter(([at]) => at >= p.start && at < p.end).map(([, mb]) => mb));
/** The peak of RSS less the database file's mapped pages (the process's own memory and code). */
const peakOwnWithin = (run: ServerRun, p: Phase) =>
  Math.max(0, ...run.rss.filter(([at]) => at >= p.start && at < p.end).map(([, mb, db]) => mb - db));
const seconds = (p: Phase) => (p.end - p.start) / 1000;
const rate = (run: ServerRun) => run.chunks / seconds(run.embedding);

function report(run: ServerRun): void {
  console.log(`\n${run.label}`);
  console.log(
    `  embedding: ${run.chunks} chunks in ${seconds(run.embedding).toFixed(0)} s = ${rate(run).toFixed(1)} chunks/s (indexing before it: ${seconds(run.indexing).toFixed(0)} s)`,
  );
  for (const [name, phase] of [
    ["while indexing", run.indexing],
    ["while embedding", run.embedding],
  ] as const) {
    console.log(`  GET / ${name}: ${percentiles(within(run.samples.get, phase))}`);
    console.log(
      `  /v1/query ${name}: ${percentiles(within(run.samples.query, phase))}${failures(run.samples.query, phase) ? `, ${failures(run.samples.query, phase)} not 200` : ""}`,
    );
  }
  console.log(
    `  RSS: ready ${run.readyRssMb.toFixed(0)} MB, after a query on the idle server ${run.idleQueryRssMb.toFixed(0)} MB, peak while indexing ${peakWithin(run, run.indexing).toFixed(0)} MB, peak while embedding ${peakWithin(run, run.embedding).toFixed(0)} MB (after its first minute ${peakWithin(run, { start: run.embedding.start + 60_000, end: run.embedding.end }).toFixed(0)} MB), after a query once done ${run.doneQueryRssMb.toFixed(0)} MB`,
  );
  console.log(
    `  RSS less the database file's mapped pages: peak while indexing ${peakOwnWithin(run, run.indexing).toFixed(0)} MB, peak while embedding ${peakOwnWithin(run, run.embedding).toFixed(0)} MB`,
  );
}

const p99 = (ms: number[]) => [...ms].sort((a, b) => a - b)[Math.min(ms.length - 1, Math.floor(0.99 * ms.length))] ?? NaN;

if (!values["no-build"]) await $`${process.execPath} run build`.cwd(root).quiet();
const mail = mailFolder();
const texts = await chunksOf(mail.path);
const chunkFile = join(runTempDir("corpus-bench-chunks-"), "chunks.json");
writeFileSync(chunkFile, JSON.stringify(texts));
console.log(
  `Enron maildir: ${mail.messages} messages, ${texts.length} chunks; model ${assets.modelFile.split("/").pop()}; CORPUS_EMBED_THREADS=${threads}`,
);

const corpus = await measureServer("corpus (this tree)", join(root, "dist", "corpus"), mail);
report(corpus);

let bare: BareResult | undefined;
if (!values["skip-bare"]) {
  const out = await $`${process.execPath} ${join(import.meta.dir, "bare-embed.ts")} --chunks ${chunkFile} --threads ${threads} --json`
    .quiet()
    .text();
  bare = JSON.parse(out) as BareResult;
  console.log(
    `\nbare onnxruntime, same chunks and threads: ${bare.chunks} chunks in ${bare.seconds} s = ${bare.chunks_per_second} chunks/s, padding ${(bare.padding * 100).toFixed(1)}%, peak RSS ${bare.peak_rss_mb} MB`,
  );
}

let before: ServerRun | undefined;
if (values.before) {
  const exe = await buildRevision(values.before);
  // Without questions: the code before issue 14 queued every question's unembedded chunks again
  // and again, its queue growing without bound (one such server reached 24 GB on this machine).
  // Measured alone it is at its fastest, so the speed-up below is the least it can be.
  before = await measureServer(`before: ${values.before} (no questions asked)`, exe, mail, false);
  report(before);
}

const row = (k: string, v: string, target: string, ok?: boolean) =>
  console.log(`${k.padEnd(44)} ${v.padEnd(16)} ${target.padEnd(12)} ${ok === undefined ? "" : ok ? "ok" : "MISSED"}`);
console.log("");
row("measure", "value", "target");
const getP99 = p99(within(corpus.samples.get, corpus.embedding));
const queryP99 = p99(within(corpus.samples.query, corpus.embedding));
row("GET / p99 while embedding", `${getP99.toFixed(1)} ms`, "< 50 ms", getP99 < 50);
row("/v1/query p99 while embedding", `${queryP99.toFixed(1)} ms`, "< 300 ms", queryP99 < 300);
if (bare)
  row(
    "corpus / bare chunks per second",
    `${(rate(corpus) / bare.chunks_per_second).toFixed(2)}`,
    ">= 0.85",
    rate(corpus) / bare.chunks_per_second >= 0.85,
  );
if (before)
  row("embedding speed-up over --before", `${(rate(corpus) / rate(before)).toFixed(2)}x`, ">= 2x", rate(corpus) / rate(before) >= 2);
row(
  "RSS peak while indexing",
  `${peakWithin(corpus, corpus.indexing).toFixed(0)} MB`,
  "< 250 MB",
  peakWithin(corpus, corpus.indexing) < 250,
);
row(
  "RSS peak while embedding",
  `${peakWithin(corpus, corpus.embedding).toFixed(0)} MB`,
  "< 250 MB",
  peakWithin(corpus, corpus.embedding) < 250,
);
row("RSS after a query, idle", `${corpus.idleQueryRssMb.toFixed(0)} MB`, "< 150 MB", corpus.idleQueryRssMb < 150);
