// The limit of this machine for embedding: the model corpus ships, run with onnxruntime on the
// same chunks and threads, with nothing else in the process (no server, no worker, no
// database). All chunks are sorted by length at once and cut into runs of at most
// --batch-tokens padded tokens: the least padding any batching can reach.
//   bun scripts/bench/bare-embed.ts --chunks chunks.json [--threads 1] [--batch-tokens 1024] [--json]
// scripts/bench/indexing.ts runs it on the Enron chunks, in the same run as corpus.

import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { BATCH_TOKENS, disableTelemetry, MAX_TOKENS, planBatches } from "../../src/embedding/embedder";
import { type TokenizerFile, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";

export interface BareResult {
  model: string;
  threads: number;
  batch_tokens: number;
  chunks: number;
  seconds: number;
  chunks_per_second: number;
  /** Share of the tokens run that were padding. */
  padding: number;
  peak_rss_mb: number;
}

const { values } = parseArgs({
  options: {
    chunks: { type: "string" },
    threads: { type: "string", default: "1" },
    "batch-tokens": { type: "string", default: String(BATCH_TOKENS) },
    json: { type: "boolean", default: false },
  },
});
if (!values.chunks) {
  console.error("usage: bun scripts/bench/bare-embed.ts --chunks chunks.json [--threads 1] [--batch-tokens 1024] [--json]");
  process.exit(2);
}

disableTelemetry();
const ort = await import("onnxruntime-node");
const threads = Number(values.threads);
const budget = Number(values["batch-tokens"]);
const texts = JSON.parse(readFileSync(values.chunks, "utf8")) as string[];
const tokenizer = new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")) as TokenizerFile);
const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(assets.modelFile)), {
  intraOpNumThreads: threads,
  interOpNumThreads: 1,
  graphOptimizationLevel: "all",
  logSeverityLevel: 3,
});

async function run(rows: number[][]): Promise<number> {
  const width = Math.max(...rows.map((r) => r.length));
  const size = rows.length * width;
  const ids = new BigInt64Array(size);
  const mask = new BigInt64Array(size);
  for (const [r, row] of rows.entries()) {
    for (const [c, id] of row.entries()) {
      ids[r * width + c] = BigInt(id);
      mask[r * width + c] = 1n;
    }
  }
  const dims = [rows.length, width];
  await session.run(
    {
      input_ids: new ort.Tensor("int64", ids, dims),
      attention_mask: new ort.Tensor("int64", mask, dims),
      token_type_ids: new ort.Tensor("int64", new BigInt64Array(size), dims),
    },
    ["sentence_embedding"],
  );
  return size;
}

const peakRss = () => Number(/VmHWM:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1]) / 1024;

await run([tokenizer.encode("warm up", MAX_TOKENS).ids]);
// Timed from tokenising on: corpus tokenises too.
const started = performance.now();
const rows = texts.map((t) => tokenizer.encode(t, MAX_TOKENS).ids);
let tokens = 0;
let padded = 0;
for (const batch of planBatches(
  rows.map((r) => r.length),
  budget,
)) {
  const picked = batch.map((i) => rows[i]!);
  tokens += picked.reduce((n, r) => n + r.length, 0);
  padded += await run(picked);
}
const seconds = (performance.now() - started) / 1000;
const result: BareResult = {
  model: assets.modelFile.split("/").pop()!,
  threads,
  batch_tokens: budget,
  chunks: texts.length,
  seconds: Math.round(seconds * 10) / 10,
  chunks_per_second: Math.round((texts.length / seconds) * 10) / 10,
  padding: Math.round((1 - tokens / padded) * 1000) / 1000,
  peak_rss_mb: Math.round(peakRss()),
};
if (values.json) console.log(JSON.stringify(result));
else
  console.log(
    `bare onnxruntime (${result.model}, ${threads} thread(s), runs of <= ${budget} tokens): ${result.chunks} chunks in ${result.seconds} s = ${result.chunks_per_second} chunks/s; padding ${(result.padding * 100).toFixed(1)}%; peak RSS ${result.peak_rss_mb} MB`,
  );
