// The memory budget (issue 14): long work collects its garbage between steps while the process is
// over budget, at most once per interval and four times its own duration; under budget it costs a
// reading of RSS and nothing more.
import { expect, test } from "bun:test";
import { memoryCheck } from "../../src/limits/memory";

function rig(rssMb: number, collectMs = 0) {
  let at = 0;
  let rss = rssMb * 1024 * 1024;
  let collections = 0;
  const check = memoryCheck({
    budgetBytes: 200 * 1024 * 1024,
    intervalMs: 100,
    rss: () => rss,
    now: () => at,
    collect: () => {
      collections++;
      at += collectMs;
    },
  });
  return {
    check,
    advance: (ms: number) => (at += ms),
    setRss: (mb: number) => (rss = mb * 1024 * 1024),
    collections: () => collections,
  };
}

test("under budget nothing is collected, however often it is asked", () => {
  const r = rig(150);
  for (let i = 0; i < 100; i++) {
    expect(r.check()).toBe(false);
    r.advance(1_000);
  }
  expect(r.collections()).toBe(0);
});

test("over budget: one collection, then none until the interval has passed", () => {
  const r = rig(260);
  expect(r.check()).toBe(true);
  r.advance(50);
  expect(r.check()).toBe(false);
  r.advance(50);
  expect(r.check()).toBe(true);
  expect(r.collections()).toBe(2);
  // Back under budget: the next step collects nothing.
  r.setRss(180);
  r.advance(500);
  expect(r.check()).toBe(false);
  expect(r.collections()).toBe(2);
});

test("a slow collection (a large heap) waits four times its duration: at most a fifth of the thread's time", () => {
  const r = rig(400, 80);
  expect(r.check()).toBe(true);
  // 80 ms collecting: the next no sooner than 320 ms after it ended.
  r.advance(300);
  expect(r.check()).toBe(false);
  r.advance(20);
  expect(r.check()).toBe(true);
  let spent = 0;
  for (let i = 0; i < 1_000; i++) {
    if (r.check()) spent += 80;
    r.advance(10);
  }
  expect(spent / (1_000 * 10 + spent)).toBeLessThanOrEqual(1 / 5);
});

test("the real collection runs and leaves the process working (this thread's heap, the C heap trimmed)", () => {
  const check = memoryCheck({ budgetBytes: 0, intervalMs: 0 });
  expect(check()).toBe(true);
});
