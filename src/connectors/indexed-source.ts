// A connector over a local folder, searched through its LocalIndex. The first scan runs in
// the background; later searches rescan at most every RESCAN_MS, reading only what changed, so
// an edited file is found on the next search. After each scan, chunks without a vector are
// embedded in the background, a few at a time, so that questions only ever embed themselves.
// Its status says where that stands (issue 14): `indexing` while files are read, `embedding`
// while chunks wait for vectors, `ok` only once both are done; each with its progress. While the
// disk refuses its writes, or free space is below CORPUS_MIN_FREE_BYTES, it says `error` with the
// reason, goes on answering from what is indexed, and tries again with backoff until a sync writes
// (D29). Several nodes on one database (D33): a sync runs under the connector's lease, renewed
// while it runs and released after; a node that finds the lease held leaves the sync to its holder
// and answers from the shared index, and one whose lease was taken while it stalled stops reading.
// On a shared keys room the owner's key is read again as the work goes (ownerCheck): a user deleted
// on another node is indexed no further.
import { existsSync, statSync } from "node:fs";
import { NoUserKey } from "../crypto/user-keys";
import { EmbeddingCancelled, type OwnerEmbeddings } from "../embedding/service";
import { defaultSchedule, errorSummary, retryDelay, type Schedule } from "../jobs/guard";
import { type NodeLeases, underLease } from "../jobs/leases";
import type { Logger } from "../log";
import { INDEXING_PAUSED_FULL, isStorageError } from "../store/storage-errors";
import { TERMS_FORMAT, WORDS_CUT } from "./index-terms";
import { type LocalIndex, rewriteStaleWords, type ScanEntry, syncIndex } from "./local-index";
import { asGiven, type Confine } from "./paths";
import { PhaseProgress } from "./progress";
import {
  type Connector,
  ConnectorError,
  type ConnectorStatus,
  type IndexProgress,
  type ReadRecords,
  type RetrievalRequest,
  type SearchHit,
  type SourceRecord,
} from "./types";

const RESCAN_MS = 5_000;
/**
 * The longest a question waits for a sync (the first, or a rescan) before it is answered from
 * what is indexed so far: a folder of years of mail takes minutes to read, and its questions
 * must not wait for it (issue 14); a small folder or a few changed files are read in less.
 */
export const SYNC_WAIT_MS = 1_000;
const EMBED_BATCH = 16;
/** Skipped files named in the status; the rest are counted. */
const SKIPPED_NAMED = 3;
/** How long a node's lease on indexing a connector lasts unless renewed (a third of it apart). */
export const INDEX_LEASE_MS = 60_000;
/** The work's name in the leases: one connector of one owner. */
export const indexLeaseName = (key: string) => `index/${key}`;
/** The status while the shared database cannot be asked for the connector's lease. */
export const INDEX_LEASE_UNREACHABLE = "indexing waits for the shared database (its lease could not be claimed)";

/** The status while the shared database cannot be asked for the owner's data key (the log has the error). */
export const OWNER_KEY_UNREACHABLE = "indexing waits for the shared database (the owner's data key could not be read)";
/**
 * How often a sync reads its owner's key again between files (IndexedOptions.ownerCheck): a
 * deletion on another node stops it within this, at one read of a row per period, not per file.
 */
export const OWNER_RECHECK_MS = 1_000;
/** The shared index's progress read for a status at most this often when no question reads it (progress(), D33). */
export const PROGRESS_READ_MS = 1_000;

/** The status while embedding waits for the next scan to retry (the log has the error). */
export const EMBEDDING_PAUSED = "embedding paused after an error; it resumes on the next scan";

/** The pause below the floor of free space, reported like a write the disk refused. */
class StoragePaused extends Error {
  readonly code = "SQLITE_FULL";
}

export interface FolderSource {
  /** Every source file (or part of one) with its size and mtime. */
  scan(): ScanEntry[];
  /** The records of one entry, with their chunks where they were read (ReadRecords). */
  read(entry: ScanEntry): Promise<ReadRecords>;
}

