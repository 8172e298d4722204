// Background work never ends the process (D29). Every timer and fire-and-forget job runs
// through one guard: a failure is logged once per streak with the job's name (the error's name
// and code, never its stack or message, which may carry paths or secrets), and the job goes on.
// A job that failed for want of storage is retried with backoff until a pass succeeds; while
// any is failing so, the guard says so (the connectors' health route reports it).
import type { Logger } from "../log";
import { isStorageError } from "../store/storage-errors";

/** Schedules `fn` after `ms` (setTimeout unless a test injects its own clock). */
export type Schedule = (fn: () => void, ms: number) => unknown;

export const defaultSchedule: Schedule = (fn, ms) => {
  const timer = setTimeout(fn, ms);
  // A retry never keeps the process up.
  timer.unref?.();
  return timer;
};

export const RETRY_BASE_MS = 1_000;
export const RETRY_MAX_MS = 30_000;

/** The wait before retry `attempt` (1, 2, ...): doubling from one second, at most 30 s. */
export const retryDelay = (attempt: number): number => Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));

/** What a log record says of an error: its name and code only. */
export function errorSummary(error: unknown): { error: string; code?: string } {
  if (!(error instanceof Error)) return { error: typeof error };
  const code = (error as { code?: unknown }).code;
  return { error: error.name, ...(typeof code === "string" ? { code } : {}) };
}

export class BackgroundGuard {
  /** Jobs whose last pass failed, with whether it was for want of storage. */
  private readonly failing = new Map<string, { storage: boolean }>();

  constructor(
    private readonly log: Logger,
    readonly schedule: Schedule = defaultSchedule,
  ) {}

  private failed(job: string, error: unknown): void {
    const storage = isStorageError(error);
    const before = this.failing.get(job);
    this.failing.set(job, { storage });
    if (before?.storage === storage) return; // once per streak: a job retried every second logs once
    if (storage) this.log.warning("background job paused: storage full; retried until writes succeed", { job, ...errorSummary(error) });
    else this.log.error("background job failed; it goes on", { job, ...errorSummary(error) });
  }

  private succeeded(job: string): void {
    if (this.failing.delete(job)) this.log.info("background job recovered", { job });
  }

  /** Runs one pass of `job` (synchronous or not); never throws; resolves to whether it succeeded. */
  run(job: string, fn: () => unknown): Promise<boolean> {
    try {
      const result = fn();
      if (!(result instanceof Promise)) {
        this.succeeded(job);
        return Promise.resolve(true);
      }
      return result.then(
        () => {
          this.succeeded(job);
          return true;
        },
        (error: unknown) => {
          this.failed(job, error);
          return false;
        },
      );
    } catch (error) {
      this.failed(job, error);
      return Promise.resolve(false);
    }
  }

  /** `fn` as a timer callback: each call one guarded pass. */
  wrap(job: string, fn: () => unknown): () => void {
    return () => void this.run(job, fn);
  }

  /** Reports the outcome of a pass a job ran itself (one that catches its own errors). */
  report(job: string, error?: unknown): void {
    if (error === undefined) this.succeeded(job);
    else this.failed(job, error);
  }

  /**
   * Space is back: storage failures are forgotten, so that a job which runs seldom (a sweep) does
   * not keep the health route at 503 until its next pass; one that still cannot write fails again.
   */
  forgetStorageFailures(): void {
    for (const [job, f] of [...this.failing]) if (f.storage) this.failing.delete(job);
  }

  /** Jobs failing for want of storage now. */
  storageFailing(): string[] {
    return [...this.failing].filter(([, f]) => f.storage).map(([job]) => job);
  }

  /**
   * A job that runs until it succeeds: `trigger()` starts a pass unless one is running or
   * waiting; a failed pass is tried again after retryDelay(attempts).
   */
  retrier(job: string, task: () => unknown): Retrier {
    return new Retrier(job, task, this);
  }

  /**
   * The last line of defence, for a rejection or exception nothing else caught: logged, and the
   * process goes on (Bun would otherwise exit). Installed once by the server, never in tests.
   */
  installProcessHandlers(): void {
    // Logged each time, never kept as a failing job: no later pass would clear it.
    const unguarded = (error: unknown) =>
      this.log.error("background work failed outside any guarded job; it goes on", { job: "unguarded", ...errorSummary(error) });
    process.on("uncaughtException", unguarded);
    process.on("unhandledRejection", unguarded);
  }
}

export class Retrier {
  private attempts = 0;
  private busy = false;

  constructor(
    private readonly job: string,
    private readonly task: () => unknown,
    private readonly guard: BackgroundGuard,
  ) {}

  /** Starts a pass now unless one is running or a retry is waiting. */
  trigger(): void {
    if (this.busy) return;
    this.busy = true;
    void this.pass();
  }

  private async pass(): Promise<void> {
    const ok = await this.guard.run(this.job, this.task);
    if (ok) {
      this.attempts = 0;
      this.busy = false;
      return;
    }
    this.attempts++;
    this.guard.schedule(() => void this.pass(), retryDelay(this.attempts));
  }

  /** How many passes failed since the last success. */
  get failures(): number {
    return this.attempts;
  }
}
