// The memory budget (issue 14): long work collects its garbage between steps while the process is
// over budget, at most once per interval and four times its own duration; under budget it costs a
// reading of RSS and nothing more. A library's pages that only its loading ran go back to the kernel; the pages of
// a file read through a mapping (the database) leave the process with each collection.
import { describe, expect, test } from "bun:test";
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { collectMemory, dropPagesOnCollect, memoryCheck, ownMemoryBytes, releaseFilePages } from "../../src/limits/memory";
import { tempDir } from "../helpers";
import { residentKb } from "../support/held-memory";

const MB = 1024 * 1024;

function rig(rssMb: number, collectMs = 0) {
  let at = 0;
  let rss = rssMb * MB;
  let collections = 0;
  const check = memoryCheck({
    budgetBytes: 200 * MB,
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
    setRss: (mb: number) => (rss = mb * MB),
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

/** A 4 MB file of patterned bytes, mapped and each page read once; `readsTheSame` reads them all again and compares. */
function mappedFile(name: string, shared: boolean) {
  const path = join(tempDir("corpus-pages-"), name);
  const bytes = new Uint8Array(4 * MB).map((_, i) => (i * 7) & 0xff);
  writeFileSync(path, bytes);
  const mapped = Bun.mmap(path, { shared });
  const touch = () => {
    let sum = 0;
    for (let i = 0; i < mapped.length; i += 4096) sum += mapped[i]!;
    return sum;
  };
  const sum = touch();
  const readsTheSame = () => touch() === sum && Buffer.from(mapped).equals(Buffer.from(bytes));
  return { path, readsTheSame };
}

describe("releaseFilePages", () => {
  test("the pages of a mapped file held now go back; the mapping reads the same bytes after", () => {
    const file = mappedFile("library.so", false);
    expect(residentKb(file.path)).toBeGreaterThanOrEqual(4096);
    expect(releaseFilePages(/\/library\.so$/)).toBeGreaterThanOrEqual(4 * MB);
    expect(residentKb(file.path)).toBeLessThan(1024);
    expect(file.readsTheSame()).toBe(true);
  });

  test("no file of that name mapped: nothing advised", () => {
    expect(releaseFilePages(/\/no-such-library\.so$/)).toBe(0);
  });

  test("a collection drops the pages of the files named for it from the process; a shared mapping reads the same bytes after", () => {
    const file = mappedFile("dropped.db", true);
    collectMemory();
    expect(residentKb(file.path)).toBeGreaterThanOrEqual(4096);
    dropPagesOnCollect(/\/dropped\.db$/);
    collectMemory();
    expect(residentKb(file.path)).toBeLessThan(1024);
    expect(file.readsTheSame()).toBe(true);
  });

  test("attack: a private mapping of a file by that name, written to, keeps what was written", () => {
    const path = join(tempDir("corpus-drop-"), "written.db");
    writeFileSync(path, new Uint8Array(MB));
    const mapped = Bun.mmap(path, { shared: false });
    mapped.fill(9);
    dropPagesOnCollect(/\/written\.db$/);
    collectMemory();
    expect(mapped.every((b) => b === 9)).toBe(true);
  });
});

test("the budget counts the process's own memory, not the pages of the files it maps (its code, the database)", () => {
  const path = join(tempDir("corpus-own-"), "mapped.db");
  // Written a MB at a time: a 32 MB buffer left as garbage was collected at any later moment,
  // taking 32 MB out of the memory measured below as the test added its own 32 MB (grew by 16 kB
  // in the unit suite beside load).
  const fd = openSync(path, "w");
  const oneMb = new Uint8Array(MB).fill(1);
  for (let i = 0; i < 32; i++) writeSync(fd, oneMb);
  closeSync(fd);
  Bun.gc(true);
  const mapped = Bun.mmap(path, { shared: false });
  // The pages mapped, counted by walking the page tables (smaps_rollup): statm's RSS is a
  // per-CPU estimate that can lag by more than the mapping under load.
  const residentBytes = () => Number(/^Rss:\s+(\d+)/m.exec(readFileSync("/proc/self/smaps_rollup", "utf8"))![1]) * 1024;
  const [ownBefore, rssBefore] = [ownMemoryBytes(), residentBytes()];
  let sum = 0;
  for (let i = 0; i < mapped.length; i += 4096) sum += mapped[i]!;
  expect(sum).toBe(mapped.length / 4096);
  const [ownMapped, rssMapped] = [ownMemoryBytes(), residentBytes()];
  expect(rssMapped - rssBefore).toBeGreaterThan(24 * MB);
  expect(ownMapped - ownBefore).toBeLessThan(8 * MB);
  const own = new Uint8Array(32 * MB).fill(1);
  expect(ownMemoryBytes() - ownMapped).toBeGreaterThan(24 * MB);
  expect(own[own.length - 1]).toBe(1);
});
