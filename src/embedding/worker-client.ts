// The request thread's handle on the embedding worker (worker.ts): starts it, sends it runs
// (the texts of a job) and collects their batches, and turns its death (an error, an exit, a start that never finishes) into
// rejected promises, never a hang. A dead client stays dead; the service starts another.
import { join } from "node:path";
import { type BatchStats, EMBEDDING_DIM, type EmbedderOptions, MAX_TOKENS } from "./embedder";
import type { FromWorker, ToWorker } from "./protocol";

/**
 * The worker's entry inside the executable, relative to the executable's root; scripts/build.ts
 * sets it and compiles worker.ts as a second entrypoint. `new Worker(new URL(…, import.meta.url))`
 * hung there without a word; a plain relative name works. Under `bun run`, a path beside this file.
 */
declare const CORPUS_EMBED_WORKER: string | undefined;
export const EMBED_WORKER_DEFINE = "CORPUS_EMBED_WORKER";
const workerEntry = () => (typeof CORPUS_EMBED_WORKER === "string" ? CORPUS_EMBED_WORKER : join(import.meta.dir, "worker.ts"));

/**
 * Characters of a text the worker is sent: its first MAX_TOKENS word pieces lie within them (a
 * piece is at most 100 characters, the tokenizer's longest word, with room for what separates
 * them). A 50 MB text was cloned whole into the worker and split into millions of words there
 * (its memory unbounded, D31), for the 256 the model reads.
 */
export const EMBEDDED_TEXT_CHARS = MAX_TOKENS * 128;
/** Characters one run carries at most (~8 MB of the worker's memory at a time): a job's texts past it go in further runs, one after another. */
export const RUN_CHARS = 4_000_000;

/** A worker asked to stop (between two runs) exits at once; one that has not after this is ended by force. */
const STOP_TIMEOUT_MS = 10_000;

/** Loading the model takes ~0.5-3 s on a busy two-core machine; a start past this is a failure. */
export const WORKER_START_TIMEOUT_MS = 60_000;

export interface WorkerOptions extends EmbedderOptions {
  /** The worker's entry (tests start broken ones). */
  entry?: string;
  startTimeoutMs?: number;
  /** After a stop is asked, how long before the thread is ended by force (STOP_TIMEOUT_MS). */
  stopTimeoutMs?: number;
  /** Called once, when the worker died or failed to start. */
  onDeath?: (error: Error) => void;
  /** Called after each model run. */
  onBatch?: (batch: BatchStats) => void;
}

/** Texts to embed; `vectors` fill in as the worker's batches return (or from the cache, before). */
export class EmbedJob {
  private static nextId = 1;
  readonly id = EmbedJob.nextId++;
  readonly vectors: Array<Float32Array | undefined>;
  /** Texts still without a vector. */
  left: number;
  constructor(readonly texts: string[]) {
    this.vectors = new Array(texts.length);
    this.left = texts.length;
  }

  set(i: number, vector: Float32Array): void {
    if (!this.vectors[i]) this.left--;
    this.vectors[i] = vector;
  }
}

export class EmbeddingWorkerDied extends Error {
  /** The system's code of what the worker failed on, when it said (ENOSPC: isStorageError). */
  readonly code?: string;
  constructor(message: string, code?: string) {
    super(message);
    if (code) this.code = code;
  }
}

/** The error's own line: Bun's message about an uncaught error in a worker also quotes the source around it. */
function reasonOf(event: ErrorEvent): string {
  const text = event.message || "unknown error";
  return /^error: (.+)$/m.exec(text)?.[1] ?? text.split("\n")[0]!;
}

type Waiter = { batch: (m: Extract<FromWorker, { type: "batch" }>) => void; resolve: () => void; reject: (e: Error) => void };

export class EmbeddingWorker {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private seq = 0;
  private dead?: Error;
  private loaded = false;
  /** Resolves once the worker's thread has ended. */
  private readonly exited: Promise<void>;
  private settleStart!: { resolve: () => void; reject: (e: Error) => void };

