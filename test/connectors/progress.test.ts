// The progress arithmetic (issue 14) on an injected clock: rate over a sliding window, time
// left, the log at most every PROGRESS_LOG_INTERVAL_MS, the completion summary.
import { describe, expect, test } from "bun:test";
import {
  PhaseProgress,
  PROGRESS_LOG_INTERVAL_MS,
  type ProgressPhase,
  type ProgressUnit,
  RATE_WINDOW_MS,
} from "../../src/connectors/progress";
import { createLogger, memorySink } from "../../src/log";

const START = Date.parse("2026-03-01T09:00:00.000Z");

/** A phase on a clock of its own from START: `advance` moves the clock on; `after` moves it on, then counts what is done. */
function phase(name: ProgressPhase, unit: ProgressUnit, doneAtStart: number, total: number) {
  let at = START;
  const p = new PhaseProgress(name, unit, doneAtStart, total, () => at);
  const advance = (ms: number) => {
    at += ms;
  };
  const after = (ms: number, done: number, newTotal?: number) => {
    advance(ms);
    p.update(done, newTotal);
  };
  return { p, advance, after };
}

describe("PhaseProgress", () => {
  test("before anything is done the rate and the time left are unknown", () => {
    const { p, advance } = phase("embedding", "chunks", 0, 10_053);
    expect(p.view()).toEqual({
      phase: "embedding",
      unit: "chunks",
      done: 0,
      total: 10_053,
      rate_per_second: null,
      eta_seconds: null,
      started_at: "2026-03-01T09:00:00.000Z",
    });
    // Time passing with nothing done (the model loading) does not make a rate of it yet.
    advance(5_000);
    expect(p.view()).toMatchObject({ rate_per_second: null, eta_seconds: null });
  });

  test("rate and time left from what was done since the phase started", () => {
    const { p, after } = phase("embedding", "chunks", 0, 1_000);
    after(4_000, 40);
    expect(p.view()).toMatchObject({ done: 40, total: 1_000, rate_per_second: 10, eta_seconds: 96 });
    after(1_000, 60);
    // 60 in 5 s: 12/s; 940 left: 78.3 s, rounded up.
    expect(p.view()).toMatchObject({ done: 60, rate_per_second: 12, eta_seconds: 79 });
  });

  test("a phase that resumes counts only its own work (done at start is not a rate)", () => {
    const { p, after } = phase("embedding", "chunks", 900, 1_000);
    after(2_000, 916);
    expect(p.view()).toMatchObject({ done: 916, rate_per_second: 8, eta_seconds: 11 });
  });

  test("the rate follows the last RATE_WINDOW_MS: a slow start is forgotten, a stall shows", () => {
    const { p, advance, after } = phase("embedding", "chunks", 0, 10_000);
    // A slow minute (1/s), then a fast one (20/s), sampled every second.
    for (let i = 1; i <= 60; i++) after(1_000, i);
    expect(p.rate()).toBe(1);
    for (let i = 1; i <= 60; i++) after(1_000, 60 + 20 * i);
    // Only the fast minute is in the window.
    expect(p.rate()).toBe(20);
    expect(p.eta()).toBe(Math.ceil((10_000 - 1_260) / 20));
    // Stalled for half the window: the rate halves; stalled past it, nothing is done in it.
    advance(RATE_WINDOW_MS / 2);
    expect(p.rate()).toBe(10);
    advance(RATE_WINDOW_MS);
    expect(p.rate()).toBe(0);
    expect(p.eta()).toBeNull();
  });

  test("samples are pruned: a long phase keeps a window's worth, not its history", () => {
    const { p, after } = phase("indexing", "files", 0, 1_000_000);
    for (let i = 1; i <= 100_000; i++) after(100, i);
    const samples = (p as unknown as { samples: unknown[] }).samples.length;
    expect(samples).toBeLessThanOrEqual(RATE_WINDOW_MS / 100 + 1);
    expect(p.rate()).toBe(10);
  });

  test("the total may grow (a rescan added chunks); done never exceeds it; nothing left is 0 s", () => {
    const { p, after } = phase("embedding", "chunks", 0, 100);
    after(1_000, 50, 300);
    expect(p.view()).toMatchObject({ done: 50, total: 300, rate_per_second: 50, eta_seconds: 5 });
    after(1_000, 300, 300);
    expect(p.eta()).toBe(0);
  });

  test("logged at most every PROGRESS_LOG_INTERVAL_MS, with counts, rate and time left; the summary covers the phase", () => {
    const logs = memorySink();
    const log = createLogger("INFO", logs.sink).child("connectors.mail");
    const { p, after } = phase("embedding", "chunks", 0, 1_600);
    for (let i = 1; i <= 100; i++) {
      after(500, 16 * i);
      p.report(log, "connector embedding");
    }
    const lines = logs.records().filter((l) => l.message === "connector embedding");
    // 50 s of work: a line at 10, 20, 30, 40 and 50 s, no more.
    expect(lines.length).toBe((100 * 500) / PROGRESS_LOG_INTERVAL_MS);
    expect(lines[0]).toMatchObject({
      level: "INFO",
      logger: "connectors.mail",
      done: 320,
      total: 1_600,
      chunks_per_second: 32,
      eta_seconds: 40,
    });
    expect(p.summary()).toEqual({ done: 1_600, seconds: 50, per_second: 32 });
  });

  test("indexing counts files, and its rate is named so", () => {
    const logs = memorySink();
    const { p, after } = phase("indexing", "files", 0, 1_702);
    after(PROGRESS_LOG_INTERVAL_MS, 851);
    p.report(createLogger("INFO", logs.sink), "connector indexing");
    expect(logs.records()[0]).toMatchObject({ done: 851, total: 1_702, files_per_second: 85.1, eta_seconds: 10 });
  });
});
