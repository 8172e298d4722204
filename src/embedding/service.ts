// Embeddings for the rest of the service. The model runs in a worker thread (worker.ts), loaded
// on first use and started again if it dies; this thread (the one answering requests) only
// tokenises for counting and keeps the queue: questions go to the worker at once and run before
// any further background batch (batches of ~1k tokens, so a question waits for one at most);
// background jobs go one at a time. Vectors are cached per owner (D25): under a keyed hash of
// the text with a key of that owner, sealed with their data key, deleted with them; one user's
// cache never tells another that a text was seen. The cache never makes a key: for an owner
// deleted meanwhile (or not yet keyed) it computes and stores nothing.
import type { Database } from "bun:sqlite";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { dropMappedPages } from "../limits/memory";
import type { Logger } from "../log";
import { embeddingModel, type ModelAsset } from "../native/assets";
import { RecordMemo } from "../retrieval/record-memo";
import { readThroughMapping } from "../store/database";
import type { Migration } from "../store/migrations";
import { isStorageError } from "../store/storage-errors";
import { type BatchStats, MAX_TOKENS } from "./embedder";
import { shippedTokenizer, type WordPieceTokenizer } from "./tokenizer";
import { EmbeddingWorker, EmbedJob, type WorkerOptions } from "./worker-client";

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
      db.exec(
        "CREATE TABLE embedding_cache (owner TEXT NOT NULL, key BLOB NOT NULL, vector BLOB NOT NULL, PRIMARY KEY (owner, key)) WITHOUT ROWID",
      );
    },
  },
  {
    // The model every stored vector was made with (its sha256). Left empty here: a folder from
    // before it holds vectors of a model nobody recorded (fp16), which adoptModel treats as another.
    id: "embedding-003-model",
    up(db) {
      db.exec("CREATE TABLE embedding_model (id INTEGER PRIMARY KEY CHECK (id = 1), sha256 TEXT NOT NULL)");
    },
  },
  {
    // When each vector was stored: an owner's cache keeps its newest CACHED_VECTORS_PER_OWNER.
    id: "embedding-004-cache-age",
    up(db) {
      db.exec("ALTER TABLE embedding_cache ADD COLUMN stored_at INTEGER NOT NULL DEFAULT 0");
      db.exec("CREATE INDEX embedding_cache_age ON embedding_cache (owner, stored_at)");
    },
  },
];

/**
 * Vectors an owner's cache keeps (~1.7 KB each sealed: ~170 MB): past it, the oldest stored go.
 * Rows change, questions are new every day: without a bound the cache grew with every text ever
 * embedded for the owner (the operator's is never deleted). A vector gone is computed again when needed.
 */
export const CACHED_VECTORS_PER_OWNER = 100_000;

/**
 * Vectors of live records' chunks kept in memory (cachedFor with a record's key): ~6 MB of floats.
 * 20 rows of 1 MB asked of a SQL table are ~280 chunks: each question read and opened every one
 * of their vectors again (~15 ms of the serving thread a question, D31).
 */
export const RECORD_VECTORS_KEPT = 4096;

/** A record's vectors, kept only once every chunk has one (sized past any budget otherwise: RecordMemo keeps nothing that large). */
const recordVectors = () =>
  new RecordMemo<Array<Float32Array | undefined>>(RECORD_VECTORS_KEPT, (vs) => (vs.every(Boolean) ? vs.length : Number.POSITIVE_INFINITY));

/** What an owner's cache is brought down to once past the bound: the work of counting and deleting is done seldom. */
const CACHE_TRIMMED_TO = 0.9;

/**
 * Makes `sha256` the model of this data folder's vectors. Vectors of two models do not compare
 * (fp16 and int8 differ by a cosine of ~0.007, other models entirely), so when another model (or
 * none recorded) made the stored ones, the cache is emptied and true returned: the caller has
 * every other stored vector forgotten in the same transaction, to be computed again.
 */
export function adoptModel(db: Database, sha256: string): boolean {
  const recorded = db.query<{ sha256: string }, []>("SELECT sha256 FROM embedding_model WHERE id = 1").get()?.sha256;
  if (recorded === sha256) return false;
  db.query("DELETE FROM embedding_cache").run();
  db.query("INSERT OR REPLACE INTO embedding_model (id, sha256) VALUES (1, ?)").run(sha256);
  return true;
}

