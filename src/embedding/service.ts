// Embeddings for the rest of the service. The model runs in a worker thread (worker.ts), loaded
// on first use and started again if it dies; the request thread only tokenises for counting
// and keeps the queue: one model run at a time, a question's job before any background job,
// and background jobs one batch (~1k tokens) per step, so a question waits at most one batch. Vectors are cached per owner (D25): under a
// keyed hash of the text with a key of that owner, sealed with their data key, deleted with
// them; one user's cache never tells another that a text was seen. The cache never makes a
// key: for an owner deleted meanwhile (or not yet keyed) it computes and stores nothing.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { assets } from "../native/assets";
import type { Migration } from "../store/migrations";
import type { Logger } from "../log";
import { MAX_TOKENS, type BatchStats } from "./embedder";
import { EmbeddingWorker, EmbedJob, type WorkerOptions } from "./worker-client";
import { WordPieceTokenizer, type TokenizerFile } from "./tokenizer";

export const embeddingMigrations: Migration[] = [
  {
    id: "embedding-001-cache",
    up(db) {
      db.exec("CREATE TABLE embedding_cache (key BLOB PRIMARY KEY, vector BLOB NOT NULL) WITHOUT ROWID");
    },
  },
  {
    // The first cache was one table of plain vectors for everybody: gone, freed pages overwritten.
    id: "embedding-002-cache-per-owner",
    up(db) {
      db.exec("DROP TABLE embedding_cache");
      db.exec("CREATE TABLE embedding_cache (owner TEXT NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (owner, key)) WITHOUT ROWID");
    },
  },
];

export type Priority = "urgent" | "background";

export interface EmbeddingOptions {
  /** onnxruntime's intra-op threads in the worker (CORPUS_EMBED_THREADS). */
  threads?: number;
  /** Padded tokens per model run (embedder.ts BATCH_TOKENS). */
  batchTokens?: number;
  log?: Logger;
  /** Tests: a broken worker entry, a short start timeout. */
  worker?: Pick<WorkerOptions, "entry" | "startTimeoutMs">;
}

/** Refused once the service is closing (shutdown). */
export class EmbeddingClosed extends Error {
  constructor() {
    super("the embedding service is shut down");
  }
}

interface Job {
  owner: string;
  work: EmbedJob;
  priority: Priority;
  /** Indices found in the owner's cache when the job's turn came (computed meanwhile by another job). */
  fromCache?: Set<number>;
  resolve: (v: Float32Array[]) => void;
  reject: (e: unknown) => void;
}

