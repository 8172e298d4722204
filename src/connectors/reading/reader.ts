// The serving thread's handle on the reading worker (worker.ts): every source's bytes are parsed
// there, one job at a time, questions' jobs first (D31). Each record has a budget of CPU time,
// READ_BUDGET_MS of the worker's thread (read from /proc; the wall clock where that cannot be
// read): past it, the thread is ended, the record skipped with TOOK_TOO_LONG as its reason, and
// the next job starts a fresh worker; the same past READ_MEMORY_BYTES of the process's own memory
// grown while a job is read. A job waiting in line spends nothing of its budget.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ownMemoryBytes } from "../../limits/memory";
import { CHUNKED_CHARS } from "../../retrieval/chunk";
import type { BookPlace } from "../books/records";
import type { DocumentType, Extracted } from "../files/extract";
import type { SheetPlace } from "../files/sheets";
import type { MailPlace } from "../maildir/message";
import { type ReadRecords, type SourceRecord, SourceSkipped } from "../types";
import type { FromReader, ToReader } from "./protocol";

/** CPU time one record may take to read (a page of a PDF is ~10 ms, a 50 MB mailbox's message ~0.1 s). */
export const READ_BUDGET_MS = 5_000;
/** The reason a record over its budget is skipped with. */
export const tookTooLong = (budgetMs: number) => `took longer than ${budgetMs / 1000} s to read`;
export const TOOK_TOO_LONG = tookTooLong(READ_BUDGET_MS);
/**
 * How much the process's own memory (limits/memory.ts ownMemoryBytes) may grow while one job is
 * read: past it, the record under way is skipped and the worker ended, as past its time. Bun's
 * Worker takes no heap limit (resourceLimits is ignored: a worker filling its heap took the
 * process past 2 GB, measured), so a record that blows the reader's heap would take the server.
 * The bounds of files/limits.ts keep every known kind far below (a 64 MB expansion, a mail's
 * HTML cut), and reading the 24 MB mail grows the process by ~0.3 GB.
 */
export const READ_MEMORY_BYTES = 1024 * 1024 * 1024;
/** The reason a record over the memory bound is skipped with. */
export const neededTooMuchMemory = (bytes: number) => `needed more than ${Math.round(bytes / 2 ** 20)} MB of memory to read`;
/** The reason a record whose reading ended the worker (out of memory, a crash) is skipped with. */
export const STOPPED_THE_READER = "stopped the reader";
/**
 * Budgets one job (a file: an mbox's messages together) may take in all: one mailbox of many
 * messages, each under its budget, held the one worker a minute and more, every other user's
 * files waiting behind it (D31). 60 s of CPU reads a 256 MB mbox (MAX_MAIL_FILE_BYTES).
 */
export const JOB_BUDGETS = 12;
/** A thread waiting (on the disk, on a busy machine) spends no CPU: past this many budgets of wall time it is ended too. */
const WALL_BUDGETS = 6;
/** How often the budget of the job under way is checked. */
const CHECK_EVERY_MS = 100;
/** /proc counts CPU time in ticks of 1/100 s (USER_HZ) on Linux. */
const MS_PER_TICK = 10;

/**
 * The worker's entry inside the executable; scripts/build.ts sets it and compiles worker.ts as
 * another entrypoint (a plain relative name: see embedding/worker-client.ts). Beside this file under `bun run`.
 */
declare const CORPUS_READ_WORKER: string | undefined;
export const READ_WORKER_DEFINE = "CORPUS_READ_WORKER";
const workerEntry = () => (typeof CORPUS_READ_WORKER === "string" ? CORPUS_READ_WORKER : join(import.meta.dir, "worker.ts"));

/** CPU time a thread of this process has used, in ms; undefined where /proc cannot tell. */
function threadCpuMs(thread: number): number | undefined {
  if (!thread) return undefined;
  try {
    const stat = readFileSync(`/proc/self/task/${thread}/stat`, "latin1");
    // After the command's name (in brackets, which may hold spaces): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * MS_PER_TICK;
  } catch {
    return undefined;
  }
}

/** A job as it is asked for, before it has a number. */
type Unsent = ToReader extends infer T ? (T extends ToReader ? Omit<T, "seq"> : never) : never;
/** The source's bytes could not be parsed (broken data): the parser's message, which may quote the data. */
export class SourceUnreadable extends Error {}

type Job = ToReader & { settle: (m: FromReader | Error) => void; transfer: Transferable[] };

export interface ReaderOptions {
  /** READ_BUDGET_MS unless a test gives another. */
  budgetMs?: number;
  /** The worker's entry (tests start others). */
  entry?: string;
  /** JOB_BUDGETS unless a test gives another. */
  jobBudgets?: number;
  /** READ_MEMORY_BYTES unless a test gives another. */
  memoryBytes?: number;
  /** The process's own memory (ownMemoryBytes unless a test gives another measure). */
  memory?: () => number;
}

/** A copy unless the bytes are their buffer's whole (a small file's Buffer is a slice of a shared pool, never to be handed away). */
function ownBytes(bytes: Uint8Array): { bytes: Uint8Array; transfer: Transferable[] } {
  if (bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer)
    return { bytes, transfer: [bytes.buffer] };
  return { bytes: new Uint8Array(bytes), transfer: [] };
}

