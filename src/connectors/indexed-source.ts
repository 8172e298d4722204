// A connector over a local folder, searched through its LocalIndex. The first scan runs in
// the background (status "indexing" until done); later searches rescan at most every
// RESCAN_MS, reading only what changed, so an edited file is found on the next search.
// After each scan, chunks without a vector are embedded in the background, a few at a time,
// so that questions only ever embed themselves.
import { existsSync, statSync } from "node:fs";
import { LocalIndex, syncIndex, type ScanEntry } from "./local-index";
import { asGiven, type Confine } from "./paths";
import type { OwnerEmbeddings } from "../embedding/service";
import type { Logger } from "../log";
import { ConnectorError, type Connector, type ConnectorKind, type ConnectorStatus, type IndexProgress, type RetrievalRequest, type SearchHit, type SourceRecord } from "./types";

const RESCAN_MS = 5_000;
const EMBED_BATCH = 16;

export interface FolderSource {
  /** Every source file (or part of one) with its size and mtime. */
  scan(): ScanEntry[];
  /** The records of one entry. */
  read(entry: ScanEntry): Promise<SourceRecord[]>;
}

export class IndexedFolderConnector implements Connector {
  private syncing?: Promise<void>;
  private lastScan = 0;
  private error?: string;
  private ready = false;
  private embedding?: Promise<void>;
  private closed = false;

  constructor(
    readonly kind: ConnectorKind,
    private readonly path: string,
    private readonly index: LocalIndex,
    private readonly source: FolderSource,
    private readonly embeddings?: OwnerEmbeddings,
    /** Indexing progress goes to the logs (never paths or content). */
    private readonly log?: Logger,
    /** Checks the folder again before each scan (D23): the file system may have changed since it was added. */
    private readonly check: Confine = asGiven,
  ) {
    this.sync();
  }

  /** Embeds pending chunks until none is left (one loop at a time). */
  embedPending(): Promise<void> {
    if (!this.embeddings) return Promise.resolve();
    this.embedding ??= (async () => {
      let done = 0;
      try {
        for (;;) {
          if (this.closed) return;
          const batch = this.index.pendingChunks(EMBED_BATCH);
          if (batch.length === 0) {
            if (done) this.log?.info("connector embedded", { ...this.index.progress() });
            return;
          }
          const vectors = await this.embeddings!.embed(
            batch.map((b) => b.text),
            "background",
          );
          if (this.closed) return;
          this.index.setVectors(
            batch.map((b) => b.chunk),
            vectors,
          );
          done += batch.length;
          // A line every 512 chunks, so a long first index shows where it stands.
          if (done % 512 < EMBED_BATCH) this.log?.info("connector embedding", { ...this.index.progress() });
        }
      } catch {
        // Retried after the next scan.
      }
    })().finally(() => {
      this.embedding = undefined;
    });
    return this.embedding;
  }

  progress(): IndexProgress {
    return this.index.progress();
  }

  /** Starts a sync unless one is running; resolves when it is done. */
  sync(): Promise<void> {
    this.syncing ??= this.runSync().finally(() => {
      this.lastScan = Date.now();
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async runSync(): Promise<void> {
    try {
      const folder = this.check(this.path);
      if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ConnectorError(`${this.path} is not a readable folder`);
      const result = await syncIndex(this.index, this.source.scan(), (e) => this.source.read(e));
      if (result.read || result.removed || result.failed.length) {
        this.log?.info("connector indexed", { read: result.read, removed: result.removed, unreadable: result.failed.length, records: this.index.count() });
      }
      this.error = undefined;
      this.ready = true;
      void this.embedPending();
    } catch (error) {
      this.error = error instanceof ConnectorError ? error.message : `cannot read ${this.path}`;
    }
  }

  async health(): Promise<ConnectorStatus> {
    if (!this.ready && this.syncing) return { status: "indexing", records: this.index.count() };
    if (this.error) return { status: "error", reason: this.error };
    return { status: "ok", records: this.index.count() };
  }

  private async fresh(): Promise<void> {
    if (!this.ready) await this.sync();
    else if (Date.now() - this.lastScan > RESCAN_MS) await this.sync();
    if (this.error) throw new ConnectorError(this.error);
  }

  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    await this.fresh();
    return this.index.search(request);
  }

  async rank(request: RetrievalRequest): Promise<SearchHit[]> {
    await this.fresh();
    return this.index.rank(request);
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.syncing;
    await this.embedding;
  }
}