export interface IndexedOptions {
  /** Without them, nothing is embedded and the status never says `embedding`. */
  embeddings?: OwnerEmbeddings;
  /** Indexing progress goes to the logs (never paths or content). */
  log?: Logger;
  /** Checks the folder again before each scan (D23): the file system may have changed since it was added. */
  check?: Confine;
  /** The clock of progress rates and times. */
  now?: () => number;
  /** Free space of the data folder: below its floor no new indexing starts (D29). */
  space?: { lowReason(): string | undefined };
  /** When a sync paused for want of storage is tried again (tests inject a clock). */
  schedule?: Schedule;
  /** Told when indexing cannot write and when it can again (the connectors' health, the log). */
  report?: (error?: unknown) => void;
  /** The longest a question waits for a sync (SYNC_WAIT_MS). */
  syncWaitMs?: number;
  /** Several nodes: a sync runs only under this lease (`name`: indexLeaseName). None: this node alone. */
  lease?: NodeLeases & { name: string };
  /**
   * Reads the owner's data key again (UserKeys.recheck, D33): rejects with NoUserKey once a
   * deletion on any node destroyed it. Asked where a sync starts, between its files (at most every
   * OWNER_RECHECK_MS) and before each embedded batch is written; undefined when there is nothing
   * to wait for (the embedded store: no turn added).
   */
  ownerCheck?: () => Promise<unknown> | undefined;
}

/**
 * A file's name as the status shows it: control characters escaped (a name holding a line break or
 * a terminal's escape would otherwise reach whatever prints the status as they are).
 */
