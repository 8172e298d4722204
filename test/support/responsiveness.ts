// Whether a real server process keeps answering while an attack runs in it: GET / timed over and
// over, and its resident memory read from /proc, until the attack is over. Measured from outside
// the process, so work of other tests in the test process cannot blur it.
import { readFileSync } from "node:fs";

/** The process's resident memory in bytes, from /proc (0 once it is gone). */
export function rssOf(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
  } catch {
    return 0;
  }
}

export interface Probed {
  /** The slowest GET / (a request without an answer counts as the wait it was given). */
  slowestMs: number;
  answered: number;
  /** Requests that were not answered 200. */
  failed: number;
  /** How far the process's memory rose above where it was at the start. */
  grewBytes: number;
  /** The probe stopped because the memory rose past `maxGrowth`. */
  overMemory: boolean;
}

/**
 * GET `url`/ every `everyMs` until `done()` says the attack is over or `deadlineMs` passed;
 * stops early once the memory of `pid` rose by more than `maxGrowth` (an old version of the
 * code could otherwise take the machine).
 */
export async function probeWhile(
  url: string,
  pid: number,
  done: () => boolean,
  options: { everyMs?: number; deadlineMs?: number; waitMs?: number; maxGrowth?: number } = {},
): Promise<Probed> {
  const { everyMs = 50, deadlineMs = 90_000, waitMs = 10_000, maxGrowth = 1024 ** 3 } = options;
  const baseline = rssOf(pid);
  const out: Probed = { slowestMs: 0, answered: 0, failed: 0, grewBytes: 0, overMemory: false };
  const end = performance.now() + deadlineMs;
  while (!done() && performance.now() < end) {
    out.grewBytes = Math.max(out.grewBytes, rssOf(pid) - baseline);
    if (out.grewBytes > maxGrowth) {
      out.overMemory = true;
      break;
    }
    const started = performance.now();
    const status = await fetch(`${url}/`, { signal: AbortSignal.timeout(waitMs) }).then(
      (r) => r.status,
      () => 0,
    );
    out.slowestMs = Math.max(out.slowestMs, performance.now() - started);
    if (status === 200) out.answered++;
    else out.failed++;
    await Bun.sleep(everyMs);
  }
  out.grewBytes = Math.max(out.grewBytes, rssOf(pid) - baseline);
  return out;
}