export type Priority = "urgent" | "background";

/**
 * After the worker failed to start (the model could not be loaded: no room for its copies, D29),
 * jobs fail at once for this long instead of each starting another worker that copies ~67 MB
 * again; the first job after it tries again, so the model comes back by itself once space does.
 */
export const START_RETRY_MS = 30_000;

/** Quiet this long (no embedding job) before the database's pages read through its mapping are dropped from the process. */
export const IDLE_TRIM_MS = 2_000;
/** Background work ended this long ago (a connector's next batch comes within milliseconds): the database is read through its mapping again. */
export const MAPPED_AGAIN_MS = 1_000;

export interface EmbeddingOptions {
  /** onnxruntime's intra-op threads in the worker (CORPUS_EMBED_THREADS). */
  threads?: number;
  /** Padded tokens per model run (embedder.ts BATCH_TOKENS). */
  batchTokens?: number;
  log?: Logger;
  /** The model the worker runs (the shipped one unless given). */
  model?: ModelAsset;
  /** Tests: a broken worker entry, a short start timeout. */
  worker?: Pick<WorkerOptions, "entry" | "startTimeoutMs" | "stopTimeoutMs">;
  /** Vectors an owner's cache keeps (CACHED_VECTORS_PER_OWNER). */
  cachedPerOwner?: number;
  /** When a vector is stored (its age in the cache). */
  now?: () => number;
  /** Tests: how long after background work before the database is read through its mapping again (MAPPED_AGAIN_MS). */
  mappedAgainMs?: number;
  /** Tests: how long after a failed start before another is tried (START_RETRY_MS). */
  startRetryMs?: number;
}

/** A background job no longer wanted (what asked for it is gone, or its owner was deleted): not run. */
export class EmbeddingCancelled extends Error {
  constructor() {
    super("the embedding job is no longer wanted");
  }
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
  /** The owner's stores when it was queued: unchanged when its turn comes, nothing new can be in the cache. */
  stores: number;
  /** A question sent to the worker. */
  started?: boolean;
  /** The owner's generation when it was queued: a deletion of the owner since, and nothing is stored. */
  generation: number;
  /**
   * Whoever asked for it, and those who waited on it for a text of theirs: it runs and stores while
   * one of them still wants it (undefined: always; a function is false once what asked is gone).
   */
  wanted: Array<(() => boolean) | undefined>;
  resolve: (v: Float32Array[]) => void;
  reject: (e: unknown) => void;
}