const shownName = (name: string) => name.replace(/\p{Cc}/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

export class IndexedFolderConnector implements Connector {
  private syncing?: Promise<void>;
  private lastScan = 0;
  private error?: string;
  private ready = false;
  private embedding?: Promise<void>;
  private closed = false;
  /** The sync that is reading files, while it does (a rescan with nothing to read has none). */
  private reading?: PhaseProgress;
  /** The embedding run, from its start until every chunk has its vector. */
  private embeddingRun?: PhaseProgress;
  private embeddingPaused = false;
  /** The index's progress as last read (the shared store's answers later: progress()). */
  private progressKnown?: IndexProgress;
  /** The shared store's read under way, and when the last began (progress()). */
  private progressReading?: Promise<IndexProgress>;
  private progressReadAt = Number.NEGATIVE_INFINITY;
  private readonly embeddings?: OwnerEmbeddings;
  private readonly log?: Logger;
  private readonly check: Confine;
  private readonly now: () => number;
  private readonly space?: IndexedOptions["space"];
  private readonly schedule: Schedule;
  private readonly report: (error?: unknown) => void;
  private readonly syncWaitMs: number;
  private readonly lease?: IndexedOptions["lease"];
  /** Why indexing cannot write now (a full disk, or free space below the floor); cleared by a sync that wrote. */
  private storagePaused?: string;
  private retries = 0;
  private retryWaiting = false;
  private readonly ownerCheck?: IndexedOptions["ownerCheck"];
  /** When the owner's key was last read again (this.now()). */
  private ownerCheckedAt = Number.NEGATIVE_INFINITY;

  constructor(
    readonly kind: string,
    private readonly path: string,
    private readonly index: LocalIndex,
    private readonly source: FolderSource,
    options: IndexedOptions = {},
  ) {
    this.embeddings = options.embeddings;
    this.log = options.log;
    this.check = options.check ?? asGiven;
    this.now = options.now ?? Date.now;
    this.space = options.space;
    this.schedule = options.schedule ?? defaultSchedule;
    this.report = options.report ?? (() => {});
    this.syncWaitMs = options.syncWaitMs ?? SYNC_WAIT_MS;
    this.lease = options.lease;
    this.ownerCheck = options.ownerCheck;
    this.sync();
  }

  /** Embeds pending chunks until none is left (one loop at a time). */
  embedPending(): Promise<void> {
    if (!this.embeddings) return Promise.resolve();
    this.embedding ??= this.embedLoop(this.embeddings).finally(() => {
      this.embedding = undefined;
    });
    return this.embedding;
  }

  private async embedLoop(embeddings: OwnerEmbeddings): Promise<void> {
    // At once from the embedded store: the status says `embedding` from the first turn.
    let start = this.index.progress();
    if (start instanceof Promise) start = await start;
    this.progressKnown = start;
    if (start.embedded >= start.total) return;
    // Started before the first await: the status says `embedding` with counts at once.
    const run = (this.embeddingRun = new PhaseProgress("embedding", "chunks", start.embedded, start.total, this.now));
    try {
      for (;;) {
        if (this.closed) return;
        const batch = await this.index.pendingChunks(EMBED_BATCH);
        if (batch.length === 0) break;
        const vectors = await embeddings.embed(
          batch.map((b) => b.text),
          "background",
        );
        if (this.closed) return;
        // The owner's key read again before the batch is written: a deletion on another node meanwhile ends the loop here (NoUserKey).
        const checking = this.ownerStill();
        if (checking) await checking;
        if (this.closed) return;
        // Made a few rows a turn, not all at once in setVectors' turn (~20-40 ms of the serving thread).
        await this.index.prepareRotation();
        if (this.closed) return;
        // Rotated with turns between, then written (the rotation was most of that turn: D31).
        await this.index.storeVectors(batch, vectors);
        this.embeddingPaused = false;
        const p = await this.indexProgress();
        run.update(p.embedded, p.total);
        run.report(this.log, "connector embedding");
      }
      const p = await this.indexProgress();
      run.update(p.embedded, p.total);
      const s = run.summary();
      this.log?.info("connector embedded", {
        chunks: s.done,
        seconds: s.seconds,
        chunks_per_second: s.per_second,
        embedded: p.embedded,
        total: p.total,
      });
      this.embeddingRun = undefined;
    } catch (error) {
      // Retried after the next scan. An owner deleted meanwhile is no failure: nothing more is written.
      if (error instanceof NoUserKey || error instanceof EmbeddingCancelled) return;
      if (isStorageError(error)) return this.pauseForStorage(INDEXING_PAUSED_FULL, error);
      this.embeddingPaused = true;
      this.log?.warning("connector embedding paused", { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /**
   * The index's progress: at once from the embedded store; from the shared one, as last read (by
   * the embedding, the status, or the question that asks it: rank), a read started for the next.
   */
  progress(): IndexProgress {
    let p: IndexProgress;
    if (this.index.shared) {
      // Read by each question's rank already: a read of its own only when the last began
      // PROGRESS_READ_MS ago and none is under way (D33: one query per question at most, not one per call).
      if (!this.progressReading && this.now() - this.progressReadAt >= PROGRESS_READ_MS) this.indexProgress().catch(() => {});
      p = this.progressKnown ?? { total: 0, embedded: 0 };
    } else p = this.index.progress() as IndexProgress;
    const r = this.reading?.view();
    return r ? { ...p, reading: { done: r.done, total: r.total } } : p;
  }

  /** The index's progress read now (and kept: progress() gives it while the shared store's next read is under way). */
  private indexProgress(): Promise<IndexProgress> {
    // One read at a time: a question's rank while another's is under way shares it.
    if (this.progressReading) return this.progressReading;
    this.progressReadAt = this.now();
    const reading = (async () => {
      try {
        const p = await this.index.progress();
        this.progressKnown = p;
        return p;
      } finally {
        this.progressReading = undefined;
      }
    })();
    this.progressReading = reading;
    return reading;
  }

  /** Starts a sync unless one is running; resolves when it is done. */
  sync(): Promise<void> {
    // A closed connector (removed, or re-pointed) reads nothing more.
    if (this.closed) return this.syncing ?? Promise.resolve();
    this.syncing ??= this.runSync().finally(() => {
      this.lastScan = Date.now();
      this.syncing = undefined;
    });
    return this.syncing;
  }

  private async runSync(): Promise<void> {
    // Below the floor of free space no new indexing starts; what is indexed is still searched.
    const low = this.space?.lowReason();
    if (low) return this.pauseForStorage(low);
    const lease = this.lease;
    if (!lease) return this.indexFolder(() => true);
    let done: unknown;
    try {
      done = await underLease(lease.leases, lease.name, lease.holder, INDEX_LEASE_MS, (held) => this.indexFolder(held), {
        lost: () => this.log?.warning("connector indexing's lease lost while it ran; left to the node that took it"),
        notRenewed: (error) => this.log?.warning("connector indexing's lease not renewed", errorSummary(error)),
      });
    } catch (error) {
      // The shared database unreachable: nothing is read; tried again at the next sync.
      this.error = INDEX_LEASE_UNREACHABLE;
      this.log?.warning("connector indexing's lease not claimed", errorSummary(error));
      return;
    }
    // Held by another node: it indexes, into the index every node searches.
    if (!done) {
      this.ready = true;
      if (this.error === INDEX_LEASE_UNREACHABLE) this.error = undefined;
    }
  }

  /**
   * The owner's key read again (ownerCheck), unless it was in the last `every` ms: rejects with
   * NoUserKey once they are gone, with a ConnectorError while the shared database cannot be asked.
   */
  private ownerStill(every = 0): Promise<unknown> | undefined {
    if (!this.ownerCheck || this.now() - this.ownerCheckedAt < every) return undefined;
    const checking = this.ownerCheck();
    if (!checking) return undefined;
    this.ownerCheckedAt = this.now();
    return checking.catch((error: unknown) => {
      if (error instanceof NoUserKey) throw error;
      this.log?.warning("connector indexing's owner key not read", errorSummary(error));
      throw new ConnectorError(OWNER_KEY_UNREACHABLE);
    });
  }

  /** Reads what changed into the index, while `held()` (the node's lease, when there is one). */
  private async indexFolder(held: () => boolean): Promise<void> {
    try {
      // A sync starts for an owner whose key is still there (D33): one deleted on another node is indexed no more.
      const checking = this.ownerStill();
      if (checking) await checking;
      const folder = this.check(this.path);
      if (!existsSync(folder) || !statSync(folder).isDirectory()) throw new ConnectorError(`${this.path} is not a readable folder`);
      const result = await syncIndex(
        this.index,
        this.source.scan(),
        (e) => this.source.read(e),
        (done, total) => this.readProgress(done, total),
        () => this.closed || !held(),
        () => this.ownerStill(OWNER_RECHECK_MS),
      );
      // Closed, or its lease taken by another node (which indexes it now).
      if (this.closed || !held()) return;
      // The reason, never the file's name (logs carry no paths).
      for (const reason of result.skipped) this.log?.warning("connector file skipped", { reason });
      // Records past the words one record gives the word index (index-terms.ts RecordWords, D31).
      if (result.cutWords) this.log?.warning("connector record words cut", { records: result.cutWords, reason: WORDS_CUT });
      if (result.read || result.removed || result.failed.length) {
        const s = this.reading?.summary();
        this.log?.info("connector indexed", {
          read: result.read,
          removed: result.removed,
          unreadable: result.failed.length,
          records: await this.index.count(),
          seconds: s?.seconds ?? 0,
          files_per_second: s?.per_second ?? null,
        });
      }
      this.error = undefined;
      this.ready = true;
      // Words of an older format written again; what is indexed answers meanwhile (on a full
      // disk too: the pause below leaves the connector ready).
      const rewritten = await rewriteStaleWords(this.index, () => this.closed);
      if (rewritten) this.log?.info("connector words rewritten", { records: rewritten, format: TERMS_FORMAT });
      if (this.closed) return;
      this.resumed();
      void this.embedPending();
    } catch (error) {
      // The owner was deleted (on this node or another): nothing more of theirs is read or written, and nothing is wrong with the folder.
      if (error instanceof NoUserKey) return;
      if (isStorageError(error)) return this.pauseForStorage(INDEXING_PAUSED_FULL, error);
      this.error = error instanceof ConnectorError ? error.message : `cannot read ${this.path}`;
    } finally {
      this.reading = undefined;
    }
  }

  /** Indexing cannot write: the status says why, and a sync is tried again with backoff until one writes. */
  private pauseForStorage(reason: string, error?: unknown): void {
    if (!this.storagePaused) this.log?.warning("connector indexing paused: storage", { reason });
    this.storagePaused = reason;
    this.report(error ?? new StoragePaused(reason));
    if (this.retryWaiting || this.closed) return;
    this.retryWaiting = true;
    this.schedule(
      () => {
        this.retryWaiting = false;
        if (!this.closed) void this.sync();
      },
      retryDelay(++this.retries),
    );
  }

  private resumed(): void {
    if (!this.storagePaused) return;
    this.storagePaused = undefined;
    this.retries = 0;
    this.report();
    this.log?.info("connector indexing resumed");
  }

  /** The first sync is `indexing` from its start; a rescan only once it has files to read. */
  private readProgress(done: number, total: number): void {
    if (!this.reading) {
      if (total > 0 || !this.ready) this.reading = new PhaseProgress("indexing", "files", done, total, this.now);
      return;
    }
    this.reading.update(done, total);
    this.reading.report(this.log, "connector indexing");
  }

  async health(): Promise<ConnectorStatus> {
    const records = await this.index.count();
    if (this.storagePaused) return { status: "error", reason: this.storagePaused, records };
    if (this.syncing && (!this.ready || this.reading))
      return { status: "indexing", records, ...(this.reading ? { progress: this.reading.view() } : {}) };
    if (this.error) return { status: "error", reason: this.error };
    const { embedded, total } = await this.indexProgress();
    const skipped = await this.skippedNote();
    if (this.embeddings && embedded < total) {
      const reason = [this.embeddingPaused ? EMBEDDING_PAUSED : undefined, skipped].filter(Boolean).join("; ");
      return {
        status: "embedding",
        records,
        ...(reason ? { reason } : {}),
        ...(this.embeddingRun ? { progress: this.embeddingRun.view() } : {}),
      };
    }
    return { status: "ok", records, ...(skipped ? { reason: skipped } : {}) };
  }

  /**
   * "skipped 1 file: big.docx expands beyond 64 MB", the first few named: files left out past a
   * bound or their reading budget, kept in the index (across restarts) until they change (D31).
   */
  private async skippedNote(): Promise<string | undefined> {
    let skipped: Awaited<ReturnType<LocalIndex["skippedNotes"]>>;
    try {
      skipped = await this.index.skippedNotes(SKIPPED_NAMED);
    } catch (error) {
      // The owner's key gone (a deletion under way): nothing of theirs is opened, or shown.
      if (error instanceof NoUserKey) return undefined;
      throw error;
    }
    const { count: n, named } = skipped;
    if (n === 0) return undefined;
    const shown = named.map((s) => `${shownName(s.name)} ${s.reason}`);
    return `skipped ${n} file${n === 1 ? "" : "s"}: ${shown.join("; ")}${n > SKIPPED_NAMED ? `; and ${n - SKIPPED_NAMED} more` : ""}`;
  }

  /** A sync when one is due, waited for at most SYNC_WAIT_MS: past that, what is indexed is searched. */
  private async fresh(): Promise<void> {
    if (!this.ready || Date.now() - this.lastScan > RESCAN_MS) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const waited = new Promise<void>((resolve) => (timer = setTimeout(resolve, this.syncWaitMs)));
      await Promise.race([this.sync(), waited]);
      clearTimeout(timer);
    }
    if (this.error) throw new ConnectorError(this.error);
    // Paused for storage before anything was indexed: nothing to search, and the reason says why.
    if (this.storagePaused && !this.ready) throw new ConnectorError(this.storagePaused);
  }

  async search(request: RetrievalRequest): Promise<SourceRecord[]> {
    await this.fresh();
    return this.index.search(request);
  }

  async rank(request: RetrievalRequest): Promise<SearchHit[]> {
    await this.fresh();
    const ranked = this.index.rank(request);
    // The shared store's progress read with the candidates: the question's note says where embedding stands (score.ts); unread, the last known.
    if (this.index.shared) await Promise.all([ranked, this.indexProgress().catch(() => undefined)]);
    return ranked;
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.syncing;
    await this.embedding;
  }
}
