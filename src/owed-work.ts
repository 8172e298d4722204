// Work an answer promised and the service still owes after sending it (D29): archive vectors,
// connector embeddings, webhook deliveries, a deletion's scrub. Each is written durably in the
// answer's (or event's) own transaction by the room that owns it; this resumes all of it at start,
// not at first use, tries again what is stuck, and keeps count: one log line at start, then a line
// when the counts moved meaningfully (at most one a minute, and one when all is done). Given
// leases (several nodes on one database, D33), a kind is resumed by the node that holds its
// lease, renewed while it works: the others leave it, and take it up once a dead node's lease expired.
// What is owed is counted where it is kept: at once from the embedded database, later from the
// shared one (every node then counts, and resumes, the same work).
import type { OwedKind, OwedWorkCountsT } from "./health/model";
import { errorSummary } from "./jobs/guard";
import { type NodeLeases, underLease } from "./jobs/leases";
import type { Logger } from "./log";
import { type Awaitable, andThen } from "./store/shared";

export const OWED_CHECK_MS = 5_000;
export const OWED_LOG_INTERVAL_MS = 60_000;
/** A change smaller than this (and than half the last count logged) is not worth a line. */
export const OWED_LOG_MIN_CHANGE = 50;
/** How long a node's lease on a kind of owed work lasts unless renewed (a third of it apart). */
export const OWED_LEASE_MS = 60_000;

/** The leases owed work is resumed under, and this node's id in them. */
export type OwedLeases = NodeLeases;

/** The work's name in the leases. */
export const owedLeaseName = (kind: OwedKind) => `owed/${kind}`;

export interface OwedTask {
  kind: OwedKind;
  count(): Awaitable<number>;
  /** Does (or starts) the owed work; resolves when this round is done. Left out: the kind resumes itself. */
  resume?(): unknown;
}

const jobName = (kind: OwedKind) => `owed_${kind}`;

type Schedule = (fn: () => void, ms: number) => { unref?(): unknown };

export class OwedWork {
  private timer?: ReturnType<Schedule>;
  private stopped = false;
  private readonly running = new Set<OwedKind>();
  private readonly failed = new Set<OwedKind>();
  /** Kinds whose failure was logged and that have not succeeded since. */
  private readonly streaks = new Set<OwedKind>();
  /** The counts at the previous check: a kind that did not go down since is stuck and resumed again. */
  private previous?: Partial<OwedWorkCountsT>;
  private logged?: OwedWorkCountsT;
  private loggedAt = 0;

  constructor(
    private readonly tasks: OwedTask[],
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
    private readonly schedule: Schedule = setInterval,
    private readonly cancel: (timer: ReturnType<Schedule>) => void = (t) => clearInterval(t as ReturnType<typeof setInterval>),
    /** The background guard (jobs/guard.ts): failures logged once per streak, storage errors shown in health. */
    private readonly guard?: { run(job: string, fn: () => unknown): Promise<boolean>; report(job: string, error?: unknown): void },
    /** Several nodes: each kind resumed by the one holding its lease. None: this node alone. */
    private readonly leased?: OwedLeases,
  ) {}

  /** The counts per kind (a kind whose count cannot be read is left out): at once when every kind answers at once. */
  counts(): Awaitable<Partial<OwedWorkCountsT>> {
    const out: Partial<OwedWorkCountsT> = {};
    const later: Promise<void>[] = [];
    for (const task of this.tasks) {
      try {
        const n = task.count();
        if (n instanceof Promise)
          later.push(
            n.then(
              (v) => void (out[task.kind] = v),
              // The database is unavailable: the health route says so.
              () => {},
            ),
          );
        else out[task.kind] = n;
      } catch {
        // The database is unavailable: the health route says so.
      }
    }
    return later.length ? Promise.all(later).then(() => out) : out;
  }

  /** All counts, or undefined when one cannot be read. */
  complete(): Awaitable<OwedWorkCountsT | undefined> {
    return andThen(this.counts(), (c) => (this.tasks.every((t) => c[t.kind] !== undefined) ? (c as OwedWorkCountsT) : undefined));
  }

