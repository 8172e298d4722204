// The memory budget (issue 14): long work (a folder's sync on the request thread, its
// embedding in the worker) collects its thread's garbage as it goes once the process holds more
// than the budget, instead of when the JavaScript heap's own heuristics (sized for this machine's
// RAM, not for a server that should stay small) get round to it.
import { dlopen } from "bun:ffi";

/** Process RSS above which long work collects its garbage between steps. */
export const MEMORY_BUDGET_BYTES = 200 * 1024 * 1024;
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

let mallocTrim: (() => void) | undefined;
/**
 * Gives memory the C allocator holds free back to the system (glibc's malloc_trim): what
 * onnxruntime used while loading the model and between runs. Nothing where there is none.
 */
export function trimMemory(): void {
  try {
    mallocTrim ??= (() => {
      const libc = dlopen("libc.so.6", { malloc_trim: { args: ["usize"], returns: "i32" } });
      return () => void libc.symbols.malloc_trim(0);
    })();
  } catch {
    mallocTrim = () => {};
  }
  mallocTrim();
}

/** A full collection of this thread's heap, then the C heap's free memory back to the system. */
export function collectMemory(): void {
  Bun.gc(true);
  trimMemory();
}

export interface MemoryCheckOptions {
  budgetBytes?: number;
  intervalMs?: number;
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
    rss = () => process.memoryUsage.rss(),
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

/** This thread's check (each thread loads its own copy of this module): what long work calls between steps. */
export const collectIfOverBudget = memoryCheck();
