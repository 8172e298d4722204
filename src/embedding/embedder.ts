// Sentence embeddings with all-MiniLM-L6-v2 on onnxruntime: tokenise, batch by tokens, run the
// graph whose `sentence_embedding` output is already mean-pooled and L2-normalised. The server
// runs this inside its embedding worker (worker.ts), never on the thread that answers requests.
import { dlopen, ptr } from "bun:ffi";
import { embeddingModel, type ModelAsset, type NativeLibrary, nativeLibraries } from "../native/assets";
import { assertRoomForCopies, isEmbedded, materialize } from "../native/materialize";
import { shippedTokenizer, type WordPieceTokenizer } from "./tokenizer";

export const EMBEDDING_DIM = 384;
/** sentence-transformers truncates all-MiniLM-L6-v2 input to 256 tokens. */
export const MAX_TOKENS = 256;
/**
 * Padded tokens (rows x longest row) per model run: one chunk of the Enron mail (~200 tokens) per
 * run. Measured with the executable on the Enron maildir (scripts/bench/indexing.ts, int8, one
 * thread; two runs each), against runs of 512: 75.2-75.8 chunks/s instead of 67.9-69.0 (the bare
 * onnxruntime script the same at both, 62), `/v1/query` p99 81-96 ms instead of 112-159 while
 * embedding (a question waits behind a shorter run), and onnxruntime's arena, which keeps what the
 * largest run needed, smaller (peak RSS while embedding 290-291 MB instead of 304-305; while mail
 * is read 255-279, noisy, instead of 266-268). Earlier, bare: runs of 512
 * as fast as 1k-8k, 25 MB less peak RSS than 1k.
 */
export const BATCH_TOKENS = 256;

export interface EmbedderOptions {
  /** Holds the checked copy of onnxruntime the executable loads (src/native/materialize.ts). */
  dataDir: string;
  /** onnxruntime's intra-op threads (CORPUS_EMBED_THREADS); 0 lets onnxruntime pick. */
  threads?: number;
  /** Padded tokens per model run. */
  batchTokens?: number;
  /** The model to run: the shipped one unless a test or an evaluation names another. */
  model?: ModelAsset;
}

/** What the model was given: real tokens, and tokens with padding (the work done). */
export interface BatchStats {
  batches: number;
  texts: number;
  tokens: number;
  padded: number;
}

export interface Embedder {
  readonly dim: number;
  readonly tokenizer: WordPieceTokenizer;
  readonly batchTokens: number;
  /** Counts since the embedder was loaded. */
  readonly stats: BatchStats;
  /** One normalised vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /** The model's input ids of each text ([CLS] … [SEP], truncated). */
  encode(texts: string[]): number[][];
  /** One model run over `rows`: their vectors one after another (rows x dim). */
  run(rows: number[][]): Promise<Float32Array>;
}

type Ort = typeof import("onnxruntime-node");

/**
 * onnxruntime reads ORT_DISABLE_TELEMETRY from the C environment when it initialises; under
 * `bun run` and `bun test` an assignment to process.env does not reach it, so set it in libc.
 */
export function disableTelemetry(): void {
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
    // the checked copy first satisfies it. The worker checks the same copy the main thread
    // would (DATA_DIR/native/<hash>/): never a copy of its own.
    dlopen(materialize(nativeLibraries.onnxRuntime, dataDir), { OrtGetApiBase: { args: [], returns: "ptr" } });
  }
  return await import("onnxruntime-node");
}

/**
 * Groups texts into model runs of at most `budget` padded tokens: sorted by length, so that
 * rows of a run are alike and little is padding; a text longer than the budget runs alone.
 * Returns the indices of each run.
 */
export function planBatches(lengths: number[], budget: number): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
  const batches: number[][] = [];
  let current: number[] = [];
  for (const i of order) {
    // Sorted ascending: the newcomer is the longest row of the run.
    if (current.length && (current.length + 1) * lengths[i]! > budget) {
      batches.push(current);
      current = [];
    }
    current.push(i);
  }
  if (current.length) batches.push(current);
  return batches;
}

