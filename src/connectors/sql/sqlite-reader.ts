// The serving thread's handle on the SQLite reader (sqlite-worker.ts): one worker for every SQLite
// connector of the process, each connector on a connection of its own there (D31). Started on the
// first statement; it keeps the process alive only while a statement waits. Where no worker can
// be made (no thread to start, the unit suite), or one failed to start lately, the statement runs
// on the asking thread, in windows (windows.ts) as before. A worker that stops answering is ended
// and what waited on it fails: a statement that held it that long would hold the serving thread too.
import { join } from "node:path";
import type { FromSqliteReader, ToSqliteReader } from "./sqlite-protocol";
import type { ScanBounds, WindowedQuery } from "./windows";

/**
 * The worker's entry inside the executable; scripts/build.ts sets it and compiles sqlite-worker.ts
 * as another entrypoint (a plain relative name: see embedding/worker-client.ts). Beside this file under `bun run`.
 */
declare const CORPUS_SQLITE_WORKER: string | undefined;
export const SQLITE_WORKER_DEFINE = "CORPUS_SQLITE_WORKER";
const workerEntry = () => (typeof CORPUS_SQLITE_WORKER === "string" ? CORPUS_SQLITE_WORKER : join(import.meta.dir, "sqlite-worker.ts"));

/**
 * A worker that has answered nothing for this long while statements wait on it is stuck: ended,
 * and what waited fails. A search's statements are windows of ~20 ms (windows.ts), a read telling
 * each turn between them; counted from the last answer or turn, as the search worker's
 * (local-index/searcher.ts SEARCH_STUCK_MS).
 */
export const SQLITE_STUCK_MS = 30_000;
/** After a worker could not be started, statements run on the asking thread this long before another is tried. */
export const SQLITE_RETRY_MS = 30_000;

/** The entry and the waits above, as a test may give others. */
export const sqliteReaderSettings = { entry: workerEntry(), stuckMs: SQLITE_STUCK_MS, retryMs: SQLITE_RETRY_MS };

/** The worker could not answer (it failed, stopped answering or ended): the statement's search fails. */
export class SqliteReaderFailed extends Error {}

/** The worker ended before it ever answered (it could not start): the statement runs on the asking thread. */
export class SqliteReaderUnavailable extends SqliteReaderFailed {}

/** A statement SQLite refused in the worker: its message and code, as the asking thread's connection throws them. */
class SqliteStatementError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

type Row = Record<string, unknown>;
type Waiter = { resolve: (rows: Row[]) => void; reject: (e: Error) => void };

class SqliteReader {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, Waiter>();
  private seq = 0;
  private stuck?: ReturnType<typeof setTimeout>;
  /** Whether it answered once: a worker that failed before could not start. */
  private answered = false;
  dead = false;

  constructor(private readonly onEnd: (couldNotStart: boolean) => void) {
    this.worker = new Worker(sqliteReaderSettings.entry, { smol: true });
    this.worker.onerror = () => this.end("the SQLite reader failed", !this.answered);
    this.worker.onmessageerror = () => this.end("the SQLite reader sent a message that could not be read");
    this.worker.addEventListener("close", () => this.end("the SQLite reader exited", !this.answered));
    this.worker.onmessage = (event: MessageEvent<FromSqliteReader>) => this.receive(event.data);
    this.hold(false);
  }

  /** Bun's Worker keeps the process alive while referenced: only while a statement waits. */
  private hold(ref: boolean): void {
    const worker = this.worker as unknown as { ref(): void; unref(): void };
    if (ref) worker.ref();
    else worker.unref();
  }

  select(connection: number, file: string, sql: string, params: unknown[]): Promise<Row[]> {
    const seq = ++this.seq;
    return this.ask({ type: "select", seq, connection, file, sql, params });
  }

  /** A search's read of a table in windows, run there whole (selectInWindows); told when the search gives up. */
  async windows(connection: number, file: string, query: WindowedQuery, bounds: ScanBounds): Promise<Row[]> {
    const seq = ++this.seq;
    const budgetMs = Math.max(0, bounds.deadline - performance.now());
    const abort = () => {
      if (!this.dead) this.worker.postMessage({ type: "abort", seq } satisfies ToSqliteReader);
    };
    bounds.signal?.addEventListener("abort", abort, { once: true });
    try {
      return await this.ask({ type: "windows", seq, connection, file, query, budgetMs });
    } finally {
      bounds.signal?.removeEventListener("abort", abort);
    }
  }

