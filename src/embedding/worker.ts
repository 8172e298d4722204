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
/** Questions to run one at a time: those of a run together that failed (questionsTogether). */
let alone = 0;
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

/** Runs batches until none is left: the waiting questions' first (together), else the oldest background job's. */
async function pump(): Promise<void> {
  if (pumping) return;
  pumping = true;
  try {
    for (;;) {
      // Messages that came during the last batch (a question) are queued before this pick.
      await nextTurn();
      const queue = urgent.length ? urgent : background;
      if (!queue[0]) return trimWhenIdle();
      const runs = queue === urgent && alone === 0 ? questionsTogether() : [queue[0]];
      if (queue === urgent && alone > 0) alone--;
      try {
        inRun = true;
        try {
          await runBatch(runs);
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
      } catch (error) {
        if (stopping) process.exit(0);
        if (runs.length > 1) {
          // Run together, one question's failure is not the others': their batches are still theirs (runBatch), each runs again alone.
          alone += runs.length;
          continue;
        }
        for (const run of runs) post({ type: "error", seq: run.seq, message: messageOf(error) });
        for (const run of runs) run.batches.length = 0;
      }
      for (const run of runs) if (run.batches.length === 0) queue.splice(queue.indexOf(run), 1);
    }
  } finally {
    pumping = false;
  }
}

/**
 * The waiting questions whose next batches run as one, oldest first, within the batch's padded
 * tokens: a model run costs about the same for one short question as for a few together (its
 * fixed cost: ~7.9 ms of CPU a question one at a time, ~5.5 ms eight together, measured), and
 * questions come together under load.
 */
function questionsTogether(): Run[] {
  const together: Run[] = [urgent[0]!];
  let rows = urgent[0]!.batches[0]?.length ?? 0;
  let width = Math.max(0, ...(urgent[0]!.batches[0] ?? []).map((i) => urgent[0]!.rows[i]!.length));
  for (const run of urgent.slice(1)) {
    const next = run.batches[0] ?? [];
    const wider = Math.max(width, ...next.map((i) => run.rows[i]!.length));
    if ((rows + next.length) * wider > embedder!.batchTokens) break;
    together.push(run);
    rows += next.length;
    width = wider;
  }
  return together;
}

/** The next batch of each run of `together`, in one model run; each run's vectors posted to it. */
async function runBatch(together: Run[]): Promise<void> {
  const parts = together.map((run) => ({ run, indices: run.batches[0] ?? [] }));
  const rows = parts.flatMap(({ run, indices }) => indices.map((i) => run.rows[i]!));
  const width = Math.max(0, ...rows.map((r) => r.length));
  // A copy of our own: the output may live in memory onnxruntime owns, which cannot be transferred.
  const all = rows.length ? await embedder!.run(rows) : new Float32Array(0);
  // Taken once run: a run that failed leaves each run its batch (pump runs them again alone).
  for (const { run } of parts) run.batches.shift();
  let at = 0;
  let runs = rows.length ? 1 : 0;
  for (const { run, indices } of parts) {
    const vectors = all.slice(at * EMBEDDING_DIM, (at + indices.length) * EMBEDDING_DIM);
    at += indices.length;
    const tokens = indices.reduce((n, i) => n + run.rows[i]!.length, 0);
    post({ type: "batch", seq: run.seq, indices, vectors, done: run.batches.length === 0, tokens, padded: indices.length * width, runs }, [
      vectors.buffer,
    ]);
    runs = 0;
  }
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