  /** At start: logs what is owed from before, resumes every kind, and checks again every OWED_CHECK_MS. */
  start(intervalMs = OWED_CHECK_MS): void {
    if (this.timer) return;
    this.timer = this.schedule(() => void this.check(), intervalMs);
    this.timer.unref?.();
    void andThen(this.counts(), (counts) => {
      this.logged = { archive_vectors: 0, connector_chunks: 0, webhook_deliveries: 0, deletion_steps: 0, ...counts };
      this.loggedAt = this.now();
      this.log.info("owed work at start", counts);
      if (this.stopped) return;
      for (const task of this.tasks) this.resume(task);
      this.previous = counts;
    });
  }

  private resume(task: OwedTask): void {
    if (!task.resume || this.running.has(task.kind)) return;
    this.running.add(task.kind);
    this.failed.delete(task.kind);
    const leased = this.leased;
    const resume = leased ? () => this.underLease(task, leased) : task.resume;
    void (this.guard ? this.guard.run(jobName(task.kind), resume) : this.runOwn(task.kind, resume))
      .then((ok) => {
        // Work cut short by shutdown is owed to the next start, not failed.
        if (!ok && !this.stopped) this.failed.add(task.kind);
      })
      .finally(() => this.running.delete(task.kind));
  }

  /** The kind resumed if this node gets its lease (renewed meanwhile, released after); else left to the node that holds it. */
  private async underLease(task: OwedTask, { leases, holder }: OwedLeases): Promise<void> {
    await underLease(leases, owedLeaseName(task.kind), holder, OWED_LEASE_MS, () => task.resume!(), {
      // Taken by another node while this one stalled: the work goes on here, the other does it too.
      lost: () => this.log.warning("owed work's lease lost while it ran", { kind: task.kind }),
      notRenewed: (error) => this.log.warning("owed work's lease not renewed", { kind: task.kind, ...errorSummary(error) }),
    });
  }

  /** Without the background guard: a failure logged once per streak (its name and code, no message). */
  private async runOwn(kind: OwedKind, fn: () => unknown): Promise<boolean> {
    try {
      await fn();
      this.streaks.delete(kind);
      return true;
    } catch (error) {
      if (!this.streaks.has(kind) && !this.stopped)
        this.log.warning("owed work failed; tried again shortly", { kind, ...errorSummary(error) });
      this.streaks.add(kind);
      return false;
    }
  }

  /** One check: stuck or failed kinds resumed again, and a log line if the counts moved enough. */
  check(): Awaitable<Partial<OwedWorkCountsT>> {
    return andThen(this.counts(), (counts) => this.checked(counts));
  }

  private checked(counts: Partial<OwedWorkCountsT>): Partial<OwedWorkCountsT> {
    if (this.stopped) return counts;
    for (const task of this.tasks) {
      const n = counts[task.kind];
      const before = this.previous?.[task.kind];
      if (n === 0 && this.failed.has(task.kind) && !this.running.has(task.kind)) {
        // Done meanwhile by other means (a live answer's own embedding, another retry): no longer failing.
        this.failed.delete(task.kind);
        this.streaks.delete(task.kind);
        this.guard?.report(jobName(task.kind));
      }
      if (n === undefined || n === 0) continue;
      if (this.failed.has(task.kind) || (before !== undefined && n >= before)) this.resume(task);
    }
    this.previous = counts;
    this.maybeLog(counts);
    return counts;
  }

  private maybeLog(counts: Partial<OwedWorkCountsT>): void {
    const last = this.logged;
    if (!last) return;
    const kinds = Object.keys(counts) as OwedKind[];
    const moved = kinds.some((k) => {
      const was = last[k];
      const is = counts[k]!;
      return (was > 0 && is === 0) || Math.abs(is - was) >= Math.max(OWED_LOG_MIN_CHANGE, was / 2);
    });
    if (!moved) return;
    const allDone = kinds.every((k) => counts[k] === 0);
    if (!allDone && this.now() - this.loggedAt < OWED_LOG_INTERVAL_MS) return;
    this.logged = { ...last, ...counts };
    this.loggedAt = this.now();
    this.log.info(allDone ? "owed work done" : "owed work", counts);
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) this.cancel(this.timer);
    this.timer = undefined;
  }
}