export class EmbeddingService {
  private worker?: EmbeddingWorker;
  /** The last worker's failure to start, and when: jobs fail with it until START_RETRY_MS has passed. */
  private startFailure?: { error: unknown; at: number };
  private tokenizerInstance?: WordPieceTokenizer;
  private readonly urgent: Job[] = [];
  private readonly background: Job[] = [];
  /** Questions in the worker, and the background loop. */
  private readonly active = new Set<Promise<void>>();
  private backgroundLoop?: Promise<void>;
  /** The background job in the worker. */
  private current?: Job;
  private closed = false;
  private readonly idleWaiters: Array<() => void> = [];
  private readonly queuedWaiters: Array<() => void> = [];
  private idleTrim?: ReturnType<typeof setTimeout>;
  /** Background work under way, or ended less than MAPPED_AGAIN_MS ago: the database is read through calls, not its mapping. */
  private unmapped = false;
  private mapAgain?: ReturnType<typeof setTimeout>;
  /** Each text of a background job not settled yet, by owner and text: its vector to come. */
  private readonly queuedTexts = new Map<string, { vector: Promise<Float32Array>; job: Job }>();
  private readonly storeCounts = new Map<string, number>();
  /** Vectors each owner's cache holds, at most (counted exactly once past the bound). */
  private readonly cachedCounts = new Map<string, number>();
  /** Deletions of each owner since start (a job remembers the one it was queued in). */
  private readonly generations = new Map<string, number>();
  /** Live records' vectors, by owner, asker and record, while their chunks' texts are the same (cachedFor). */
  private recordVectors = recordVectors();
  /** Every model run since start (all workers): the padding they carried is `padded - tokens`. */
  readonly stats: BatchStats = { batches: 0, texts: 0, tokens: 0, padded: 0 };

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    /** Where the executable keeps its checked copy of onnxruntime. */
    private readonly dataDir: string,
    private readonly options: EmbeddingOptions = {},
  ) {}

  /** Texts the model embedded since start, by priority: questions (urgent) and chunks read in the background (metrics, D35: chunks per second). */
  readonly embeddedTexts: Record<Priority, number> = { urgent: 0, background: 0 };

  /** Texts waiting for the model: those of the questions' and the background's jobs not yet run (metrics, D35). */
  get queueDepth(): number {
    let texts = 0;
    for (const job of this.urgent) texts += job.work.left;
    for (const job of this.background) texts += job.work.left;
    return texts;
  }

  /** The model the worker runs: its vectors are compared only with vectors of the same model (asked/classify.ts). */
  get model(): ModelAsset {
    return this.options.model ?? embeddingModel;
  }

  get tokenizer(): WordPieceTokenizer {
    this.tokenizerInstance ??= shippedTokenizer();
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
      const failed = this.startFailure;
      if (failed && performance.now() - failed.at < (this.options.startRetryMs ?? START_RETRY_MS)) return Promise.reject(failed.error);
      const started = performance.now();
      const retryMs = this.options.startRetryMs ?? START_RETRY_MS;
      let ready = false;
      let worker: EmbeddingWorker;
      try {
        worker = new EmbeddingWorker({
          dataDir: this.dataDir,
          threads: this.options.threads,
          batchTokens: this.options.batchTokens,
          model: this.options.model,
          ...this.options.worker,
          onBatch: (b) => {
            this.stats.batches += b.batches;
            this.stats.texts += b.texts;
            this.stats.tokens += b.tokens;
            this.stats.padded += b.padded;
          },
          onDeath: (error) =>
            ready
              ? this.options.log?.error("embedding worker stopped; its jobs failed, the next job starts another", { error: error.message })
              : this.options.log?.error("the embedding model could not be loaded: questions are answered by their words until it is", {
                  error: error.message,
                  retry_in_seconds: retryMs / 1000,
                }),
        });
      } catch (error) {
        // No thread to start the model in (a worker cannot be made): the same state as a failed start.
        this.startFailure = { error, at: performance.now() };
        return Promise.reject(error);
      }
      worker.ready.then(
        () => {
          ready = true;
          this.startFailure = undefined;
          this.options.log?.info("embedding worker ready", {
            threads: this.options.threads ?? 0,
            seconds: Math.round(performance.now() - started) / 1000,
          });
        },
        (error) => {
          if (!this.closed) this.startFailure = { error, at: performance.now() };
        },
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
    // HMAC-SHA256, as node:crypto's createHmac computes it, at a seventh of its cost (it runs for
    // every chunk a question meets while a source is still embedding).
    return (text) => new Bun.CryptoHasher("sha256", secret).update(text).digest().subarray(0, 16);
  }

  /**
   * Vectors of `owner`'s cache for `texts`, and where it has none, of `asker`'s: an operator's
   * records embedded ahead are the operator's, those a user's questions embedded are the user's (D25).
   * `record` (its recordKey: a live SQL row's or mail's chunks) keeps them in memory once every
   * text has one, for this owner and asker alone, while the texts are the same (D31).
   */
  cachedFor(owner: string, asker: string, texts: string[], record?: string): Array<Float32Array | undefined> {
    if (record !== undefined)
      return this.recordVectors.get(`${record}\u0000${asker}`, texts.join("\u0000"), () => this.cachedFor(owner, asker, texts));
    const own = this.cached(owner, texts);
    if (owner === asker || own.every(Boolean)) return own;
    const asked = this.cached(asker, texts);
    return own.map((v, k) => v ?? asked[k]);
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

  /** How many times `owner` was deleted (since start). */
  private generationOf(owner: string): number {
    return this.generations.get(owner) ?? 0;
  }

  /** False once the job's owner was deleted since it was queued, or what asked for it is gone. */
  private stillWanted(job: Job): boolean {
    return job.generation === this.generationOf(job.owner) && job.wanted.some((w) => w === undefined || w());
  }

  /** How many times vectors were stored for `owner` (since start). */
  private storesOf(owner: string): number {
    return this.storeCounts.get(owner) ?? 0;
  }

  private store(owner: string, texts: string[], vectors: Float32Array[]): void {
    const keyOf = this.keyer(owner);
    if (!keyOf || texts.length === 0) return;
    this.storeCounts.set(owner, this.storesOf(owner) + 1);
    this.storeTransaction ??= this.db.transaction(this.storeRows.bind(this));
    this.storeTransaction(owner, texts, vectors, keyOf, (this.options.now ?? Date.now)());
  }

  /**
   * store's transaction, made once: bun:sqlite's `transaction` builds a new wrapper (its begin and
   * commit in each mode, defined as properties) on every call, which was 15% of the serving
   * thread's embedding work for a question (a new question stores its vector).
   */
  private storeTransaction?: (owner: string, texts: string[], vectors: Float32Array[], keyOf: (text: string) => Buffer, at: number) => void;

  private storeRows(owner: string, texts: string[], vectors: Float32Array[], keyOf: (text: string) => Buffer, at: number): void {
    const put = this.db.query("INSERT OR REPLACE INTO embedding_cache (owner, key, vector, stored_at) VALUES (?, ?, ?, ?)");
    texts.forEach((t, i) => {
      const key = keyOf(t);
      put.run(owner, key, this.keys.sealFor(owner, bytesOf(vectors[i]!), `embedding-cache/${key.toString("hex")}`, false), at);
    });
    this.keepWithinBound(owner, texts.length);
  }

  /** After `added` vectors were stored for `owner`: past the bound, the oldest go (down to CACHE_TRIMMED_TO of it). */
  private keepWithinBound(owner: string, added: number): void {
    const bound = this.options.cachedPerOwner ?? CACHED_VECTORS_PER_OWNER;
    // At most this many (a vector stored again replaces its row): counted exactly only past the bound.
    let held = (this.cachedCounts.get(owner) ?? this.rowsOf(owner)) + added;
    if (held > bound) {
      held = this.rowsOf(owner);
      const excess = held - Math.floor(bound * CACHE_TRIMMED_TO);
      if (held > bound && excess > 0) {
        this.db
          .query(
            "DELETE FROM embedding_cache WHERE owner = ?1 AND key IN (SELECT key FROM embedding_cache WHERE owner = ?1 ORDER BY stored_at LIMIT ?2)",
          )
          .run(owner, excess);
        held -= excess;
      }
    }
    this.cachedCounts.set(owner, held);
  }

  forOwner(owner: string): OwnerEmbeddings {
    return { embed: (texts, priority) => this.embed(owner, texts, priority) };
  }

  /** The cached vectors of `owner` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts; the cache's bound). */
  rowsOf(owner: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM embedding_cache WHERE owner = ?1) AS n").get(owner)!.n;
  }

  /**
   * Every cached vector of `owner` (D13); a job of theirs queued or running now stores nothing,
   * even under a key they are given later (D25: nothing of theirs is written after).
   */
  deleteOwner(owner: string): number {
    this.storeCounts.delete(owner);
    this.cachedCounts.delete(owner);
    // Kept by owner and asker together: all let go (a deletion is rare, reading them again is not).
    this.recordVectors = recordVectors();
    // Only while a job of theirs waits or runs: it alone needs telling (then let go with it).
    if (this.hasJobsOf(owner)) this.generations.set(owner, this.generationOf(owner) + 1);
    else this.generations.delete(owner);
    for (const key of this.queuedTexts.keys()) if (key.startsWith(queuedKey(owner, ""))) this.queuedTexts.delete(key);
    return this.db.query("DELETE FROM embedding_cache WHERE owner = ?").run(owner).changes;
  }

  /**
   * Embeds every text, from `owner`'s cache where it can, storing what it computed there (once
   * the owner has a key); `urgent` jobs (a question) run before background ones.
   */
  async embed(owner: string, texts: string[], priority: Priority = "urgent", wanted?: () => boolean): Promise<Float32Array[]> {
    if (this.closed) throw new EmbeddingClosed();
    const computed = new Map<string, Promise<Float32Array>>();
    // In the background, a text already queued for this owner is waited for, not looked up or
    // queued again: questions queue the chunks of the records they meet, often the same ones,
    // and the queue stays as long as the distinct texts waiting (a question's own text is never
    // held back behind background work).
    if (priority === "background") {
      for (const t of texts) {
        const queued = this.queuedTexts.get(queuedKey(owner, t));
        if (!queued) continue;
        computed.set(t, queued.vector);
        // Wanted by this caller too: the job runs and stores while either is.
        if (!queued.job.wanted.includes(wanted)) queued.job.wanted.push(wanted);
      }
    }
    const rest = computed.size ? texts.filter((t) => !computed.has(t)) : texts;
    const found = this.cached(owner, rest);
    const cachedVectors = new Map<string, Float32Array>();
    const fresh = new Set<string>();
    rest.forEach((t, i) => {
      if (found[i]) cachedVectors.set(t, found[i]!);
      else fresh.add(t);
    });
    if (fresh.size) {
      const work = new EmbedJob([...fresh]);
      let queuedJob: Job | undefined;
      const job = new Promise<Float32Array[]>((resolve, reject) => {
        queuedJob = {
          owner,
          work,
          priority,
          stores: this.storesOf(owner),
          generation: this.generationOf(owner),
          wanted: [wanted],
          resolve,
          reject,
        };
        (priority === "urgent" ? this.urgent : this.background).push(queuedJob);
        for (const waiter of this.queuedWaiters.splice(0)) waiter();
        this.drain();
      });
      work.texts.forEach((t, i) => {
        const vector = job.then((vs) => vs[i]!);
        // Awaited below (the failure reaches the caller); marked handled for when an earlier one fails first.
        vector.catch(() => {});
        computed.set(t, vector);
        if (priority === "urgent") return;
        const key = queuedKey(owner, t);
        const entry = { vector, job: queuedJob! };
        this.queuedTexts.set(key, entry);
        // Its own entry only: after a deletion of the owner, the text may be queued anew.
        const forget = () => this.queuedTexts.get(key) === entry && this.queuedTexts.delete(key);
        void job.then(forget, forget);
      });
    }
    for (const [t, v] of computed) cachedVectors.set(t, await v);
    return texts.map((t) => cachedVectors.get(t)!);
  }

  /** Sends every new question to the worker at once, and keeps one background job there. */
  private drain(): void {
    for (const job of this.urgent) {
      if (job.started) continue;
      job.started = true;
      this.track(this.runQuestion(job));
    }
    if (!this.backgroundLoop && this.background.length) {
      clearTimeout(this.mapAgain);
      if (!this.unmapped) this.readMapped(false);
      this.backgroundLoop = this.runBackground().finally(() => {
        this.backgroundLoop = undefined;
        this.mapWhenQuiet();
      });
      this.track(this.backgroundLoop);
    }
  }

  private track(work: Promise<void>): void {
    this.active.add(work);
    void work.finally(() => {
      this.active.delete(work);
      // A macrotask later: what the last jobs' callers did with their vectors has run too.
      if (this.pending === 0) {
        for (const resolve of this.idleWaiters.splice(0)) setImmediate(resolve);
        this.trimWhenIdle();
      }
    });
  }

  /**
   * Once no job has come for IDLE_TRIM_MS, the database's pages read through its mapping are
   * dropped from the process (limits/memory.ts dropMappedPages): after a question, or once a
   * folder is embedded, the server's RSS goes back to what it holds. No collection here (D31): a
   * full one of this thread's heap, with the C heap's trim, held every request ~44 ms; the memory
   * a question or a folder's embedding leaves is the embedding worker's, which collects and trims
   * on its own thread once idle (worker.ts), and this thread's heap is left to its own collector.
   */
  private trimWhenIdle(): void {
    clearTimeout(this.idleTrim);
    if (this.closed) return;
    this.idleTrim = setTimeout(() => {
      if (this.pending > 0 || this.closed) return;
      dropMappedPages();
    }, IDLE_TRIM_MS);
    this.idleTrim.unref?.();
  }

  /**
   * The database read through its mapping again once no background work has come for
   * MAPPED_AGAIN_MS (readThroughMapping: off while it runs). Questions do not hold it off: a
   * server answering one after another is read through its mapping, 7 ms faster each.
   */
  private mapWhenQuiet(): void {
    clearTimeout(this.mapAgain);
    if (this.closed) return;
    this.mapAgain = setTimeout(() => {
      if (this.backgroundLoop || this.closed || !this.unmapped) return;
      this.readMapped(true);
    }, this.options.mappedAgainMs ?? MAPPED_AGAIN_MS);
    this.mapAgain.unref?.();
  }

  /** A database that cannot switch (closed meanwhile) costs a log line, never a job. */
  private readMapped(mapped: boolean): void {
    try {
      readThroughMapping(this.db, mapped);
      this.unmapped = !mapped;
    } catch (error) {
      this.options.log?.warning("database mapping not switched", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** A question's job: in the worker before any further background batch, so it waits for one at most. */
  private async runQuestion(job: Job): Promise<void> {
    try {
      const worker = await this.load();
      this.finish(job, await worker.embed(job.work.texts));
    } catch (error) {
      this.remove(job);
      job.reject(error);
    }
  }

  /** Background jobs one after another, each whole in the worker (its batches run back to back there). */
  private async runBackground(): Promise<void> {
    for (;;) {
      this.current = undefined;
      if (this.closed) this.refuseWaiting();
      const job = this.background[0];
      if (!job) return;
      this.current = job;
      try {
        if (!this.stillWanted(job)) throw new EmbeddingCancelled();
        const worker = await this.load();
        // Checked again when its turn comes: the owner's cache may have what it needs by now.
        if (!job.fromCache && this.storesOf(job.owner) !== job.stores) this.fillFromCache(job);
        if (job.work.left > 0) await worker.run(job.work, false);
        this.finish(job, job.work.vectors as Float32Array[]);
      } catch (error) {
        this.remove(job);
        job.reject(this.closed ? new EmbeddingClosed() : error);
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
    // Asked before the job is let go: the owner's generation goes with their last job.
    const wanted = this.stillWanted(job);
    this.remove(job);
    const fresh = job.work.texts.flatMap((_, i) => (job.fromCache?.has(i) ? [] : [i]));
    this.embeddedTexts[job.priority] += fresh.length;
    try {
      // Given to who asked, never kept for an owner deleted since, or for what is gone.
      if (wanted)
        this.store(
          job.owner,
          fresh.map((i) => job.work.texts[i]!),
          fresh.map((i) => vectors[i]!),
        );
    } catch (error) {
      // The cache saves work, nothing more: on a full disk the vectors are still given (D29).
      if (!isStorageError(error)) throw error;
    }
    job.resolve(vectors);
  }

  private remove(job: Job): void {
    const queue = job.priority === "urgent" ? this.urgent : this.background;
    const at = queue.indexOf(job);
    if (at >= 0) queue.splice(at, 1);
    // The owner's last job since a deletion: its generation is no longer needed (none is older).
    if (this.generations.has(job.owner) && !this.hasJobsOf(job.owner)) this.generations.delete(job.owner);
  }

  /** A job of `owner` waits or runs. */
  private hasJobsOf(owner: string): boolean {
    return this.urgent.some((j) => j.owner === owner) || this.background.some((j) => j.owner === owner);
  }

  /** Resolves once a job waits or runs (tests that act while one does, instead of polling). */
  queued(): Promise<void> {
    if (this.pending > 0) return Promise.resolve();
    return new Promise((resolve) => this.queuedWaiters.push(resolve));
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
   * Shutdown: background jobs not started are refused, questions in the worker are answered,
   * then the worker is ended (the background job in it is refused, what it computed is lost; a
   * folder resumes on its next scan) and its threads have stopped. Later calls are refused.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.idleTrim);
    clearTimeout(this.mapAgain);
    this.refuseWaiting();
    const questions = [...this.active].filter((work) => work !== this.backgroundLoop);
    await Promise.all(questions);
    const worker = this.worker;
    this.worker = undefined;
    await worker?.terminate();
    await this.backgroundLoop;
  }

  /** Rejects every background job but the one in the worker. */
  private refuseWaiting(): void {
    for (const job of [...this.background]) {
      if (job === this.current) continue;
      this.remove(job);
      job.reject(new EmbeddingClosed());
    }
  }
}

const queuedKey = (owner: string, text: string) => `${owner}\u0000${text}`;
const bytesOf = (v: Float32Array) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

/** One owner's view of the service: what connectors indexing that owner's sources use. */
export interface OwnerEmbeddings {
  embed(texts: string[], priority?: Priority): Promise<Float32Array[]>;
}
