// Embeddings for the rest of the service: the model loaded once, on first use; one model run
// at a time, questions before background work; vectors cached by a keyed hash of the text, so
// a chunk is embedded once however often it is seen.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
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
];

/** Texts per model run in the background: small, so a question never waits long. */
const BACKGROUND_BATCH = 8;

type Job = { texts: string[]; resolve: (v: Float32Array[]) => void; reject: (e: unknown) => void };

export class EmbeddingService {
  private model?: Promise<Embedder>;
  private tokenizerInstance?: WordPieceTokenizer;
  private readonly urgent: Job[] = [];
  private readonly background: Job[] = [];
  private running = false;
  private readonly cacheKey: Buffer;

  constructor(
    private readonly db: Database,
    masterKey: Buffer,
  ) {
    this.cacheKey = createHmac("sha256", masterKey).update("corpus/embedding-cache").digest();
  }

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
    this.model ??= loadEmbedder({ threads: 0 });
    return this.model;
  }

  private key(text: string): Buffer {
    return createHmac("sha256", this.cacheKey).update(text).digest().subarray(0, 16);
  }

  /** Vectors already computed for `texts` (undefined where none). */
  cached(texts: string[]): Array<Float32Array | undefined> {
    const q = this.db.query<{ vector: Uint8Array }, [Buffer]>("SELECT vector FROM embedding_cache WHERE key = ?");
    return texts.map((t) => {
      const row = q.get(this.key(t));
      return row ? new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)) : undefined;
    });
  }

  private store(texts: string[], vectors: Float32Array[]): void {
    const put = this.db.query("INSERT OR REPLACE INTO embedding_cache (key, vector) VALUES (?, ?)");
    this.db.transaction(() => texts.forEach((t, i) => put.run(this.key(t), new Uint8Array(vectors[i]!.buffer))))();
  }

  /** Embeds (or finds in the cache) every text; `urgent` jobs run before background ones. */
  async embed(texts: string[], priority: "urgent" | "background" = "urgent"): Promise<Float32Array[]> {
    const found = this.cached(texts);
    const missing = [...new Set(texts.filter((_, i) => !found[i]))];
    if (missing.length) {
      const batches: string[][] = [];
      const size = priority === "urgent" ? missing.length : BACKGROUND_BATCH;
      for (let i = 0; i < missing.length; i += size) batches.push(missing.slice(i, i + size));
      for (const batch of batches) {
        const vectors = await new Promise<Float32Array[]>((resolve, reject) => {
          (priority === "urgent" ? this.urgent : this.background).push({ texts: batch, resolve, reject });
          void this.drain();
        });
        this.store(batch, vectors);
      }
    }
    const all = missing.length ? this.cached(texts) : found;
    return all.map((v) => v!);
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
    }
  }

  /** Jobs waiting (for progress reports). */
  get pending(): number {
    return this.urgent.length + this.background.length;
  }
}
