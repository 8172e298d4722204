// The request thread's handle on the embedding worker (worker.ts): starts it, sends it one
// step at a time, and turns its death (an error, an exit, a start that never finishes) into
// rejected promises, never a hang. A dead client stays dead; the service starts another.
import { join } from "node:path";
import { EMBEDDING_DIM, type BatchStats, type EmbedderOptions } from "./embedder";
import type { FromWorker, ToWorker } from "./protocol";

/**
 * The worker's entry inside the executable, relative to the executable's root; scripts/build.ts
 * sets it and compiles worker.ts as a second entrypoint. `new Worker(new URL(…, import.meta.url))`
 * hung there without a word; a plain relative name works. Under `bun run`, a path beside this file.
 */
declare const CORPUS_EMBED_WORKER: string | undefined;
export const EMBED_WORKER_DEFINE = "CORPUS_EMBED_WORKER";
const workerEntry = () => (typeof CORPUS_EMBED_WORKER === "string" ? CORPUS_EMBED_WORKER : join(import.meta.dir, "worker.ts"));

/** Loading the model takes ~0.5-3 s on a busy two-core machine; a start past this is a failure. */
export const WORKER_START_TIMEOUT_MS = 60_000;

export interface WorkerOptions extends EmbedderOptions {
  /** The worker's entry (tests start broken ones). */
  entry?: string;
  startTimeoutMs?: number;
  /** Called once, when the worker died or failed to start. */
  onDeath?: (error: Error) => void;
  /** Called after each model run. */
  onBatch?: (batch: BatchStats) => void;
}

/** Texts embedded over one or more steps; `vectors` fill in as the worker's batches return. */
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

export class EmbeddingWorkerDied extends Error {}

/** The error's own line: Bun's message about an uncaught error in a worker also quotes the source around it. */
function reasonOf(event: ErrorEvent): string {
  const text = event.message || "unknown error";
  return /^error: (.+)$/m.exec(text)?.[1] ?? text.split("\n")[0]!;
}

type Waiter = { resolve: (m: Extract<FromWorker, { type: "batch" }>) => void; reject: (e: Error) => void };

export class EmbeddingWorker {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  /** For each job the worker holds: which of the job's texts it was given, in its order. */
  private readonly registered = new Map<number, number[]>();
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
    this.worker = new Worker(options.entry ?? workerEntry());
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
    const { dataDir, threads, batchTokens } = options;
    this.post({ type: "init", dataDir, threads, batchTokens });
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
      // Idle, the worker does not keep the process alive; each request holds it (send()).
      this.hold(false);
      this.loaded = true;
      this.settleStart.resolve();
      return;
    }
    if (m.type === "failed") {
      this.die(new EmbeddingWorkerDied(`the embedding model could not be loaded: ${m.message}`));
      return;
    }
    const waiter = this.waiting.get(m.seq);
    if (!waiter) return;
    this.waiting.delete(m.seq);
    if (this.waiting.size === 0) this.hold(false);
    if (m.type === "error") waiter.reject(new Error(m.message));
    else waiter.resolve(m);
  }

  private send(job: number, texts?: string[]): Promise<Extract<FromWorker, { type: "batch" }>> {
    if (this.dead) return Promise.reject(this.dead);
    const seq = ++this.seq;
    return new Promise((resolve, reject) => {
      this.waiting.set(seq, { resolve, reject });
      this.hold(true);
      this.post({ type: "step", seq, job, texts });
    });
  }

  /** Runs the next model run (one batch) of `job`, filling in its vectors. */
  async step(job: EmbedJob): Promise<void> {
    await this.ready;
    let given = this.registered.get(job.id);
    let texts: string[] | undefined;
    if (!given) {
      // Only what is still missing: after a restart, what an earlier worker computed is kept.
      given = job.texts.flatMap((_, i) => (job.vectors[i] ? [] : [i]));
      texts = given.map((i) => job.texts[i]!);
      this.registered.set(job.id, given);
    }
    let reply: Extract<FromWorker, { type: "batch" }>;
    try {
      reply = await this.send(job.id, texts);
    } catch (error) {
      this.registered.delete(job.id);
      throw error;
    }
    reply.indices.forEach((local, k) => job.set(given[local]!, reply.vectors.slice(k * EMBEDDING_DIM, (k + 1) * EMBEDDING_DIM)));
    if (reply.done) this.registered.delete(job.id);
    this.options.onBatch?.({ batches: reply.indices.length ? 1 : 0, texts: reply.indices.length, tokens: reply.tokens, padded: reply.padded });
  }

  /** Every vector of `texts`, in order (all of its batches, one after another). */
  async embed(texts: string[]): Promise<Float32Array[]> {
    const job = new EmbedJob(texts);
    try {
      while (job.left > 0) await this.step(job);
    } finally {
      this.forget(job);
    }
    return job.vectors as Float32Array[];
  }

  /** Drops what the worker keeps of `job` (it failed, or it is done). */
  forget(job: EmbedJob): void {
    if (!this.registered.delete(job.id) || this.dead) return;
    this.post({ type: "drop", job: job.id });
  }

  /** Stops the worker now (whatever waits on it is rejected); resolves once its thread has ended. */
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
    this.registered.clear();
    this.worker.terminate();
    if (unexpected) this.options.onDeath?.(error);
  }
}
