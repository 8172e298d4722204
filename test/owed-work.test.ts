// The runner of owed work (D29): everything resumed at start, a failed or stuck kind tried again,
// counts in the log at start and then only when they moved meaningfully, at most once a minute.
import { describe, expect, test } from "bun:test";
import type { OwedKind } from "../src/health/model";
import { BackgroundGuard } from "../src/jobs/guard";
import { createLogger, memorySink } from "../src/log";
import { OWED_LOG_INTERVAL_MS, type OwedTask, OwedWork } from "../src/owed-work";

function setup(tasks: OwedTask[], start = 1_000_000) {
  let clock = start;
  const logs = memorySink();
  let tick: (() => void) | undefined;
  const owed = new OwedWork(
    tasks,
    createLogger("INFO", logs.sink),
    () => clock,
    (fn) => ((tick = fn), {}),
    () => (tick = undefined),
  );
  return {
    owed,
    lines: () => logs.records().filter((r) => String(r.message).startsWith("owed work")),
    warnings: () => logs.records().filter((r) => r.level === "WARNING"),
    /** One check, `ms` later. */
    later(ms: number) {
      clock += ms;
      tick!();
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

function counter(kind: OwedKind, n: number, resume?: () => unknown) {
  const task = { kind, n, resumed: 0, count: () => task.n, resume: resume && (() => (task.resumed++, resume())) };
  return task;
}

describe("owed work", () => {
  test("at start: one line with every count, and every kind resumed at once", () => {
    const archive = counter("archive_vectors", 7, () => undefined);
    const chunks = counter("connector_chunks", 0, () => undefined);
    const { owed, lines } = setup([archive, chunks, counter("webhook_deliveries", 2), counter("deletion_steps", 1, () => undefined)]);
    owed.start();
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).toMatchObject({
      message: "owed work at start",
      archive_vectors: 7,
      connector_chunks: 0,
      webhook_deliveries: 2,
      deletion_steps: 1,
    });
    // Even a kind with nothing counted: a connector's first scan is owed without chunks yet.
    expect([archive.resumed, chunks.resumed]).toEqual([1, 1]);
    expect(owed.complete()).toEqual({ archive_vectors: 7, connector_chunks: 0, webhook_deliveries: 2, deletion_steps: 1 });
  });

  test("a failed kind is tried again at the next check; a stuck one too; one going down or running is left alone", async () => {
    let fail = true;
    const failing = counter("deletion_steps", 1, () => {
      if (fail) throw new Error("database or disk is full");
    });
    let finish!: () => void;
    const slow = counter("archive_vectors", 100, () => new Promise<void>((r) => (finish = r)));
    const moving = counter("connector_chunks", 500, () => undefined);
    const { owed, later, warnings } = setup([failing, slow, moving]);
    owed.start();
    await settle();
    // Its name, never its message (which may carry paths).
    expect(warnings().map((w) => [w.message, w.kind, w.error])).toEqual([
      ["owed work failed; tried again shortly", "deletion_steps", "Error"],
    ]);
    fail = false;
    moving.n = 400;
    later(5_000);
    await settle();
    // Retried after its failure; the archive still runs (not twice); the connectors go down.
    expect([failing.resumed, slow.resumed, moving.resumed]).toEqual([2, 1, 1]);
    finish();
    await settle();
    later(5_000);
    // Finished but nothing went down since: stuck, resumed again; the connectors did not move: too.
    expect([failing.resumed, slow.resumed, moving.resumed]).toEqual([3, 2, 2]);
  });

  test("the log: only meaningful moves, at most one line a minute, and one when all is done", () => {
    const archive = counter("archive_vectors", 0);
    const chunks = counter("connector_chunks", 10_000);
    const { owed, later, lines } = setup([archive, chunks]);
    owed.start();
    // Ten minutes of checks every 5 s: the backlog shrinks steadily, answers come and go.
    for (let i = 1; i <= 120; i++) {
      chunks.n = Math.max(0, 10_000 - i * 90);
      archive.n = i % 3;
      later(5_000);
    }
    chunks.n = 0;
    archive.n = 0;
    later(5_000);
    const logged = lines();
    expect(logged[0]!.message).toBe("owed work at start");
    expect(logged.at(-1)).toMatchObject({ message: "owed work done", connector_chunks: 0, archive_vectors: 0 });
    // 10 minutes: at most one line a minute between start and done.
    expect(logged.length).toBeLessThanOrEqual(2 + (125 * 5_000) / OWED_LOG_INTERVAL_MS);
    expect(logged.length).toBeGreaterThan(3);
    // Answers' few vectors in flight are no news.
    for (const l of logged.slice(1, -1)) expect(l.connector_chunks as number).toBeGreaterThan(0);
  });

  test("small changes are not logged; a count that cannot be read is left out", () => {
    const archive = counter("archive_vectors", 3);
    const broken: OwedTask = {
      kind: "webhook_deliveries",
      count: () => {
        throw new Error("database is closed");
      },
    };
    const { owed, later, lines } = setup([archive, broken]);
    owed.start();
    archive.n = 5;
    later(OWED_LOG_INTERVAL_MS);
    archive.n = 4;
    later(OWED_LOG_INTERVAL_MS);
    expect(lines()).toHaveLength(1);
    expect(lines()[0]).not.toHaveProperty("webhook_deliveries");
    expect(owed.complete()).toBeUndefined();
    archive.n = 0;
    later(5_000);
    expect(lines().map((l) => l.message)).toEqual(["owed work at start", "owed work done"]);
  });

  test("through the background guard: a failed kind whose work got done by other means recovers (health no longer says so)", async () => {
    const logs = memorySink();
    const guard = new BackgroundGuard(createLogger("INFO", logs.sink));
    const full = Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    const archive = counter("archive_vectors", 4, () => {
      throw full;
    });
    let tick!: () => void;
    const owed = new OwedWork(
      [archive],
      createLogger("INFO", logs.sink),
      Date.now,
      (fn) => ((tick = fn), {}),
      () => {},
      guard,
    );
    owed.start();
    await settle();
    expect(guard.storageFailing()).toEqual(["owed_archive_vectors"]);
    // The answer's own embedding stored them once space came back.
    archive.n = 0;
    tick();
    expect(guard.storageFailing()).toEqual([]);
    expect(logs.records().map((l) => l.message)).toContain("background job recovered");
  });
});
