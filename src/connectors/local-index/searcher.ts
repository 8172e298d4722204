// The serving thread's handle on the search worker (search-worker.ts): a question's SQL in the
// local indexes (BM25, the nearest chunks, the rows found: ~40% of the serving thread's time per
// question, measured) runs there, on a connection of its own, while this thread serves other
// requests (D31). One worker per database connection, started on the first question, ended with the
// services (closeSearches) or once idle for SEARCH_IDLE_MS. A database without a file (tests'
// :memory:) is searched on the asking thread, as is any question once the worker has failed.
import type { Database } from "bun:sqlite";
import { dirname, join } from "node:path";
import type { Candidates, CandidatesAsked, IndexRows } from "./candidates";
import { type FromSearcher, type ToSearcher, unpackCandidates } from "./search-protocol";

/** A worker asked nothing for this long is ended (a question after it starts another: ~20-50 ms). */
export const SEARCH_IDLE_MS = 60_000;

/**
 * The worker's entry inside the executable; scripts/build.ts sets it and compiles search-worker.ts
 * as another entrypoint (a plain relative name: see embedding/worker-client.ts). Beside this file under `bun run`.
 */
declare const CORPUS_SEARCH_WORKER: string | undefined;
export const SEARCH_WORKER_DEFINE = "CORPUS_SEARCH_WORKER";
const workerEntry = () => (typeof CORPUS_SEARCH_WORKER === "string" ? CORPUS_SEARCH_WORKER : join(import.meta.dir, "search-worker.ts"));

/**
 * After a worker failed (it could not start, or it died), questions are searched on the asking
 * thread this long before another is started: a worker that cannot start is not started again
 * for every question.
 */
export const SEARCH_RETRY_MS = 30_000;

/**
 * The most searches waiting on one worker: past it a question is searched on the asking thread,
 * so nothing queues without bound behind a slow worker.
 */
export const MAX_WAITING_SEARCHES = 64;

/**
 * A worker that has answered nothing for this long while searches wait on it is stuck: it is ended
 * as failed and what waited is searched on the asking thread. Counted from its last answer, not from
 * each search's sending: a worker working through a long queue on a loaded machine (each search
 * ~25-35 ms of CPU, far longer in wall time at load 20) answers now and then, and is not stuck.
 */
export const SEARCH_STUCK_MS = 30_000;

/** The worker's entry and the two waits above, as a test may give others (a worker that wedges, shorter waits). */
export const searchWorkerSettings = { entry: workerEntry(), stuckMs: SEARCH_STUCK_MS, retryMs: SEARCH_RETRY_MS };

/** The worker could not answer (it failed, or it was ended meanwhile). */
export class SearchWorkerFailed extends Error {}

type Waiter = { resolve: (c: Candidates) => void; reject: (e: Error) => void };

class SearchWorker {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private seq = 0;
  private idle?: ReturnType<typeof setTimeout>;
  /** Armed while searches wait, from the worker's last answer (SEARCH_STUCK_MS). */
  private stuck?: ReturnType<typeof setTimeout>;
  dead = false;

  constructor(
    private readonly file: string,
    private readonly onEnd: (failed: boolean) => void,
  ) {
    this.worker = new Worker(searchWorkerSettings.entry, { smol: true });
    this.worker.onerror = () => this.end("the search worker failed", true);
    this.worker.onmessageerror = () => this.end("the search worker sent a message that could not be read", true);
    this.worker.addEventListener("close", () => this.end("the search worker exited", true));
    this.worker.onmessage = (event: MessageEvent<FromSearcher>) => this.receive(event.data);
    this.hold(false);
  }

  /** Bun's Worker keeps the process alive while referenced (its DOM type does not say so): only while a search waits. */
  private hold(ref: boolean): void {
    const worker = this.worker as unknown as { ref(): void; unref(): void };
    if (ref) worker.ref();
    else worker.unref();
  }

