// A connector over a local folder, searched through its LocalIndex. The first scan runs in
// the background (status "indexing" until done); later searches rescan at most every
// RESCAN_MS, reading only what changed, so an edited file is found on the next search.
import { existsSync, statSync } from "node:fs";
import { LocalIndex, syncIndex, type ScanEntry } from "./local-index";
import { ConnectorError, type Connector, type ConnectorKind, type ConnectorStatus, type RetrievalRequest, type SourceRecord } from "./types";

const RESCAN_MS = 5_000;

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

  constructor(
    readonly kind: ConnectorKind,
    private readonly path: string,
    private readonly index: LocalIndex,
    private readonly source: FolderSource,
  ) {
    this.sync();
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
      if (!existsSync(this.path) || !statSync(this.path).isDirectory()) throw new ConnectorError(`${this.path} is not a readable folder`);
      await syncIndex(this.index, this.source.scan(), (e) => this.source.read(e));
      this.error = undefined;
      this.ready = true;
    } catch (error) {
      this.error = error instanceof ConnectorError ? error.message : `cannot read ${this.path}`;
    }
  }

  async health(): Promise<ConnectorStatus> {
    if (!this.ready && this.syncing) return { status: "indexing", records: this.index.count() };
    if (this.error) return { status: "error", reason: this.error };
    return { status: "ok", records: this.index.count() };
  }

  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    if (!this.ready) await this.sync();
    else if (Date.now() - this.lastScan > RESCAN_MS) await this.sync();
    if (this.error) throw new ConnectorError(this.error);
    return this.index.search(request);
  }

  async close(): Promise<void> {
    await this.syncing;
  }
}