export class EmbeddingService {
  private worker?: EmbeddingWorker;
  private tokenizerInstance?: WordPieceTokenizer;
  private readonly urgent: Job[] = [];
  private readonly background: Job[] = [];
  private running?: Promise<void>;
  /** The job of the model run under way. */
  private current?: Job;
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];
  /** Every model run since start (all workers): the padding they carried is `padded - tokens`. */
  readonly stats: BatchStats = { batches: 0, texts: 0, tokens: 0, padded: 0 };

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    /** Where the executable keeps its checked copy of onnxruntime. */
    private readonly dataDir: string,
    private readonly options: EmbeddingOptions = {},
  ) {}

  get tokenizer(): WordPieceTokenizer {
    this.tokenizerInstance ??= new WordPieceTokenizer(JSON.parse(readFileSync(assets.tokenizerFile, "utf8")) as TokenizerFile);
    return this.tokenizerInstance;
  }

  /** Word-piece tokens of `text` (D12 usage). */
  countTokens(text: string): number {
    return this.tokenizer.count(text);
  }

  get maxTokens(): number {
    return MAX_TOKENS;
  }

  /** Loads the model now (the server warms it after it starts listening). */
  warm(): Promise<unknown> {
    return this.load();
  }

  /** The running worker, started (again) when there is none or it died. */
  private load(): Promise<EmbeddingWorker> {
    if (this.closed) return Promise.reject(new EmbeddingClosed());
    if (!this.worker?.alive) {
      const started = performance.now();
      const worker = new EmbeddingWorker({
        dataDir: this.dataDir,
        threads: this.options.threads,
        batchTokens: this.options.batchTokens,
        ...this.options.worker,
        onBatch: (b) => {
          this.stats.batches += b.batches;
          this.stats.texts += b.texts;
          this.stats.tokens += b.tokens;
          this.stats.padded += b.padded;
        },
        onDeath: (error) => this.options.log?.error("embedding worker stopped; its jobs failed, the next job starts another", { error: error.message }),
      });
      worker.ready.then(
        () => this.options.log?.info("embedding worker ready", { threads: this.options.threads ?? 0, seconds: Math.round(performance.now() - started) / 1000 }),
        () => {},
      );
      this.worker = worker;
    }
    const worker = this.worker;
    return worker.ready.then(() => worker);
  }

  /** The owner's cache key of a text; undefined while the owner has no data key (the cache never makes one). */
  private keyer(owner: string): ((text: string) => Buffer) | undefined {
    let secret: Buffer;
    try {
      secret = this.keys.derive(owner, "embedding-cache", false);
    } catch (error) {
      if (error instanceof NoUserKey) return undefined;
      throw error;
    }
    return (text) => createHmac("sha256", secret).update(text).digest().subarray(0, 16);
  }

  /** Vectors of `owner`'s cache for `texts` (undefined where none). */
  cached(owner: string, texts: string[]): Array<Float32Array | undefined> {
    const keyOf = this.keyer(owner);
    if (!keyOf) return texts.map(() => undefined);
    const q = this.db.query<{ vector: Uint8Array }, [string, Buffer]>("SELECT vector FROM embedding_cache WHERE owner = ? AND key = ?");
    return texts.map((t) => {
      const key = keyOf(t);
      const row = q.get(owner, key);
      if (!row) return undefined;
      const plain = this.keys.openFor(owner, row.vector, `embedding-cache/${key.toString("hex")}`);
      return new Float32Array(plain.buffer.slice(plain.byteOffset, plain.byteOffset + plain.byteLength));
    });
  }

  private store(owner: string, texts: string[], vectors: Float32Array[]): void {
    const keyOf = this.keyer(owner);
    if (!keyOf) return;
    const put = this.db.query("INSERT OR REPLACE INTO embedding_cache (owner, key, vector) VALUES (?, ?, ?)");
    this.db.transaction(() =>
      texts.forEach((t, i) => {
        const key = keyOf(t);
        put.run(owner, key, this.keys.sealFor(owner, bytesOf(vectors[i]!), `embedding-cache/${key.toString("hex")}`, false));
      }),
    )();
  }

  forOwner(owner: string): OwnerEmbeddings {
    return { embed: (texts, priority) => this.embed(owner, texts, priority) };
  }

  /** Every cached vector of `owner` (D13). */
  deleteOwner(owner: string): number {
    return this.db.query("DELETE FROM embedding_cache WHERE owner = ?").run(owner).changes;
  }

  /**
   * Embeds every text, from `owner`'s cache where it can, storing what it computed there (once
   * the owner has a key); `urgent` jobs (a question) run before background ones.
   */
  async embed(owner: string, texts: string[], priority: Priority = "urgent"): Promise<Float32Array[]> {
    if (this.closed) throw new EmbeddingClosed();
    const found = this.cached(owner, texts);
    const missing = [...new Set(texts.filter((_, i) => !found[i]))];
    if (missing.length === 0) return found as Float32Array[];
    const vectors = await new Promise<Float32Array[]>((resolve, reject) => {
      (priority === "urgent" ? this.urgent : this.background).push({ owner, work: new EmbedJob(missing), priority, resolve, reject });
      this.drain();
    });
    const computed = new Map(missing.map((t, i) => [t, vectors[i]!]));
    return texts.map((t, i) => found[i] ?? computed.get(t)!);
  }

  private drain(): void {
    this.running ??= this.run().finally(() => {
      this.running = undefined;
      // A macrotask later: what the last jobs' callers did with their vectors has run too.
      if (this.pending === 0) for (const resolve of this.idleWaiters.splice(0)) setImmediate(resolve);
    });
  }

  /**
   * Runs jobs until none is left: before each model run the oldest question goes first, so a
   * question waits for one background batch at most. A question's job runs whole (a question
   * is one text); a background job, one batch per step.
   */
  private async run(): Promise<void> {
    for (;;) {
      this.current = undefined;
      if (this.closed) this.refuseWaiting();
      const job = this.urgent[0] ?? this.background[0];
      if (!job) return;
      this.current = job;
      let worker: EmbeddingWorker | undefined;
      try {
        worker = await this.load();
        if (job.priority === "urgent") {
          this.finish(job, await worker.embed(job.work.texts));
          continue;
        }
        // Checked again when its turn comes: questions queue the chunks of records they meet
        // (retrieval/search.ts), often the same ones, and the connector's own jobs follow.
        if (!job.fromCache) this.fillFromCache(job);
        if (job.work.left > 0) await worker.step(job.work);
        if (job.work.left === 0) this.finish(job, job.work.vectors as Float32Array[]);
      } catch (error) {
        worker?.forget(job.work);
        this.remove(job);
        job.reject(error);
      }
    }
  }

  private fillFromCache(job: Job): void {
    job.fromCache = new Set();
    this.cached(job.owner, job.work.texts).forEach((vector, i) => {
      if (!vector || job.work.vectors[i]) return;
      job.work.set(i, vector);
      job.fromCache!.add(i);
    });
  }

  /**
   * Stores what the job computed in its owner's cache. Never makes a key: a question computed
   * while its user was being deleted stores nothing; a new user's first question is cached once
   * an answer made their key.
   */
  private finish(job: Job, vectors: Float32Array[]): void {
    this.remove(job);
    const fresh = job.work.texts.flatMap((_, i) => (job.fromCache?.has(i) ? [] : [i]));
    this.store(
      job.owner,
      fresh.map((i) => job.work.texts[i]!),
      fresh.map((i) => vectors[i]!),
    );
    job.resolve(vectors);
  }

  private remove(job: Job): void {
    const queue = job.priority === "urgent" ? this.urgent : this.background;
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
  }

  /** Resolves once no job is waiting or running (shutdown, and tests that must see the outcome). */
  idle(): Promise<void> {
    if (this.pending === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Jobs waiting or running (for progress reports). */
  get pending(): number {
    return this.urgent.length + this.background.length;
  }

  /**
   * Shutdown: jobs not started are refused, the model run under way settles (a question's
   * vectors are stored), then the worker thread is ended. A model still loading is not waited
   * for: its job is refused too. Later calls are refused.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.refuseWaiting();
    if (this.worker && !this.worker.started) await this.worker.terminate();
    await this.running;
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
  }

  /** Rejects every job but the one running (all of them once none runs). */
  private refuseWaiting(): void {
    for (const job of [...this.urgent, ...this.background]) {
      if (job === this.current) continue;
      this.remove(job);
      job.reject(new EmbeddingClosed());
    }
  }
}

const bytesOf = (v: Float32Array) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

/** One owner's view of the service: what connectors indexing that owner's sources use. */
export interface OwnerEmbeddings {
  embed(texts: string[], priority?: Priority): Promise<Float32Array[]>;
}
