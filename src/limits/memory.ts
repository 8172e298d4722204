// The memory budget (issue 14): long work in a worker (a source's reading, its embedding)
// collects that thread's garbage as it goes once the process holds more than the budget, instead
// of when the JavaScript heap's own heuristics (sized for this machine's RAM, not for a server that
// should stay small) get round to it. Never on the serving thread (D31): the memory over the
// budget is the workers' (parses, the model's runs), which a collection there cannot give back,
// and each full collection held every request (the hostile-sources bench: ~480 ms of CPU in its
// turns over 20 ms, their largest cause); what it holds is bounded by its caches' own bounds.
import { dlopen, type Pointer } from "bun:ffi";
import { readFileSync } from "node:fs";

/**
 * The process's own memory (ownMemoryBytes) above which long work collects its garbage between
 * steps. Its own, not RSS: RSS also counts the pages of files it maps (its code, onnxruntime's, the
 * database read through a mapping), which no collection gives back; 140 MB of its own is where
 * 200 MB of RSS was before the database was mapped.
 */
export const MEMORY_BUDGET_BYTES = 140 * 1024 * 1024;

/**
 * The process's anonymous resident memory (its heaps, stacks and buffers: RssAnon), or RSS where
 * the system does not say (not Linux).
 */
export function ownMemoryBytes(): number {
  try {
    const kb = /^RssAnon:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"))?.[1];
    if (kb) return Number(kb) * 1024;
  } catch {
    // No /proc: RSS below.
  }
  return process.memoryUsage.rss();
}
/**
 * At most one collection per thread this often while over budget: each is ~5-20 ms of that thread.
 * Measured on the Enron maildir: every 250 ms peaked at 302 MB while mail was read, every 100 ms at 256.
 */
export const MEMORY_CHECK_INTERVAL_MS = 100;
/**
 * A collection is followed by at least this many times its own duration without one: at most a
 * fifth of a thread's time goes to collecting, however large its heap (a process whose live data
 * is above the budget, as the test runner's, would otherwise collect without end: the Enron
 * maildir's sync took 22 s there instead of 3 s). Enron maildir with questions: peak 289 MB at 4,
 * 287 at 2, 315 at 10.
 */
export const MEMORY_CHECK_COST_RATIO = 4;

/** The two calls of the C library used here, opened once per thread; null where there is no such library (not Linux). */
type Libc = { malloc_trim(pad: number): number; madvise(at: Pointer, length: number, advice: number): number };
let libc: Libc | null | undefined;
function libcCalls(): Libc | null {
  if (libc === undefined) {
    try {
      libc = dlopen("libc.so.6", {
        malloc_trim: { args: ["usize"], returns: "i32" },
        madvise: { args: ["ptr", "usize", "i32"], returns: "i32" },
      }).symbols as unknown as Libc;
    } catch {
      libc = null;
    }
  }
  return libc;
}

/**
 * Gives memory the C allocator holds free back to the system (glibc's malloc_trim): what
 * onnxruntime used while loading the model and between runs. Nothing where there is none.
 */
export function trimMemory(): void {
  libcCalls()?.malloc_trim(0);
}

/**
 * madvise's advice for a mapped file's pages: `pageout` reclaims them now (Linux 5.4), read again
 * from the file when next used; `drop` takes them out of this process only, and a shared
 * mapping's pages stay in the page cache, mapped again by a minor fault when next read.
 */
const ADVICE = { pageout: 21, drop: 4 } as const;

/**
 * Gives back the pages of the files mapped from paths matching `file` that the process holds now
 * (each is read again from the page cache when next run). Loading onnxruntime registers its ~2,000
 * kernels, which touches 32 MB of its library once; the model's runs use 6.6 MB of it (measured
 * on the executable: RSS after a question on an idle server 154 -> 128 MB). Returns the bytes
 * advised (0 where the system has no such advice).
 */
export function releaseFilePages(file: RegExp, advice: keyof typeof ADVICE = "pageout"): number {
  const calls = libcCalls();
  if (!calls) return 0;
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return 0;
  }
  let advised = 0;
  for (const line of maps.split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s+(\/.*)$/.exec(line);
    if (!m || !file.test(m[4]!)) continue;
    // Dropped, a private mapping's written pages would be lost (read again from the file): only shared ones.
    if (advice === "drop" && m[3]![3] !== "s") continue;
    const start = Number.parseInt(m[1]!, 16);
    const length = Number.parseInt(m[2]!, 16) - start;
    if (calls.madvise(start as unknown as Pointer, length, ADVICE[advice]) === 0) advised += length;
  }
  return advised;
}

/** Files read through a shared mapping whose pages a collection drops from the process (by pattern's source). */
const droppedOnCollect = new Map<string, RegExp>();

/**
 * Mapped files (paths matching `file`) whose pages each collection drops (`drop`): a page read
 * through a mapping counts in RSS until then. The database read through its mapping held 20-67 MB
 * of RSS while the Enron maildir embedded (its vectors written, every question reading them all);
 * the pages stay in the page cache, and the next question maps them again by minor faults.
 */
export function dropPagesOnCollect(file: RegExp): void {
  droppedOnCollect.set(file.source, file);
}

/** The pages of the files dropPagesOnCollect named, dropped from the process (the page cache keeps them): no collection, no trim. */
export function dropMappedPages(): void {
  for (const file of droppedOnCollect.values()) releaseFilePages(file, "drop");
}

/** A full collection of this thread's heap, the C heap's free memory back to the system, and mapped files' pages dropped (dropPagesOnCollect). */
export function collectMemory(): void {
  Bun.gc(true);
  trimMemory();
  dropMappedPages();
}

export interface MemoryCheckOptions {
  budgetBytes?: number;
  intervalMs?: number;
  /** The memory compared with the budget (ownMemoryBytes). */
  rss?: () => number;
  collect?: () => void;
  now?: () => number;
}

/**
 * A check to call between steps of long work: collects (`collectMemory`) when the process is over
 * budget and the last collection of this check ended at least `intervalMs` ago, and at least
 * MEMORY_CHECK_COST_RATIO times its duration. True when it did.
 */
export function memoryCheck(options: MemoryCheckOptions = {}): () => boolean {
  const {
    budgetBytes = MEMORY_BUDGET_BYTES,
    intervalMs = MEMORY_CHECK_INTERVAL_MS,
    rss = ownMemoryBytes,
    collect = collectMemory,
    now = () => performance.now(),
  } = options;
  let next = Number.NEGATIVE_INFINITY;
  return () => {
    const t = now();
    if (t < next || rss() <= budgetBytes) return false;
    collect();
    const end = now();
    next = end + Math.max(intervalMs, (end - t) * MEMORY_CHECK_COST_RATIO);
    return true;
  };
}

/** This thread's check (each thread loads its own copy of this module): what a worker's long work calls between steps. */
export const collectIfOverBudget = memoryCheck();
