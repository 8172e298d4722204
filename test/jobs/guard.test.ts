// The background guard (D29): no failure escapes, one log line per streak with the job's name and
// no message or stack, storage failures reported until a pass succeeds, retries with backoff on
// an injected clock.
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { BackgroundGuard, errorSummary, RETRY_MAX_MS, retryDelay } from "../../src/jobs/guard";
import { createLogger, memorySink } from "../../src/log";

/** A real SQLITE_FULL: a database that may not grow past its current size. */
function fullDatabase(): Database {
  const db = new Database(":memory:");
  db.exec("CREATE TABLE t (x BLOB)");
  const { page_count } = db.query<{ page_count: number }, []>("PRAGMA page_count").get()!;
  db.exec(`PRAGMA max_page_count = ${page_count}`);
  return db;
}
const writeTooMuch = (db: Database) => db.query("INSERT INTO t VALUES (?)").run(new Uint8Array(64 * 1024));

/** A clock the test moves: scheduled callbacks run when it passes their time. */
function fakeClock() {
  let now = 0;
  const waiting: Array<{ at: number; fn: () => void; ms: number }> = [];
  return {
    schedule: (fn: () => void, ms: number) => waiting.push({ at: now + ms, fn, ms }),
    delays: () => waiting.map((w) => w.ms),
    async advance(ms: number) {
      now += ms;
      for (const w of waiting.filter((w) => w.at <= now)) {
        waiting.splice(waiting.indexOf(w), 1);
        w.fn();
      }
      for (let i = 0; i < 5; i++) await Promise.resolve();
      await Bun.sleep(0);
    },
  };
}

function setup() {
  const logs = memorySink();
  const clock = fakeClock();
  const guard = new BackgroundGuard(createLogger("DEBUG", logs.sink), clock.schedule);
  return { guard, logs, clock };
}

describe("BackgroundGuard", () => {
  test("a throwing or rejecting pass never escapes; it is logged once per streak with the job's name, no message or stack", async () => {
    const { guard, logs } = setup();
    const secret = new Error("postgres://user:hunter2@db/x refused");
    expect(
      await guard.run("sync_job", () => {
        throw secret;
      }),
    ).toBe(false);
    expect(
      await guard.run("sync_job", () => {
        throw secret;
      }),
    ).toBe(false);
    expect(await guard.run("async_job", () => Promise.reject(secret))).toBe(false);
    const lines: any[] = logs.records();
    expect(lines.filter((l) => l.job === "sync_job")).toHaveLength(1);
    expect(lines.find((l) => l.job === "async_job")).toMatchObject({
      level: "ERROR",
      message: "background job failed; it goes on",
      error: "Error",
    });
    expect(JSON.stringify(logs.records())).not.toContain("hunter2");
    expect(JSON.stringify(logs.records())).not.toContain(" at ");
    expect(await guard.run("sync_job", () => {})).toBe(true);
    expect(logs.records().at(-1)).toMatchObject({ message: "background job recovered", job: "sync_job" });
  });

  test("a real SQLITE_FULL is a storage failure, reported until a pass succeeds", async () => {
    const { guard, logs } = setup();
    const db = fullDatabase();
    const tick = guard.wrap("flush", () => writeTooMuch(db));
    for (let i = 0; i < 10; i++) tick();
    await Bun.sleep(0);
    expect(guard.storageFailing()).toEqual(["flush"]);
    const paused = (logs.records() as any[]).filter((l) => l.job === "flush");
    expect(paused).toEqual([expect.objectContaining({ level: "WARNING", code: "SQLITE_FULL", error: "SQLiteError" })]);
    db.exec("PRAGMA max_page_count = 100000");
    tick();
    await Bun.sleep(0);
    expect(guard.storageFailing()).toEqual([]);
  });

  test("report() records a job's own outcome", () => {
    const { guard } = setup();
    guard.report("indexing", Object.assign(new Error("x"), { code: "ENOSPC" }));
    expect(guard.storageFailing()).toEqual(["indexing"]);
    guard.report("indexing");
    expect(guard.storageFailing()).toEqual([]);
  });

  test("once space is back, storage failures are forgotten (a seldom job no longer holds health at 503); others stay", () => {
    const { guard } = setup();
    guard.report("sweeps", Object.assign(new Error("x"), { code: "SQLITE_FULL" }));
    guard.report("webhooks", new Error("a bug, not the disk"));
    guard.forgetStorageFailures();
    expect(guard.storageFailing()).toEqual([]);
    // A job that still cannot write says so on its next pass.
    guard.report("sweeps", Object.assign(new Error("x"), { code: "ENOSPC" }));
    expect(guard.storageFailing()).toEqual(["sweeps"]);
  });

  test("a retrier tries again with doubling delays on the injected clock, until a pass succeeds, and is not started twice", async () => {
    const { guard, clock } = setup();
    const db = fullDatabase();
    let passes = 0;
    const retry = guard.retrier("archive_vectors", () => {
      passes++;
      writeTooMuch(db);
    });
    retry.trigger();
    retry.trigger();
    await clock.advance(0);
    expect(passes).toBe(1);
    expect(clock.delays()).toEqual([1_000]);
    await clock.advance(1_000);
    expect(passes).toBe(2);
    expect(clock.delays()).toEqual([2_000]);
    retry.trigger(); // a retry is waiting: no second pass
    await clock.advance(0);
    expect(passes).toBe(2);
    db.exec("PRAGMA max_page_count = 100000");
    await clock.advance(2_000);
    expect(passes).toBe(3);
    expect(retry.failures).toBe(0);
    expect(clock.delays()).toEqual([]);
    expect(guard.storageFailing()).toEqual([]);
  });

  test("retry delays are bounded", () => {
    expect([1, 2, 3, 4].map(retryDelay)).toEqual([1_000, 2_000, 4_000, 8_000]);
    expect(retryDelay(50)).toBe(RETRY_MAX_MS);
  });

  test("errorSummary gives name and code only", () => {
    expect(errorSummary(Object.assign(new Error("secret path /home/x"), { code: "EIO" }))).toEqual({ error: "Error", code: "EIO" });
    expect(errorSummary("text")).toEqual({ error: "string" });
  });
});

describe("the process handlers", () => {
  test("an exception or rejection nothing caught is logged (name and code, no message) and the process goes on", async () => {
    const guardModule = join(import.meta.dir, "../../src/jobs/guard.ts");
    const logModule = join(import.meta.dir, "../../src/log.ts");
    const script = `
      const { BackgroundGuard } = await import(${JSON.stringify(guardModule)});
      const { createLogger } = await import(${JSON.stringify(logModule)});
      new BackgroundGuard(createLogger("INFO", (l) => console.log(l))).installProcessHandlers();
      setTimeout(() => { throw Object.assign(new Error("secret /home/alice"), { code: "SQLITE_FULL" }); }, 1);
      Promise.reject(new Error("secret token"));
      setTimeout(() => console.log("alive"), 30);
    `;
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", stderr: "pipe" });
    const [code, out] = await Promise.all([proc.exited, new Response(proc.stdout).text()]);
    expect(code).toBe(0);
    expect(out).toContain("alive");
    const records = out
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l));
    expect(records.map((r) => r.job)).toEqual(["unguarded", "unguarded"]);
    expect(records.map((r) => r.code ?? null).sort()).toEqual(["SQLITE_FULL", null].sort());
    expect(out).not.toContain("secret");
  });
});
