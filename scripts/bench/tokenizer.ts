// Our WordPiece tokenizer (src/embedding/tokenizer.ts) against Hugging Face's pure-JS one
// (@huggingface/tokenizers, reading the same models/tokenizer.json), on real mail, in one run:
//   - parity: the ids of every chunk (truncated to the model's 256) and the count of every record;
//   - speed: what indexing asks of a tokenizer, chunking each record (counts, on the request
//     thread) and encoding each chunk to 256 (in the embedding worker), rounds alternated, a
//     fresh tokenizer each round (its memory of words starts empty), medians;
//   - for scale, the model's own time per chunk (onnxruntime, one thread) on a sample.
//   bun scripts/bench/tokenizer.ts [--messages 1702] [--rounds 5] [--model-chunks 64] [--json]
// Enron from /work/shared/data/enron/messages (or --dir).

import { readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Tokenizer } from "@huggingface/tokenizers";
import { parseMessage } from "../../src/connectors/maildir/connector";
import { loadEmbedder, MAX_TOKENS } from "../../src/embedding/embedder";
import { type TokenizerFile, WordPieceTokenizer } from "../../src/embedding/tokenizer";
import { assets } from "../../src/native/assets";
import { embeddingText, recordChunks } from "../../src/retrieval/chunk";

const { values } = parseArgs({
  options: {
    dir: { type: "string", default: "/work/shared/data/enron/messages" },
    messages: { type: "string", default: "1702" },
    rounds: { type: "string", default: "5" },
    "model-chunks": { type: "string", default: "64" },
    json: { type: "boolean", default: false },
  },
});

/** The two tokenizers behind the interface the service uses (encode to a length, count). */
interface Under {
  encode(text: string, maxLength: number): { ids: number[] };
  count(text: string): number;
}

const json = readFileSync(assets.tokenizerFile, "utf8");

/** Hugging Face's, as it would replace ours: its ids without specials, cut to the length, then [CLS] … [SEP]. */
function huggingFace(): Under {
  const t = new Tokenizer(JSON.parse(json), {});
  const cls = t.token_to_id("[CLS]")!;
  const sep = t.token_to_id("[SEP]")!;
  const pieces = (text: string) => t.encode(text, { add_special_tokens: false }).ids;
  return {
    encode: (text, maxLength) => ({ ids: [cls, ...pieces(text).slice(0, maxLength - 2), sep] }),
    count: (text) => pieces(text).length,
  };
}
const ours = (): Under => new WordPieceTokenizer(JSON.parse(json) as TokenizerFile);

const files = readdirSync(values.dir!)
  .filter((f) => f.endsWith(".eml"))
  .sort()
  .slice(0, Number(values.messages));
const records = await Promise.all(files.map((f) => parseMessage(readFileSync(join(values.dir!, f)), f, f, f)));

/** What indexing does with a tokenizer: the record's chunks (counts), each encoded for the model. */
function index(tok: Under): number[][] {
  const rows: number[][] = [];
  for (const r of records) {
    for (const c of recordChunks(r, tok as WordPieceTokenizer)) rows.push(tok.encode(embeddingText(r.title, c), MAX_TOKENS).ids);
  }
  return rows;
}

// Parity, on everything the service would compute.
const a = ours();
const b = huggingFace();
const rowsA = index(a);
const rowsB = index(b);
let chunkDiffs = rowsA.length === rowsB.length ? 0 : Math.abs(rowsA.length - rowsB.length);
rowsA.forEach((row, i) => {
  const other = rowsB[i];
  if (!other || other.length !== row.length || row.some((id, k) => id !== other[k])) chunkDiffs++;
});
let countDiffs = 0;
let tokens = 0;
for (const r of records) {
  const n = a.count(r.content);
  tokens += n;
  if (n !== b.count(r.content)) countDiffs++;
}