/**
 * The model as onnxruntime loads it: by path, from the executable's checked copy in
 * DATA_DIR/native/<hash>/ (as the native libraries), never from bytes read out of the
 * executable, which would stay resident (~23-45 MB of RSS) for the life of the process. One
 * name whichever model file is shipped (the executable renames its files); a new model's copy
 * replaces the previous one.
 */
export const modelCopyOf = (model: ModelAsset): NativeLibrary => ({ source: model.file, name: "embedding-model.onnx" });
export const modelCopy = modelCopyOf(embeddingModel);

/** What the executable copies into the data folder to load the model (~67 MB: onnxruntime and the model). */
export const MODEL_COPIES: readonly NativeLibrary[] = [nativeLibraries.onnxRuntime, modelCopy];

export async function loadEmbedder(options: EmbedderOptions): Promise<Embedder> {
  const model = modelCopyOf(options.model ?? embeddingModel);
  // Both copies or neither: onnxruntime's alone (44 MB) could fill the disk the model's copy then fails on (D29).
  assertRoomForCopies([nativeLibraries.onnxRuntime, model], options.dataDir);
  const ort = await loadOnnxRuntime(options.dataDir);
  const tokenizer = shippedTokenizer();
  const session = await ort.InferenceSession.create(materialize(model, options.dataDir), {
    intraOpNumThreads: options.threads ?? 0,
    interOpNumThreads: 1,
    executionMode: "sequential",
    graphOptimizationLevel: "all",
    logSeverityLevel: 3,
    // Shapes change with every batch, so a memory pattern planned for one is rarely reused;
    // measured: without it, less memory and no slower.
    enableMemPattern: false,
    // Idle pool threads sleep instead of spinning: on two cores a spinning thread takes the
    // time the request thread needs.
    extra: { session: { intra_op: { allow_spinning: "0" } } },
  });
  const batchTokens = options.batchTokens ?? BATCH_TOKENS;
  const stats: BatchStats = { batches: 0, texts: 0, tokens: 0, padded: 0 };

  async function run(rows: number[][]): Promise<Float32Array> {
    const width = Math.max(...rows.map((ids) => ids.length));
    const size = rows.length * width;
    const ids = new BigInt64Array(size);
    const mask = new BigInt64Array(size);
    // Written as the low 32-bit halves of the int64s (little-endian; ids are below 2^31): a
    // BigInt per token was ~100k garbage objects per second in the worker while a folder embedded.
    const idWords = new Int32Array(ids.buffer);
    const maskWords = new Int32Array(mask.buffer);
    let tokens = 0;
    rows.forEach((row, r) => {
      tokens += row.length;
      const at = 2 * r * width;
      for (let c = 0; c < row.length; c++) {
        idWords[at + 2 * c] = row[c]!;
        maskWords[at + 2 * c] = 1;
      }
    });
    const dims = [rows.length, width];
    const out = await session.run(
      {
        input_ids: new ort.Tensor("int64", ids, dims),
        attention_mask: new ort.Tensor("int64", mask, dims),
        token_type_ids: new ort.Tensor("int64", new BigInt64Array(size), dims),
      },
      ["sentence_embedding"],
    );
    stats.batches++;
    stats.texts += rows.length;
    stats.tokens += tokens;
    stats.padded += size;
    return out.sentence_embedding!.data as Float32Array;
  }

  const encode = (texts: string[]) => texts.map((t) => tokenizer.encode(t, MAX_TOKENS).ids);

  return {
    dim: EMBEDDING_DIM,
    tokenizer,
    batchTokens,
    stats,
    encode,
    run,
    async embed(texts) {
      const rows = encode(texts);
      const result = new Array<Float32Array>(texts.length);
      for (const batch of planBatches(
        rows.map((r) => r.length),
        batchTokens,
      )) {
        const flat = await run(batch.map((i) => rows[i]!));
        batch.forEach((i, k) => {
          result[i] = flat.slice(k * EMBEDDING_DIM, (k + 1) * EMBEDDING_DIM);
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
