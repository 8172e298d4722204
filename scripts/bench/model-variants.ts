// The model's variants side by side (issue 14): every file models/manifest.json lists, run
// with onnxruntime directly (no server), on the same texts, in one run.
//   bun scripts/bench/model-variants.ts [--rounds 3] [--files a.onnx,b.onnx]   (files of models/; default: the manifest's)
// Prints per variant: file size; sentences/s on the SciFact claims (short sentences, batches
// of 32, 2 intra-op threads, tokenised beforehand), per round and median, rounds alternating
// between variants since this machine is shared; then each variant's agreement with the
// first (the reference): cosine of every text's two vectors (min, mean) over the claims and
// abstracts, and how often a question's top-1 (and top-10) among the abstracts is the same.
// CPU/wall under 2 means other processes had part of the two cores: the absolute rates are
// then low, and the ratio between variants within a round is the figure to compare.

import { readFileSync, statSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { cosine, MAX_TOKENS } from "../../src/embedding/embedder";
import { type TokenizerFile, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import type { Manifest } from "../build-model";
import { median } from "./lib";

const root = join(import.meta.dir, "../..");
const models = join(root, "models");
const data = join(root, "../shared/data/scifact");
const args = process.argv.slice(2);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const ROUNDS = Number(option("rounds", "3"));
const THREADS = 2;
const BATCH = 32;
/** Abstracts the questions are ranked against, and questions asked (claims of the test split). */
const DOCS = 600;
const QUESTIONS = 100;

const manifest = JSON.parse(readFileSync(join(models, "manifest.json"), "utf8")) as Manifest;
const tokenizer = new WordPieceTokenizer(JSON.parse(readFileSync(join(models, manifest.tokenizer.file), "utf8")) as TokenizerFile);
const jsonl = <T>(file: string) =>
  readFileSync(join(data, file), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as T);
const claims = jsonl<{ _id: string; text: string }>("queries.jsonl").map((q) => q.text);
const abstracts = jsonl<{ title: string; text: string }>("corpus.jsonl")
  .slice(0, DOCS)
  .map((d) => `${d.title}\n\n${d.text}`);
const questions = claims.slice(0, QUESTIONS);

type Session = ort.InferenceSession;
const openSession = (file: string) =>
  ort.InferenceSession.create(new Uint8Array(readFileSync(join(models, file))), {
    intraOpNumThreads: THREADS,
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
    logSeverityLevel: 3,
  });

const encodeAll = (texts: string[]) => texts.map((t) => tokenizer.encode(t, MAX_TOKENS).ids);

/** One batch, right-padded to its longest row: the `sentence_embedding` of each row. */
async function runBatch(session: Session, batch: number[][]): Promise<Float32Array[]> {
  const width = Math.max(...batch.map((ids) => ids.length));
  const ids = new BigInt64Array(batch.length * width);
  const mask = new BigInt64Array(batch.length * width);
  for (const [r, row] of batch.entries()) {
    for (const [c, id] of row.entries()) {
      ids[r * width + c] = BigInt(id);
      mask[r * width + c] = 1n;
    }
  }
  const dims = [batch.length, width];
  const out = await session.run(
    {
      input_ids: new ort.Tensor("int64", ids, dims),
      attention_mask: new ort.Tensor("int64", mask, dims),
      token_type_ids: new ort.Tensor("int64", new BigInt64Array(ids.length), dims),
    },
    ["sentence_embedding"],
  );
  const vectors = out.sentence_embedding!.data as Float32Array;
  return batch.map((_, r) => vectors.slice(r * 384, (r + 1) * 384));
}

async function embedAll(session: Session, encoded: number[][]): Promise<Float32Array[]> {
  const result: Float32Array[] = [];
  for (let i = 0; i < encoded.length; i += BATCH) result.push(...(await runBatch(session, encoded.slice(i, i + BATCH))));
  return result;
}

/** Sentences per second over one pass, and the CPU the process used per wall second (2 = both threads busy). */
async function throughput(session: Session, encoded: number[][]): Promise<{ rate: number; cpu: number }> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await embedAll(session, encoded);
  const seconds = (performance.now() - t0) / 1000;
  const used = process.cpuUsage(cpu0);
  return { rate: encoded.length / seconds, cpu: (used.user + used.system) / 1e6 / seconds };
}

function topK(question: Float32Array, docs: Float32Array[], k: number): number[] {
  return docs
    .map((d, i) => ({ i, s: cosine(question, d) }))
    .sort((a, b) => b.s - a.s)
    .slice(0, k)
    .map((x) => x.i);
}

function agreement(ref: Float32Array[], other: Float32Array[]) {
  const cos = ref.map((v, i) => cosine(v, other[i]!));
  return { min: Math.min(...cos), mean: cos.reduce((a, b) => a + b, 0) / cos.length };
}

const fmt = (x: number, d = 0) => x.toFixed(d);
console.log(
  `load average at start ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")} (2 cores)`,
);
const files = option("files", manifest.models.map((m) => m.file).join(",")).split(",");
const storageOf = (file: string) => manifest.models.find((m) => m.file === file)?.storage ?? "?";
const variants = await Promise.all(
  files.map(async (file) => ({
    file,
    storage: storageOf(file),
    session: await openSession(file),
    rounds: [] as Array<{ rate: number; cpu: number }>,
  })),
);
const claimIds = encodeAll(claims);
const tokens = claimIds.reduce((n, ids) => n + ids.length, 0);
console.log(
  `texts: ${claims.length} SciFact claims (mean ${fmt(tokens / claims.length, 1)} tokens), batches of ${BATCH}, ${THREADS} threads`,
);

// 1. Speed: a warm-up pass each, then rounds alternating between the variants.
for (const v of variants) await embedAll(v.session, claimIds.slice(0, BATCH * 2));
for (let r = 0; r < ROUNDS; r++) for (const v of variants) v.rounds.push(await throughput(v.session, claimIds));

// 2. Agreement with the first variant: the same texts' vectors, and the same questions' rankings.
const abstractIds = encodeAll(abstracts);
const questionIds = encodeAll(questions);
const vectors: Array<Record<"claims" | "docs" | "questions", Float32Array[]>> = [];
for (const v of variants) {
  vectors.push({
    claims: await embedAll(v.session, claimIds),
    docs: await embedAll(v.session, abstractIds),
    questions: await embedAll(v.session, questionIds),
  });
}
const ref = vectors[0]!;
const refTop = ref.questions.map((q) => topK(q, ref.docs, 10));

console.log(
  "\n| variant | storage | size | sentences/s (median; rounds) | CPU/wall | sentences per CPU-second | cosine with first, claims (min / mean) | abstracts (min / mean) | same top-1 | top-10 overlap |",
);
console.log("|---|---|---|---|---|---|---|---|---|---|");
variants.forEach((v, i) => {
  const vec = vectors[i]!;
  const c = agreement(ref.claims, vec.claims);
  const d = agreement(ref.docs, vec.docs);
  const tops = vec.questions.map((q) => topK(q, vec.docs, 10));
  const sameTop1 = tops.filter((t, q) => t[0] === refTop[q]![0]).length;
  const overlap = tops.reduce((n, t, q) => n + t.filter((x) => refTop[q]!.includes(x)).length, 0) / (10 * tops.length);
  const rates = v.rounds.map((x) => x.rate);
  console.log(
    `| ${v.file} | ${v.storage} | ${fmt(statSync(join(models, v.file)).size / 1e6, 1)} MB | ${fmt(median(rates))} (${rates.map((x) => fmt(x)).join(", ")}) | ${median(v.rounds.map((x) => x.cpu)).toFixed(2)} | ${fmt(median(v.rounds.map((x) => x.rate / x.cpu)))} | ${c.min.toFixed(4)} / ${c.mean.toFixed(4)} | ${d.min.toFixed(4)} / ${d.mean.toFixed(4)} | ${sameTop1}/${tops.length} | ${fmt(overlap * 100, 1)}% |`,
  );
});
const speedups = variants.slice(1).map((v) => v.rounds.map((x, r) => x.rate / variants[0]!.rounds[r]!.rate));
for (const [i, s] of speedups.entries())
  console.log(
    `${variants[i + 1]!.file}: ${median(s).toFixed(2)}x the first's sentences/s (per round ${s.map((x) => x.toFixed(2)).join(", ")})`,
  );
console.log(
  `load average at end ${loadavg()
    .map((x) => x.toFixed(2))
    .join(" ")}; abstracts: the first ${DOCS} of the corpus, questions: the first ${QUESTIONS} claims`,
);
