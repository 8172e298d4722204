// Sentence embeddings with all-MiniLM-L6-v2 on onnxruntime: tokenise, batch, run the graph
// whose `sentence_embedding` output is already mean-pooled and L2-normalised.
import { dlopen, ptr } from "bun:ffi";
import { readFileSync } from "node:fs";
import { assets, nativeLibraries } from "../native/assets";
import { isEmbedded, materialize } from "../native/materialize";
import { WordPieceTokenizer, type TokenizerFile } from "./tokenizer";

export const EMBEDDING_DIM = 384;
/** sentence-transformers truncates all-MiniLM-L6-v2 input to 256 tokens. */
export const MAX_TOKENS = 256;
const BATCH_SIZE = 32;

export interface Embedder {
  readonly dim: number;
  readonly tokenizer: WordPieceTokenizer;
  /** One normalised vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
}

type Ort = typeof import("onnxruntime-node");

/**
 * onnxruntime reads ORT_DISABLE_TELEMETRY from the C environment when it initialises; under
 * `bun run` and `bun test` an assignment to process.env does not reach it, so set it in libc.
 */
function disableTelemetry(): void {
  process.env.ORT_DISABLE_TELEMETRY = "1";
  const libc = dlopen("libc.so.6", { setenv: { args: ["ptr", "ptr", "i32"], returns: "i32" } });
  const name = Buffer.from("ORT_DISABLE_TELEMETRY\0");
  const value = Buffer.from("1\0");
  libc.symbols.setenv(ptr(name), ptr(value), 1);
  libc.close();
}

async function loadOnnxRuntime(dataDir: string): Promise<Ort> {
  // An air-gapped product never phones home.
  disableTelemetry();
  if (isEmbedded(nativeLibraries.onnxRuntime.source)) {
    // The binding Bun extracts at run time looks for libonnxruntime.so.1 by soname; loading
    // the checked copy first satisfies it.
    dlopen(materialize(nativeLibraries.onnxRuntime, dataDir), { OrtGetApiBase: { args: [], returns: "ptr" } });
  }
  return await import("onnxruntime-node");
}

/** `dataDir` holds the checked copy of onnxruntime the executable loads (src/native/materialize.ts). */
export async function loadEmbedder(options: { dataDir: string; threads?: number }): Promise<Embedder> {
  const ort = await loadOnnxRuntime(options.dataDir);
  const tokenizer = new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")) as TokenizerFile);
  const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(assets.modelFile)), {
    intraOpNumThreads: options.threads ?? 0,
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
    logSeverityLevel: 3,
  });

  async function runBatch(batch: number[][]): Promise<Float32Array[]> {
    const width = Math.max(...batch.map((ids) => ids.length));
    const size = batch.length * width;
    const ids = new BigInt64Array(size);
    const mask = new BigInt64Array(size);
    batch.forEach((row, r) => {
      row.forEach((id, c) => {
        ids[r * width + c] = BigInt(id);
        mask[r * width + c] = 1n;
      });
    });
    const dims = [batch.length, width];
    const out = await session.run(
      {
        input_ids: new ort.Tensor("int64", ids, dims),
        attention_mask: new ort.Tensor("int64", mask, dims),
        token_type_ids: new ort.Tensor("int64", new BigInt64Array(size), dims),
      },
      ["sentence_embedding"],
    );
    const data = out.sentence_embedding!.data as Float32Array;
    return batch.map((_, r) => data.slice(r * EMBEDDING_DIM, (r + 1) * EMBEDDING_DIM));
  }

  return {
    dim: EMBEDDING_DIM,
    tokenizer,
    async embed(texts) {
      const encoded = texts.map((t, i) => ({ i, ids: tokenizer.encode(t, MAX_TOKENS).ids }));
      // Similar lengths batched together waste less work on padding.
      encoded.sort((a, b) => a.ids.length - b.ids.length);
      const result = new Array<Float32Array>(texts.length);
      for (let start = 0; start < encoded.length; start += BATCH_SIZE) {
        const slice = encoded.slice(start, start + BATCH_SIZE);
        const vectors = await runBatch(slice.map((e) => e.ids));
        slice.forEach((e, k) => {
          result[e.i] = vectors[k]!;
        });
      }
      return result;
    },
  };
}

export function cosine(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  for (let i = 0; i < a.length; i++) dot += a[i]! * b[i]!;
  return dot;
}