  constructor(private readonly options: WorkerOptions) {
    this.ready = new Promise<void>((resolve, reject) => (this.settleStart = { resolve, reject }));
    // A failed start is reported through `ready`, and through the jobs that wait on it.
    this.ready.catch(() => {});
    // smol: a smaller JavaScript heap, collected sooner; the worker's own objects are a few
    // batches of token ids and vectors, its memory is onnxruntime's.
    this.worker = new Worker(options.entry ?? workerEntry(), { smol: true });
    const limit = options.startTimeoutMs ?? WORKER_START_TIMEOUT_MS;
    const timer = setTimeout(() => this.die(new EmbeddingWorkerDied(`the embedding worker did not start within ${limit / 1000} s`)), limit);
    this.ready.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    this.worker.onerror = (event) => this.die(new EmbeddingWorkerDied(`the embedding worker failed: ${reasonOf(event)}`));
    this.worker.onmessageerror = () => this.die(new EmbeddingWorkerDied("the embedding worker sent a message that could not be read"));
    this.exited = new Promise((resolve) =>
      this.worker.addEventListener("close", () => {
        this.die(new EmbeddingWorkerDied("the embedding worker exited"));
        resolve();
      }),
    );
    this.worker.onmessage = (event: MessageEvent<FromWorker>) => this.receive(event.data);
    const { dataDir, threads, batchTokens, model } = options;
    this.post({ type: "init", dataDir, threads, batchTokens, model });
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** True once the model is loaded and the worker takes jobs. */
  get started(): boolean {
    return this.loaded && !this.dead;
  }

  /** Bun's Worker keeps the process alive while referenced (its DOM type does not say so). */
  private hold(ref: boolean): void {
    const worker = this.worker as unknown as { ref(): void; unref(): void };
    if (ref) worker.ref();
    else worker.unref();
  }

  private post(message: ToWorker): void {
    this.worker.postMessage(message);
  }

  private receive(m: FromWorker): void {
    if (m.type === "ready") {
      // Idle, the worker does not keep the process alive; each run holds it (run()).
      this.hold(false);
      this.loaded = true;
      this.settleStart.resolve();
      return;
    }
    if (m.type === "failed") {
      this.die(new EmbeddingWorkerDied(`the embedding model could not be loaded: ${m.message}`, m.code));
      return;
    }
    const waiter = this.waiting.get(m.seq);
    if (!waiter) return;
    if (m.type === "batch") waiter.batch(m);
    if (m.type === "batch" && !m.done) return;
    this.waiting.delete(m.seq);
    if (this.waiting.size === 0) this.hold(false);
    if (m.type === "error") waiter.reject(new Error(m.message));
    else waiter.resolve();
  }

  /**
   * Embeds the texts of `job` still without a vector, filling them in batch by batch; `urgent`
   * (a question) runs before any further background batch.
   */
  async run(job: EmbedJob, urgent: boolean): Promise<void> {
    await this.ready;
    if (this.dead) throw this.dead;
    const left = job.texts.flatMap((_, i) => (job.vectors[i] ? [] : [i]));
    // At most RUN_CHARS a run, each text cut to EMBEDDED_TEXT_CHARS (D31).
    for (let from = 0; from < left.length; ) {
      let chars = 0;
      let to = from;
      while (to < left.length && (to === from || chars + Math.min(job.texts[left[to]!]!.length, EMBEDDED_TEXT_CHARS) <= RUN_CHARS))
        chars += Math.min(job.texts[left[to++]!]!.length, EMBEDDED_TEXT_CHARS);
      await this.runPart(job, left.slice(from, to), urgent);
      from = to;
    }
  }

  /** One run of the texts `given` (indices into the job's). */
  private async runPart(job: EmbedJob, given: number[], urgent: boolean): Promise<void> {
    if (this.dead) throw this.dead;
    const seq = ++this.seq;
    await new Promise<void>((resolve, reject) => {
      const batch = (m: Extract<FromWorker, { type: "batch" }>) => {
        for (const [k, local] of m.indices.entries()) job.set(given[local]!, m.vectors.slice(k * EMBEDDING_DIM, (k + 1) * EMBEDDING_DIM));
        this.options.onBatch?.({
          batches: m.runs ?? (m.indices.length ? 1 : 0),
          texts: m.indices.length,
          tokens: m.tokens,
          padded: m.padded,
        });
      };
      this.waiting.set(seq, { batch, resolve, reject });
      this.hold(true);
      this.post({ type: "run", seq, texts: given.map((i) => job.texts[i]!.slice(0, EMBEDDED_TEXT_CHARS)), urgent });
    });
  }

  /** Every vector of `texts`, in order, as a question: before any further background batch. */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const job = new EmbedJob(texts);
    await this.run(job, true);
    return job.vectors as Float32Array[];
  }

  /** Stops the worker (whatever waits on it is rejected); resolves once its thread has ended. */
  terminate(): Promise<void> {
    this.die(new EmbeddingWorkerDied("the embedding worker was stopped"), false);
    return this.exited;
  }

  private die(error: Error, unexpected = true): void {
    if (this.dead) return;
    this.dead = error;
    this.settleStart.reject(error);
    for (const waiter of this.waiting.values()) waiter.reject(error);
    this.waiting.clear();
    this.end();
    if (unexpected) this.options.onDeath?.(error);
  }

  /**
   * Asks the worker to exit, and ends its thread by force only if it does not. Ended by force
   * in the middle of a model run, the thread aborts the whole process (onnxruntime's binding
   * throws into a dying runtime: seen in the tests); asked, the worker exits between two runs.
   */
  private end(): void {
    this.hold(true);
    try {
      this.post({ type: "stop" });
    } catch {
      // Already gone.
    }
    const force = setTimeout(() => this.worker.terminate(), this.options.stopTimeoutMs ?? STOP_TIMEOUT_MS);
    void this.exited.then(() => {
      clearTimeout(force);
      this.hold(false);
    });
  }
}
