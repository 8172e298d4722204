// Progress of a connector's work as a person follows it (issue 14): what phase it is in, how
// much of it is done, how fast it goes over the last RATE_WINDOW_MS and how long is left at that
// pace. The clock is injected, so the arithmetic is tested without waiting.
import type { Logger } from "../log";

/** Reading records into the word index (counted in source files), then embedding their chunks (a live source's newest records: embed-ahead.ts). */
export type ProgressPhase = "indexing" | "embedding";
export type ProgressUnit = "files" | "chunks" | "records";

/** The rate is taken over this window: recent enough to follow a slowdown, long enough to be steady. */
export const RATE_WINDOW_MS = 30_000;
/** At most one progress line per connector and phase this often (and one when the phase ends). */
export const PROGRESS_LOG_INTERVAL_MS = 10_000;

/** What GET /v1/connectors shows of a phase under way (model.ts ConnectorProgress). */
export interface ProgressView {
  phase: ProgressPhase;
  unit: ProgressUnit;
  done: number;
  total: number;
  /** Units per second over the last RATE_WINDOW_MS; null until the phase has done something. */
  rate_per_second: number | null;
  /** At the current rate; null while the rate is unknown or zero. */
  eta_seconds: number | null;
  started_at: string;
}

interface Sample {
  at: number;
  done: number;
}

const round1 = (x: number) => Math.round(x * 10) / 10;

/** One phase of one connector, from its start to its end. */
export class PhaseProgress {
  readonly startedAt: number;
  private readonly doneAtStart: number;
  /** Oldest first; the first one is at or before the window's start (the anchor of the rate). */
  private readonly samples: Sample[];
  private lastLog: number;

  constructor(
    readonly phase: ProgressPhase,
    readonly unit: ProgressUnit,
    private done: number,
    private total: number,
    private readonly now: () => number,
  ) {
    this.startedAt = now();
    this.doneAtStart = done;
    this.samples = [{ at: this.startedAt, done }];
    this.lastLog = this.startedAt;
  }

  /** Where the work stands now (the total may grow: a rescan can add chunks meanwhile). */
  update(done: number, total: number = this.total): void {
    const at = this.now();
    this.done = done;
    this.total = Math.max(total, done);
    this.samples.push({ at, done });
    this.prune(at);
  }

  /** Drops samples the window no longer needs, keeping the newest one at or before its start. */
  private prune(at: number): void {
    while (this.samples.length > 1 && this.samples[1]!.at <= at - RATE_WINDOW_MS) this.samples.shift();
  }

  /** Units per second over the window; null while nothing was done in this phase or no time passed. */
  rate(): number | null {
    const at = this.now();
    this.prune(at);
    if (this.done === this.doneAtStart) return null;
    const first = this.samples[0]!;
    const elapsed = at - first.at;
    if (elapsed <= 0) return null;
    // Up to now, not to the last sample: work that stalls shows a falling rate.
    return round1(((this.done - first.done) * 1000) / elapsed);
  }

  /** Seconds left at the current rate; null when the rate is unknown or zero. */
  eta(rate: number | null = this.rate()): number | null {
    const left = this.total - this.done;
    if (left <= 0) return 0;
    return rate ? Math.ceil(left / rate) : null;
  }

  view(): ProgressView {
    const rate = this.rate();
    return {
      phase: this.phase,
      unit: this.unit,
      done: this.done,
      total: this.total,
      rate_per_second: rate,
      eta_seconds: this.eta(rate),
      started_at: new Date(this.startedAt).toISOString(),
    };
  }

  /** A log line every PROGRESS_LOG_INTERVAL_MS at most: done, total, rate and time left. */
  report(log: Logger | undefined, message: string): void {
    const at = this.now();
    if (!log || at - this.lastLog < PROGRESS_LOG_INTERVAL_MS) return;
    this.lastLog = at;
    const rate = this.rate();
    log.info(message, { done: this.done, total: this.total, [`${this.unit}_per_second`]: rate, eta_seconds: this.eta(rate) });
  }

  /** The whole phase: units done in it, seconds it took and units per second (the completion line). */
  summary(): { done: number; seconds: number; per_second: number | null } {
    const ms = this.now() - this.startedAt;
    const done = this.done - this.doneAtStart;
    return { done, seconds: round1(ms / 1000), per_second: ms > 0 ? round1((done * 1000) / ms) : null };
  }
}
