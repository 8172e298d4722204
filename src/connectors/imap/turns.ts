// Turns on a few shared connections, fair between callers (issue 13, attack report finding 6:
// one user's stream of heavy searches kept an operator's mailbox busy, and so unavailable to
// every other user). Each caller has at most one operation running and one waiting; a newer
// one replaces the one waiting (whose caller has moved on); a free connection goes to the
// waiting caller served least recently. An operation whose caller gave up (its signal) leaves
// the line at once.
import { ConnectorError } from "../types";

/** Callers remembered for their last turn; beyond, the longest unserved are forgotten. */
const SERVED_MEMORY = 10_000;

export const SUPERSEDED = "replaced by a newer search of the same user";
export const GAVE_UP = "the search gave up waiting";

interface Job {
  caller: string;
  op: (slot: number) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class Turns {
  private readonly free: number[];
  private readonly waiting = new Map<string, Job>();
  private readonly running = new Set<string>();
  /** The turn number each caller was last served at (insertion order: least recent first). */
  private readonly served = new Map<string, number>();
  private turn = 0;
  private idlers: Array<() => void> = [];

  constructor(slots: number) {
    this.free = Array.from({ length: slots }, (_, i) => i);
  }

  /** Runs `op` on a free slot in the caller's turn. */
  run<T>(caller: string, op: (slot: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (signal?.aborted) return reject(new ConnectorError(GAVE_UP));
      const earlier = this.waiting.get(caller);
      if (earlier) this.leave(earlier, SUPERSEDED);
      const job: Job = { caller, op, resolve: resolve as (v: unknown) => void, reject, signal };
      if (signal) {
        job.onAbort = () => {
          if (this.waiting.get(caller) === job) this.leave(job, GAVE_UP);
        };
        signal.addEventListener("abort", job.onAbort, { once: true });
      }
      this.waiting.set(caller, job);
      this.next();
    });
  }

  /** Resolves once nothing runs or waits. */
  idle(): Promise<void> {
    if (this.running.size === 0 && this.waiting.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idlers.push(resolve));
  }

  private leave(job: Job, why: string): void {
    this.waiting.delete(job.caller);
    if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
    job.reject(new ConnectorError(why));
    this.settled();
  }

  /** The waiting job of the caller served least recently, among those with nothing running. */
  private pick(): Job | undefined {
    let best: Job | undefined;
    let bestTurn = Infinity;
    for (const job of this.waiting.values()) {
      if (this.running.has(job.caller)) continue;
      const turn = this.served.get(job.caller) ?? -1;
      if (turn < bestTurn) [best, bestTurn] = [job, turn];
    }
    return best;
  }

  private next(): void {
    while (this.free.length) {
      const job = this.pick();
      if (!job) return;
      // The lowest free slot: a second connection is opened only while two operations run.
      this.free.sort((a, b) => a - b);
      const slot = this.free.shift()!;
      this.waiting.delete(job.caller);
      if (job.onAbort) job.signal?.removeEventListener("abort", job.onAbort);
      this.running.add(job.caller);
      this.served.delete(job.caller);
      this.served.set(job.caller, this.turn++);
      if (this.served.size > SERVED_MEMORY) this.served.delete(this.served.keys().next().value!);
      job
        .op(slot)
        .then(job.resolve, job.reject)
        .finally(() => {
          this.running.delete(job.caller);
          this.free.push(slot);
          this.next();
          this.settled();
        });
    }
  }

  private settled(): void {
    if (this.running.size || this.waiting.size) return;
    const idlers = this.idlers;
    this.idlers = [];
    for (const resolve of idlers) resolve();
  }
}
