// Whether a real server process keeps answering while an attack runs in it: GET / timed over and
// over, and its resident memory read from /proc, until the attack is over. Measured from outside
// the process, so work of other tests in the test process cannot blur it.
import { readFileSync } from "node:fs";
import { FREE_SHARE } from "./event-loop";

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

/** What a started server (test/backup/support.ts startCorpus) shows a probe: its URL, process and log lines. */
interface WatchedServer {
  url: string;
  proc: { pid: number };
  lines: Array<Record<string, unknown>>;
}

const PROBE_EVERY_MS = 50;

/**
 * Probes `server` with GET / until it logs "connector indexed", and judges how it served, against
 * the reading's own time rather than a bound in ms (the machine may be shared and busy): every probe
 * answered 200, at FREE_SHARE of the probes that time allows at least, none held a quarter of it,
 * memory grown by less than 400 MB. Prints the figures; each judgement is true when it held.
 */
export async function servedWhileIndexing(server: WatchedServer) {
  const indexed = () => server.lines.some((l) => l.message === "connector indexed");
  const started = performance.now();
  const probed = await probeWhile(server.url, server.proc.pid, indexed, { everyMs: PROBE_EVERY_MS });
  const readMs = performance.now() - started;
  const seen = { readMs: Math.round(readMs), slowestMs: Math.round(probed.slowestMs), answered: probed.answered };
  console.log(`read in ${seen.readMs} ms; GET / answered ${seen.answered} times meanwhile, the slowest in ${seen.slowestMs} ms`);
  return {
    ...seen,
    indexed: indexed(),
    underMemory: !probed.overMemory && probed.grewBytes < 400 * 1024 * 1024,
    allAnswered: probed.failed === 0,
    free: probed.answered / (readMs / PROBE_EVERY_MS) >= FREE_SHARE,
    neverLong: probed.slowestMs < readMs / 4,
  };
}

/** What servedWhileIndexing gives when the server served as it should. */
export const SERVED = { indexed: true, underMemory: true, allAnswered: true, free: true, neverLong: true } as const;
