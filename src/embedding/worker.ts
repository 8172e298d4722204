// The embedding worker (a Bun Worker, started by worker-client.ts): owns the ONNX session,
// tokenises and runs the model, so that the thread answering requests never runs inference.
// Runs are queued here in the order the service sent them, questions first; between two
// batches the worker lets the messages that came meanwhile in, so a question sent during a
// background batch runs right after it.
import { collectIfOverBudget, collectMemory, releaseFilePages } from "../limits/memory";
import { EMBEDDING_DIM, type Embedder, loadEmbedder, planBatches } from "./embedder";
import type { FromWorker, ToWorker } from "./protocol";

declare const self: Worker;

/** onnxruntime's library wherever it is loaded from: the data folder's checked copy, or node_modules. */
const ONNXRUNTIME_LIBRARY = /\/libonnxruntime\.so[.\d]*$/;

interface Run {
  seq: number;
  rows: number[][];
  batches: number[][];
}

let embedder: Embedder | undefined;
const urgent: Run[] = [];
const background: Run[] = [];
let pumping = false;
/** A model run is under way (onnxruntime runs it off this thread: messages still come in). */
let inRun = false;
let stopping = false;

/**
 * After this long with nothing to run, the worker collects its garbage and gives the C heap's free
 * memory back (what the runs' inputs and outputs left): an idle server's RSS after a question is
 * what it holds, not what its last runs touched. Not between the jobs of a folder being embedded.
 */
const IDLE_TRIM_MS = 1_000;
let idleTimer: ReturnType<typeof setTimeout> | undefined;

function trimWhenIdle(): void {
  clearTimeout(idleTimer);
  idleTimer = setTimeout(() => {
    collectMemory();
  }, IDLE_TRIM_MS);
  idleTimer.unref?.();
}

const post = (message: FromWorker, transfer: Transferable[] = []) => self.postMessage(message, transfer);
const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function init(options: Extract<ToWorker, { type: "init" }>): Promise<void> {
  try {
    embedder = await loadEmbedder(options);
    // What loading left behind (the tokenizer's JSON, onnxruntime's graph optimisation) goes back: ~4 MB.
    collectMemory();
    // And the pages of onnxruntime's library that only its loading ran: 26 MB of RSS.
    releaseFilePages(ONNXRUNTIME_LIBRARY);
    // One run before it says ready: the pages and arena a run needs are in, so the first question
    // does not wait for them (scripts/bench/first-question.ts: the process's first 95 -> ~70 ms).
    await embedder.embed(["warm"]);
    post({ type: "ready" });
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    post({ type: "failed", message: messageOf(error), ...(typeof code === "string" ? { code } : {}) });
  }
}

function accept(m: Extract<ToWorker, { type: "run" }>): void {
  try {
    if (!embedder) throw new Error("the embedding model is not loaded");
    const rows = embedder.encode(m.texts);
    const batches = planBatches(
      rows.map((r) => r.length),
      embedder.batchTokens,
    );
    clearTimeout(idleTimer);
    (m.urgent ? urgent : background).push({ seq: m.seq, rows, batches });
    void pump();
  } catch (error) {
    post({ type: "error", seq: m.seq, message: messageOf(error) });
  }
}

/** Runs batches until none is left: the oldest question's first, else the oldest background job's. */
async function pump(): Promise<void> {
  if (pumping) return;
  pumping = true;
  try {
    for (;;) {
      // Messages that came during the last batch (a question) are queued before this pick.
      await nextTurn();
      const queue = urgent.length ? urgent : background;
      const run = queue[0];
      if (!run) return trimWhenIdle();
      try {
        inRun = true;
        try {
          await runBatch(run);
        } finally {
          inRun = false;
        }
        // Exiting during a model run aborts the whole process (onnxruntime's binding throws
        // into a dying runtime): a stop asked for meanwhile is carried out here, between runs.
        if (stopping) process.exit(0);
        // Long work collects as it goes (limits/memory.ts); a question's run is not long work. The
        // budget is the whole process's memory, which a server's other threads keep over it: after
        // every question this thread collected and gave the C heap's free pages back (malloc_trim),
        // which the next run faulted in again, with the other threads' TLBs flushed each time.
        if (queue === background) collectIfOverBudget();
        if (run.batches.length === 0) queue.shift();
      } catch (error) {
        queue.shift();
        post({ type: "error", seq: run.seq, message: messageOf(error) });
      }
    }
  } finally {
    pumping = false;
  }
}

async function runBatch(run: Run): Promise<void> {
  const indices = run.batches.shift() ?? [];
  const rows = indices.map((i) => run.rows[i]!);
  const padded = rows.length * Math.max(0, ...rows.map((r) => r.length));
  const tokens = rows.reduce((n, r) => n + r.length, 0);
  // A copy of our own: the output may live in memory onnxruntime owns, which cannot be transferred.
  const vectors = rows.length ? (await embedder!.run(rows)).slice(0, rows.length * EMBEDDING_DIM) : new Float32Array(0);
  post({ type: "batch", seq: run.seq, indices, vectors, done: run.batches.length === 0, tokens, padded }, [vectors.buffer]);
}

self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === "init") void init(m);
  else if (m.type === "run") accept(m);
  else if (m.type === "stop") {
    stopping = true;
    if (!inRun) process.exit(0);
  }
};
