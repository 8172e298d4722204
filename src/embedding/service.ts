// Embeddings for the rest of the service: the model loaded once, on first use; one model run
// at a time, questions before background work. Vectors are cached per owner (D25): under a
// keyed hash of the text with a key of that owner, sealed with their data key, deleted with
// them; one user's cache never tells another that a text was seen. The cache never makes a
// key: for an owner deleted meanwhile (or not yet keyed) it computes and stores nothing.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { NoUserKey, type UserKeys } from "../crypto/user-keys";
import { assets } from "../native/assets";
import type { Migration } from "../store/migrations";
import { loadEmbedder, MAX_TOKENS, type Embedder } from "./embedder";
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

/** Texts per model run in the background: small, so a question never waits long. */
const BACKGROUND_BATCH = 8;

type Job = { texts: string[]; resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void };

export class EmbeddingService {
  private model?: Promise<Embedder>;
  private tokenizerInstance?: WordPieceTokenizer;
  private readonly urgent: Job[] = [];
  private readonly background: Job[] = [];
  private running = false;
  private readonly idleWaiters: Array<() => void> = [];

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    /** Where the executable keeps its checked copy of onnxruntime. */
    private readonly dataDir: string,
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

  private load(): Promise<Embedder> {
    this.model ??= loadEmbedder({ dataDir: this.dataDir, threads: 0 });
    return this.model;
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
    const found = this.cached(owner, texts);
    const missing = [...new Set(texts.filter((_, i) => !found[i]))];
    const computed = new Map<string, Float32Array>();
    if (missing.length) {
      const batches: string[][] = [];
      const size = priority === "urgent" ? missing.length : BACKGROUND_BATCH;
      for (let i = 0; i < missing.length; i += size) batches.push(missing.slice(i, i + size));
      for (const batch of batches) {
        const vectors = await new Promise<Float32Array[]>((resolve, reject) => {
          (priority === "urgent" ? this.urgent : this.background).push({ texts: batch, resolve, reject });
          void this.drain();
        });
        // Never makes a key: a question computed while its user was being deleted stores
        // nothing; a new user's first question is cached once an answer made their key.
        this.store(owner, batch, vectors);
        batch.forEach((t, i) => computed.set(t, vectors[i]!));
      }
    }
    return texts.map((t, i) => found[i] ?? computed.get(t)!);
  }

  private async drain(): Promise<void> {
    if (this.running) return;
    this.running = true;
    try {
      for (;;) {
        const job = this.urgent.shift() ?? this.background.shift();
        if (!job) break;
        try {
          job.resolve(await (await this.load()).embed(job.texts));
        } catch (error) {
          job.reject(error);
        }
      }
    } finally {
      this.running = false;
      // A macrotask later: what the last jobs' callers did with their vectors has run too.
      if (this.pending === 0) for (const resolve of this.idleWaiters.splice(0)) setImmediate(resolve);
    }
  }

  /** Resolves once no job is waiting or running (shutdown, and tests that must see the outcome). */
  idle(): Promise<void> {
    if (this.pending === 0) return new Promise((resolve) => setImmediate(resolve));
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Jobs waiting or running (for progress reports). */
  get pending(): number {
    return this.urgent.length + this.background.length + (this.running ? 1 : 0);
  }
}

const bytesOf = (v: Float32Array) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

/** One owner's view of the service: what connectors indexing that owner's sources use. */
export interface OwnerEmbeddings {
  embed(texts: string[], priority?: Priority): Promise<Float32Array[]>;
}