/** How a job is read: `urgent` for a question's (before any folder's), `chunk` for an index's (its records' chunks cut too, D31). */
export interface ReadOptions {
  urgent?: boolean;
  chunk?: boolean;
}

/** The records of a worker's answer, with their chunks when it cut them. */
function readRecords(m: { records: SourceRecord[]; chunks?: string[][] }): ReadRecords {
  const records: ReadRecords = m.records;
  if (m.chunks) records.chunks = m.chunks;
  return records;
}

export class SourceReader {
  readonly budgetMs: number;
  private readonly jobBudgetMs: number;
  private readonly memoryBytes: number;
  private readonly memory: () => number;
  /** The process's own memory when the job under way started. */
  private memorySince = 0;
  private readonly entry: string;
  private worker?: Worker;
  private thread = 0;
  private started?: Promise<void>;
  private readonly urgent: Job[] = [];
  private readonly background: Job[] = [];
  private current?: Job;
  /** Where the record under way started: the worker thread's CPU time, and the clock. */
  private since = { cpu: 0, wall: 0 };
  /** Where the job under way started, likewise. */
  private jobSince = { cpu: 0, wall: 0 };
  private timer?: ReturnType<typeof setInterval>;
  private seq = 0;
  private closed = false;
  /** Workers ended for a record over its budget (tests count them). */
  restarts = 0;

  constructor(options: ReaderOptions = {}) {
    this.budgetMs = options.budgetMs ?? READ_BUDGET_MS;
    this.jobBudgetMs = this.budgetMs * (options.jobBudgets ?? JOB_BUDGETS);
    this.memoryBytes = options.memoryBytes ?? READ_MEMORY_BYTES;
    this.memory = options.memory ?? ownMemoryBytes;
    this.entry = options.entry ?? workerEntry();
  }

  /**
   * A document's text. Rejects with SourceSkipped past a bound or the budget, with Error when
   * it cannot be read. The bytes are handed over (the caller must not use them again). With
   * `chunkTitle` (read for an index: the file's name), also its record's chunks (files/extract.ts fileTexts).
   */
  async file(bytes: Uint8Array, fileType: DocumentType, chunkTitle?: string): Promise<Extracted & { chunks?: string[] }> {
    const own = ownBytes(bytes);
    const m = await this.run({ type: "file", bytes: own.bytes, fileType, chunkTitle }, own.transfer, false);
    if (m.type !== "file") throw new Error("the reading worker answered out of turn");
    return m.chunks ? { ...m.extracted, chunks: m.chunks } : m.extracted;
  }

  /** A spreadsheet's records, one per row, each ROWS_PER_BUDGET rows within a budget of their own. The bytes are handed over. */
  async sheet(bytes: Uint8Array, place: SheetPlace, options: ReadOptions = {}): Promise<ReadRecords> {
    const own = ownBytes(bytes);
    const m = await this.run({ type: "sheet", bytes: own.bytes, place, chunk: options.chunk }, own.transfer, false);
    if (m.type !== "sheet") throw new Error("the reading worker answered out of turn");
    return readRecords(m);
  }

  /** A mail file's records (an mbox's each within its own budget). */
  async mail(raw: Uint8Array, place: MailPlace, options: ReadOptions = {}): Promise<ReadRecords> {
    const own = ownBytes(raw);
    const m = await this.run({ type: "mail", raw: own.bytes, place, chunk: options.chunk }, own.transfer, options.urgent ?? false);
    if (m.type !== "mail") throw new Error("the reading worker answered out of turn");
    return readRecords(m);
  }

  /** A journal file's records, one per transaction, each within its own budget. The bytes are handed over. */
  async books(bytes: Uint8Array, place: BookPlace, options: ReadOptions = {}): Promise<ReadRecords> {
    const own = ownBytes(bytes);
    const m = await this.run({ type: "books", bytes: own.bytes, place, chunk: options.chunk }, own.transfer, options.urgent ?? false);
    if (m.type !== "books") throw new Error("the reading worker answered out of turn");
    return readRecords(m);
  }

  /**
   * Records read elsewhere (a SQL source's rows, embedded ahead) cut into the texts they are
   * embedded as (retrieval/chunk.ts embeddedChunks), each within its own budget: cutting never
   * runs on the serving thread (D31). Only what the chunker reads of each is sent (CHUNKED_CHARS).
   */
  async chunks(records: Array<{ title: string; content: string }>): Promise<string[][]> {
    const sent = records.map((r) => ({ title: r.title, content: r.content.slice(0, CHUNKED_CHARS) }));
    const m = await this.run({ type: "chunks", records: sent }, [], false);
    if (m.type !== "chunks") throw new Error("the reading worker answered out of turn");
    return m.chunks;
  }

