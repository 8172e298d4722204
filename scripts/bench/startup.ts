// Start-up and GET / throughput of the single executable (issue: the single executable).
//   bun scripts/bench/startup.ts            builds dist/corpus if missing
// Prints: median spawn-to-first-200 over 5 runs, RSS when ready, file size, and GET /
// requests per second under 64 connections beside bare Bun.serve measured in the same run.
// Targets: first 200 < 150 ms, ready RSS < 130 MB, GET / >= 0.8 x bare Bun.serve.
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../build";
import { coldStarts, freePort, kill, median, requireTool, rssMb, runTempDir, sleep, waitFor200, waitIdle, wrk } from "./lib";

requireTool("wrk", "wrk");
const root = join(import.meta.dir, "../..");
const exe = join(root, "dist", "corpus");
if (!existsSync(exe) || process.argv.includes("--rebuild")) await buildExecutable(exe);

const home = runTempDir("corpus-bench-");
// A folder inside the temporary one: the master key is written beside the data folder.
const dataDir = join(home, "data");
const env = { PATH: process.env.PATH ?? "", HOME: home, CORPUS_DATA_DIR: dataDir, CORPUS_LOG_LEVEL: "WARNING" };

function spawnCorpus(port: number) {
  return Bun.spawn([exe, "serve"], { env: { ...env, CORPUS_PORT: String(port) }, stdout: "ignore", stderr: "inherit" });
}

// 1. Cold start: spawn -> first 200 on GET /, and RSS at that moment.
const rss: number[] = [];
const starts = await coldStarts(5, spawnCorpus, (proc) => {
  rss.push(rssMb(proc.pid));
});

// 2. Throughput, alternating baseline and corpus; the ratio is taken per round (the two runs
// closest in time) and its median reported, since this machine is shared and noisy. corpus is
// measured once it has settled (the embedding model loads in the background after start).
const ROUNDS = 5;
const rates = { bare: [] as number[], corpus: [] as number[] };
for (let round = 0; round < ROUNDS; round++) {
  const barePort = freePort();
  const bare = Bun.spawn([process.execPath, join(import.meta.dir, "bare-server.ts")], {
    env: { ...process.env, PORT: String(barePort) },
    stdout: "ignore",
  });
  await waitFor200(`http://127.0.0.1:${barePort}/`);
  await waitIdle(bare.pid);
  await wrk(`http://127.0.0.1:${barePort}/`, { seconds: 1 });
  rates.bare.push(await wrk(`http://127.0.0.1:${barePort}/`));
  await kill(bare);

  const port = freePort();
  const corpus = spawnCorpus(port);
  await waitFor200(`http://127.0.0.1:${port}/`);
  await waitIdle(corpus.pid);
  await wrk(`http://127.0.0.1:${port}/`, { seconds: 1 });
  rates.corpus.push(await wrk(`http://127.0.0.1:${port}/`));
  await kill(corpus);
  await sleep(200);
}

const bare = median(rates.bare);
const corpus = median(rates.corpus);
const ratio = median(rates.corpus.map((c, i) => c / rates.bare[i]!));
const row = (k: string, v: string, target: string) => console.log(`${k.padEnd(34)} ${v.padEnd(22)} ${target}`);
row("measure", "value", "target");
row("first 200 on GET / (median of 5)", `${median(starts).toFixed(1)} ms`, "< 150 ms");
row("RSS when ready (median)", `${median(rss).toFixed(1)} MB`, "< 130 MB");
row("executable size", `${(statSync(exe).size / 1e6).toFixed(1)} MB`, "");
row("GET / bare Bun.serve", `${bare.toFixed(0)} req/s`, "baseline");
row("GET / corpus", `${corpus.toFixed(0)} req/s`, "");
row("GET / corpus / bare (median of rounds)", `${ratio.toFixed(2)}`, ">= 0.80");
console.log("rounds:", rates.corpus.map((c, i) => (c / rates.bare[i]!).toFixed(2)).join(" "));
