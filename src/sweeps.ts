// What would otherwise only grow (issue 13, item 11) is swept on one timer: refilled per-IP
// buckets, expired idempotency records, expired and revoked token rows. Each task judges age by
// the services' clock; the timer is unref'd (it never keeps the process up), and a task that
// fails (a full disk, a closed database) is logged and tried again at the next sweep.
import type { BackgroundGuard } from "./jobs/guard";
import type { Logger } from "./log";
import type { Awaitable } from "./store/shared";

export const SWEEP_INTERVAL_MS = 60_000;

export interface SweepTask {
  name: string;
  /** Removes what has expired; returns how many entries went, when it knows (a shared store's, later: D33). */
  run(): Awaitable<number | undefined>;
}

type Schedule = (fn: () => void, ms: number) => { unref?(): unknown };

export class Sweeps {
  private timer?: ReturnType<Schedule>;

  constructor(
    private readonly tasks: SweepTask[],
    private readonly log: Logger,
    private readonly schedule: Schedule = setInterval,
    private readonly cancel: (timer: ReturnType<Schedule>) => void = (t) => clearInterval(t as ReturnType<typeof setInterval>),
    /** Told each task's outcome: a full disk is then logged once and reported in health (D29). */
    private readonly guard?: BackgroundGuard,
  ) {}

  start(intervalMs = SWEEP_INTERVAL_MS): void {
    if (this.timer) return;
    this.timer = this.schedule(() => this.run(), intervalMs);
    this.timer.unref?.();
  }

  /** One sweep of every task, now; returns what each removed (a task of a shared store goes on behind, not counted here). */
  run(): Record<string, number> {
    const removed: Record<string, number> = {};
    for (const task of this.tasks) {
      try {
        const n = task.run();
        if (n instanceof Promise) {
          void n.then(
            () => this.done(task),
            (error: unknown) => this.done(task, error),
          );
          continue;
        }
        removed[task.name] = n ?? 0;
        this.done(task);
      } catch (error) {
        this.done(task, error);
      }
    }
    if (Object.values(removed).some((n) => n > 0)) this.log.debug("swept", removed);
    return removed;
  }

  private done(task: SweepTask, error?: unknown): void {
    if (this.guard) this.guard.report(`sweep ${task.name}`, error);
    else if (error !== undefined)
      this.log.warning("sweep failed; tried again at the next one", {
        task: task.name,
        error: error instanceof Error ? error.message : String(error),
      });
  }

  stop(): void {
    if (this.timer) this.cancel(this.timer);
    this.timer = undefined;
  }
}
