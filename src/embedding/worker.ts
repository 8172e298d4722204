// The embedding worker (a Bun Worker, started by worker-client.ts): owns the ONNX session,
// tokenises and runs the model, so that the thread answering requests never runs inference.
// It keeps each job's batches between steps; the service asks for one batch at a time.
import { EMBEDDING_DIM, loadEmbedder, planBatches, type Embedder } from "./embedder";
import type { FromWorker, ToWorker } from "./protocol";

declare const self: Worker;

interface Job {
  rows: number[][];
  batches: number[][];
}

let embedder: Embedder | undefined;
const jobs = new Map<number, Job>();

const post = (message: FromWorker, transfer: Transferable[] = []) => self.postMessage(message, transfer);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function init(options: Extract<ToWorker, { type: "init" }>): Promise<void> {
  try {
    embedder = await loadEmbedder(options);
    post({ type: "ready" });
  } catch (error) {
    post({ type: "failed", message: messageOf(error) });
  }
}

async function step(m: Extract<ToWorker, { type: "step" }>): Promise<void> {
  try {
    if (!embedder) throw new Error("the embedding model is not loaded");
    if (m.texts) {
      const rows = embedder.encode(m.texts);
      jobs.set(m.job, {
        rows,
        batches: planBatches(
          rows.map((r) => r.length),
          embedder.batchTokens,
        ),
      });
    }
    const job = jobs.get(m.job);
    if (!job) throw new Error(`embedding job ${m.job} is unknown`);
    const indices = job.batches.shift() ?? [];
    const rows = indices.map((i) => job.rows[i]!);
    const padded = rows.length * Math.max(0, ...rows.map((r) => r.length));
    const tokens = rows.reduce((n, r) => n + r.length, 0);
    // A copy of our own: the output may live in memory onnxruntime owns, which cannot be transferred.
    const vectors = rows.length ? (await embedder.run(rows)).slice(0, rows.length * EMBEDDING_DIM) : new Float32Array(0);
    const done = job.batches.length === 0;
    if (done) jobs.delete(m.job);
    post({ type: "batch", seq: m.seq, indices, vectors, done, tokens, padded }, [vectors.buffer]);
  } catch (error) {
    jobs.delete(m.job);
    post({ type: "error", seq: m.seq, message: messageOf(error) });
  }
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === "init") void init(m);
  else if (m.type === "step") void step(m);
  else if (m.type === "drop") jobs.delete(m.job);
};