  /** How many searches wait on it. */
  get waitingCount(): number {
    return this.waiting.size;
  }

  search(owner: string, mapped: boolean, asked: CandidatesAsked): Promise<Candidates> {
    clearTimeout(this.idle);
    const seq = ++this.seq;
    const message: ToSearcher = { seq, file: this.file, dataDir: dirname(this.file), owner, mapped, asked };
    return new Promise<Candidates>((resolve, reject) => {
      if (this.waiting.size === 0) this.watch();
      this.waiting.set(seq, { resolve, reject });
      this.hold(true);
      this.worker.postMessage(message);
    });
  }

  /** (Re)starts the wait for the worker's next answer. */
  private watch(): void {
    clearTimeout(this.stuck);
    this.stuck = setTimeout(() => void this.end("the search worker did not answer", true), searchWorkerSettings.stuckMs);
    this.stuck.unref?.();
  }

  private receive(m: FromSearcher): void {
    const waiter = this.waiting.get(m.seq);
    if (!waiter) return;
    this.waiting.delete(m.seq);
    if (this.waiting.size > 0) this.watch();
    else clearTimeout(this.stuck);
    if ("error" in m) waiter.reject(new SearchWorkerFailed(m.error));
    else waiter.resolve(unpackCandidates(m));
    if (this.waiting.size === 0) this.rest();
  }

  /** Nothing waits: the process may exit, and the worker ends if nothing more comes. */
  private rest(): void {
    this.hold(false);
    this.idle = setTimeout(() => this.end("the search worker was idle"), SEARCH_IDLE_MS);
    this.idle.unref?.();
  }

  /** Ends the worker (`failed`: by a failure of its own); what waited on it fails (and is searched on the asking thread). */
  end(reason: string, failed = false): Promise<void> {
    if (this.dead) return Promise.resolve();
    this.dead = true;
    clearTimeout(this.idle);
    this.onEnd(failed);
    clearTimeout(this.stuck);
    for (const waiter of this.waiting.values()) {
      waiter.reject(new SearchWorkerFailed(reason));
    }
    this.waiting.clear();
    return this.worker.terminate() as unknown as Promise<void>;
  }
}

/** Each connection's worker (its searches read the same file, on a connection of their own). */
const workers = new WeakMap<Database, SearchWorker>();
/** When each connection's worker last failed. */
const failedAt = new WeakMap<Database, number>();

/**
 * The candidates of `ix` for `asked`, found by the search worker of its database; undefined where
 * there is none (a database without a file): the caller searches on its own thread.
 */
export function searchOffThread(ix: IndexRows, asked: CandidatesAsked): Promise<Candidates> | undefined {
  const file = ix.db.filename;
  if (!file || file === ":memory:") return undefined;
  let worker = workers.get(ix.db);
  if (!worker || worker.dead) {
    if (performance.now() - (failedAt.get(ix.db) ?? -Infinity) < searchWorkerSettings.retryMs) return undefined;
    let made: SearchWorker;
    try {
      made = new SearchWorker(file, (failed) => {
        if (workers.get(ix.db) === made) workers.delete(ix.db);
        if (failed) failedAt.set(ix.db, performance.now());
      });
    } catch {
      // No thread to search in (a worker cannot be made): the same as one that failed.
      failedAt.set(ix.db, performance.now());
      return undefined;
    }
    worker = made;
    workers.set(ix.db, worker);
  }
  if (worker.waitingCount >= MAX_WAITING_SEARCHES) return undefined;
  // Read as the serving thread reads now: through the mapping, or through read calls while a folder embeds.
  const mapped = (ix.db.query<{ mmap_size: number }, []>("PRAGMA mmap_size").get()?.mmap_size ?? 0) > 0;
  return worker.search(ix.owner, mapped, asked);
}

/** Ends the search worker of `db` (before the database closes); its searches under way fail. */
export async function closeSearches(db: Database): Promise<void> {
  await workers.get(db)?.end("the database is closing");
}