  private ask(message: Extract<ToSqliteReader, { seq: number; connection: number }>): Promise<Row[]> {
    return new Promise<Row[]>((resolve, reject) => {
      if (this.waiting.size === 0) this.watch();
      this.waiting.set(message.seq, { resolve, reject });
      this.hold(true);
      this.worker.postMessage(message);
    });
  }

  close(connection: number): void {
    if (!this.dead) this.worker.postMessage({ type: "close", connection } satisfies ToSqliteReader);
  }

  /** (Re)starts the wait for the worker's next answer. */
  private watch(): void {
    clearTimeout(this.stuck);
    this.stuck = setTimeout(() => this.end("the SQLite reader did not answer"), sqliteReaderSettings.stuckMs);
    this.stuck.unref?.();
  }

  private receive(m: FromSqliteReader): void {
    const waiter = this.waiting.get(m.seq);
    if (!waiter) return;
    this.answered = true;
    // A read between its windows: not stuck, counted from now (it answers once, at its end).
    if ("turned" in m) {
      this.watch();
      return;
    }
    this.waiting.delete(m.seq);
    if (this.waiting.size > 0) this.watch();
    else {
      clearTimeout(this.stuck);
      this.hold(false);
    }
    if ("error" in m) waiter.reject(new SqliteStatementError(m.error, m.code));
    else waiter.resolve(m.rows);
  }

  /**
   * Ends the worker; what waited on it fails (`couldNotStart`: it never answered, and runs on the
   * asking thread), and the next statement starts another (its connections opened again there).
   */
  end(reason: string, couldNotStart = false): void {
    if (this.dead) return;
    this.dead = true;
    clearTimeout(this.stuck);
    this.onEnd(couldNotStart);
    const Failure = couldNotStart ? SqliteReaderUnavailable : SqliteReaderFailed;
    for (const waiter of this.waiting.values()) waiter.reject(new Failure(reason));
    this.waiting.clear();
    void this.worker.terminate();
  }
}

let reader: SqliteReader | undefined;
/** When a worker last could not be made. */
let failedAt = Number.NEGATIVE_INFINITY;
let connections = 0;

/** A number for a new connection of a SQLite connector in the reader. */
export const newConnection = (): number => ++connections;

/** The worker, started if there is none; undefined where none can be made now (statements run on the asking thread). */
function running(): SqliteReader | undefined {
  if (reader && !reader.dead) return reader;
  if (performance.now() - failedAt < sqliteReaderSettings.retryMs) return undefined;
  try {
    const made: SqliteReader = new SqliteReader((couldNotStart) => {
      if (reader === made) reader = undefined;
      if (couldNotStart) failedAt = performance.now();
    });
    reader = made;
    return made;
  } catch {
    failedAt = performance.now();
    return undefined;
  }
}

/**
 * The rows of `sql` on connection `connection` to the SQLite file `file` (its checked real path),
 * read by the SQLite reader; undefined where there is none: the caller reads on its own thread.
 */
export function selectOffThread(connection: number, file: string, sql: string, params: unknown[]): Promise<Row[]> | undefined {
  return running()?.select(connection, file, sql, params);
}

/**
 * A search's read of a table in windows (windows.ts selectInWindows) on connection `connection`,
 * run whole by the SQLite reader and answered once; undefined where there is none (the caller
 * reads on its own thread).
 */
export function selectInWindowsOffThread(
  connection: number,
  file: string,
  query: WindowedQuery,
  bounds: ScanBounds,
): Promise<Row[]> | undefined {
  return running()?.windows(connection, file, query, bounds);
}

/** Closes connection `connection` in the reader, if one runs (a later statement on it opens it again). */
export function closeOffThread(connection: number): void {
  if (reader && !reader.dead) reader.close(connection);
}

/** Ends the reader, and forgets a failed start (tests): its statements under way fail, the next starts another. */
export function endSqliteReader(): void {
  reader?.end("the SQLite reader was ended");
  failedAt = Number.NEGATIVE_INFINITY;
}