  private run(message: Unsent, transfer: Transferable[], urgent: boolean): Promise<FromReader> {
    if (this.closed) return Promise.reject(new Error("the reader is closed"));
    return new Promise<FromReader>((resolve, reject) => {
      const settle = (m: FromReader | Error) => {
        if (m instanceof Error) reject(m);
        else if (m.type === "skipped") reject(new SourceSkipped(m.reason, { again: m.again }));
        else if (m.type === "failed") reject(new SourceUnreadable(m.message));
        else resolve(m);
      };
      (urgent ? this.urgent : this.background).push({ ...message, seq: ++this.seq, settle, transfer } as Job);
      void this.next();
    });
  }

  /** Starts the next job, if none is under way. */
  private async next(): Promise<void> {
    if (this.current || this.closed) return;
    const job = this.urgent.shift() ?? this.background.shift();
    if (!job) return;
    this.current = job;
    try {
      await this.start();
    } catch (error) {
      this.finish(job, error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.current !== job) return;
    this.restartBudget();
    this.jobSince = this.since;
    this.memorySince = this.memory();
    const { settle: _settle, transfer, ...message } = job;
    this.hold(true);
    this.worker!.postMessage(message as ToReader, transfer);
    this.timer ??= setInterval(() => this.checkBudget(), CHECK_EVERY_MS);
  }

  /** A worker ready to take a job (a new one after the last was ended). */
  private start(): Promise<void> {
    if (this.started) return this.started;
    const worker = new Worker(this.entry, { smol: true });
    this.worker = worker;
    this.started = new Promise<void>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<FromReader>) => {
        const m = event.data;
        if (m.type === "ready") {
          this.thread = m.thread;
          resolve();
        } else this.receive(m);
      };
      // Always set: a worker that cannot start otherwise fails without a word (embedding-model.md).
      worker.onerror = (event) => {
        event.preventDefault?.();
        const error = new Error(`the reading worker failed: ${(event.message || "unknown error").split("\n")[0]}`);
        reject(error);
        this.lost(worker, error);
      };
      worker.addEventListener("close", () => {
        const error = new Error("the reading worker exited");
        reject(error);
        this.lost(worker, error);
      });
    });
    // A start that failed is told to the job that waited for it.
    this.started.catch(() => {});
    return this.started;
  }

  private receive(m: FromReader): void {
    const job = this.current;
    if (!job || !("seq" in m) || m.seq !== job.seq) return;
    if (m.type === "record") this.restartBudget();
    else this.finish(job, m);
  }

  private finish(job: Job, answer: FromReader | Error): void {
    if (this.current === job) this.current = undefined;
    job.settle(answer);
    if (!this.current && this.urgent.length + this.background.length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      this.hold(false);
    }
    void this.next();
  }

  private restartBudget(): void {
    this.since = { cpu: threadCpuMs(this.thread) ?? 0, wall: performance.now() };
  }

  /** Past its budget (CPU time, else wall time) or the memory bound, the record under way is skipped and its worker ended. */
  private checkBudget(): void {
    const job = this.current;
    if (!job || !this.worker) return;
    if (this.memory() - this.memorySince > this.memoryBytes) {
      this.restarts++;
      this.end();
      this.finish(job, { type: "skipped", seq: job.seq, reason: neededTooMuchMemory(this.memoryBytes), again: true });
      return;
    }
    const cpu = threadCpuMs(this.thread);
    const now = performance.now();
    const spent = (since: { cpu: number; wall: number }) => (cpu === undefined ? now - since.wall : cpu - since.cpu);
    const overBy = (since: { cpu: number; wall: number }, budgetMs: number) =>
      spent(since) > budgetMs || now - since.wall > budgetMs * WALL_BUDGETS;
    const budgetMs = overBy(this.since, this.budgetMs) ? this.budgetMs : overBy(this.jobSince, this.jobBudgetMs) ? this.jobBudgetMs : 0;
    if (!budgetMs) return;
    this.restarts++;
    this.end();
    this.finish(job, { type: "skipped", seq: job.seq, reason: tookTooLong(budgetMs) });
  }

  /** The worker died under a job: that job is skipped (it would stop the reader again each scan), the next starts another worker. */
  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.end();
    const job = this.current;
    if (job) this.finish(job, this.closed ? error : { type: "skipped", seq: job.seq, reason: STOPPED_THE_READER });
  }

  /** Ends the worker's thread now (a job running in it runs no further). */
  private end(): void {
    const worker = this.worker;
    this.worker = undefined;
    this.started = undefined;
    worker?.terminate();
  }

  /** Bun's Worker keeps the process alive while referenced: only while a job is under way. */
  private hold(ref: boolean): void {
    const worker = this.worker as unknown as { ref(): void; unref(): void } | undefined;
    if (ref) worker?.ref();
    else worker?.unref();
  }

  /** Ends the worker; jobs waiting or under way are rejected. */
  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    const error = new Error("the reader is closed");
    for (const job of [...this.urgent.splice(0), ...this.background.splice(0)]) job.settle(error);
    const job = this.current;
    this.current = undefined;
    this.end();
    job?.settle(error);
  }
}

let shared: SourceReader | undefined;

/** The process's reader, started on first use: every connector's reading goes through it. */
export const sharedReader = (): SourceReader => (shared ??= new SourceReader());