// Speed: rounds alternated, fresh tokenizers, medians. Chunking (counts, on the request thread)
// and encoding the chunks (in the embedding worker) are timed apart.
const chunkTexts = records.flatMap((r) => recordChunks(r, a as WordPieceTokenizer).map((c) => embeddingText(r.title, c)));
const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
type Times = { build: number; chunk: number; encode: number };
function timed(make: () => Under): Times {
  const t0 = performance.now();
  const tok = make();
  const t1 = performance.now();
  for (const r of records) recordChunks(r, tok as WordPieceTokenizer);
  const t2 = performance.now();
  for (const text of chunkTexts) tok.encode(text, MAX_TOKENS);
  return { build: t1 - t0, chunk: t2 - t1, encode: performance.now() - t2 };
}
const runs = { ours: [] as Times[], hf: [] as Times[] };
for (let round = 0; round < Number(values.rounds); round++) {
  runs.ours.push(timed(ours));
  runs.hf.push(timed(huggingFace));
}
const med = (which: Times[], key: keyof Times) => median(which.map((r) => r[key]));
const oursMs = med(runs.ours, "chunk") + med(runs.ours, "encode");
const hfMs = med(runs.hf, "chunk") + med(runs.hf, "encode");

// The model's time per chunk, for scale (after one warm-up run).
let modelMsPerChunk: number | undefined;
const sample = Number(values["model-chunks"]);
if (sample > 0) {
  const embedder = await loadEmbedder({ dataDir: join(tmpdir(), "corpus-bench-tokenizer"), threads: 1 });
  const texts = chunkTexts.slice(0, sample);
  await embedder.embed(texts.slice(0, 8));
  const t0 = performance.now();
  await embedder.embed(texts);
  modelMsPerChunk = (performance.now() - t0) / texts.length;
}

const result = {
  messages: records.length,
  chunks: rowsA.length,
  tokens,
  parity: { chunks_differing: chunkDiffs, counts_differing: countDiffs },
  rounds: Number(values.rounds),
  ours_ms: { chunk: Math.round(med(runs.ours, "chunk")), encode: Math.round(med(runs.ours, "encode")) },
  huggingface_ms: { chunk: Math.round(med(runs.hf, "chunk")), encode: Math.round(med(runs.hf, "encode")) },
  /** Hugging Face's time over ours (chunking plus encoding): above 1, ours is faster. */
  ratio_huggingface_over_ours: Number((hfMs / oursMs).toFixed(2)),
  ratio_chunk: Number((med(runs.hf, "chunk") / med(runs.ours, "chunk")).toFixed(2)),
  ratio_encode: Number((med(runs.hf, "encode") / med(runs.ours, "encode")).toFixed(2)),
  ours_build_ms: Math.round(med(runs.ours, "build")),
  huggingface_build_ms: Math.round(med(runs.hf, "build")),
  ours_us_per_chunk: Math.round((oursMs * 1000) / rowsA.length),
  huggingface_us_per_chunk: Math.round((hfMs * 1000) / rowsA.length),
  model_ms_per_chunk: modelMsPerChunk === undefined ? undefined : Number(modelMsPerChunk.toFixed(1)),
};
if (values.json) console.log(JSON.stringify(result));
else {
  console.log(`${result.messages} messages, ${result.chunks} chunks, ${result.tokens} tokens`);
  console.log(`parity: ${chunkDiffs} chunks with other ids, ${countDiffs} records with another count`);
  const o = result.ours_ms;
  const h = result.huggingface_ms;
  console.log(
    `median of ${result.rounds} rounds: ours chunk ${o.chunk} + encode ${o.encode} ms (${result.ours_us_per_chunk} µs/chunk); ` +
      `@huggingface/tokenizers chunk ${h.chunk} + encode ${h.encode} ms (${result.huggingface_us_per_chunk} µs/chunk)`,
  );
  console.log(
    `@huggingface/tokenizers takes ${result.ratio_huggingface_over_ours}x ours (chunking ${result.ratio_chunk}x, encoding ${result.ratio_encode}x)`,
  );
  console.log(`built from tokenizer.json: ours ${result.ours_build_ms} ms, @huggingface/tokenizers ${result.huggingface_build_ms} ms`);
  if (modelMsPerChunk !== undefined) console.log(`the model: ${result.model_ms_per_chunk} ms per chunk (onnxruntime, 1 thread)`);
}
process.exit(chunkDiffs + countDiffs > 0 ? 1 : 0);
