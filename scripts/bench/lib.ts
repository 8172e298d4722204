// Shared helpers for scripts/bench: processes, ports, wrk runs. Figures are reported as
// ratios against a baseline measured in the same run, since this machine is shared.
import { mkdtempSync, rmSync } from "node:fs";
import { constants, tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { freePort } from "../../test/support/tcp";

const runTempDirs: string[] = [];

/**
 * A temporary folder of this run, removed when the script exits, by its end, an error, Ctrl-C, a
 * closed terminal or a kill (a benchmark's data folder holds ~200 MB: 28 runs had left 5.7 GB in
 * /tmp). A master key written beside a data folder goes with it only if the data folder is inside.
 */
export function runTempDir(prefix: string): string {
  if (runTempDirs.length === 0) {
    process.on("exit", () => {
      for (const dir of runTempDirs) rmSync(dir, { recursive: true, force: true });
    });
    // The exit status says which signal: 128 + its number.
    for (const signal of ["SIGHUP", "SIGINT", "SIGTERM"] as const) process.on(signal, () => process.exit(128 + constants.signals[signal]));
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  runTempDirs.push(dir);
  return dir;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A loopback port the OS gives (the test runner's, one function for both). */
export { freePort };

export async function waitFor200(url: string, timeoutMs = 10_000): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return performance.now() - start;
    await sleep(2);
  }
  throw new Error(`${url} did not answer 200 within ${timeoutMs} ms`);
}

export function rssMb(pid: number): number {
  const status = require("node:fs").readFileSync(`/proc/${pid}/status`, "utf8") as string;
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)![1]);
  return kb / 1024;
}

/**
 * MB of a process's RSS that are pages of files it maps whose path ends with `suffix` (the
 * database, read through a mapping: its pages are the file's, shared and reclaimable).
 */
export function mappedMb(pid: number, suffix: string): number {
  let kb = 0;
  let counting = false;
  for (const line of (require("node:fs").readFileSync(`/proc/${pid}/smaps`, "utf8") as string).split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) counting = line.endsWith(suffix);
    else if (counting && line.startsWith("Rss:")) kb += Number(/\d+/.exec(line)![0]);
  }
  return kb / 1024;
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number): number {
  const fields = require("node:fs").readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ") as string[];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Seconds a thread spent on a CPU and waiting in the kernel's run queue for one (/proc schedstat). */
export interface ThreadTime {
  cpu: number;
  queued: number;
}

/**
 * The time of a process's serving thread (its main thread, whose id is the process's) apart from
 * its other threads' (workers, the JIT, the collector) summed: on a loaded machine a thread waits
 * for a CPU as well as on one, and what is left of the wall time it neither ran nor waited to run
 * it was idle (waiting on a worker, a timer or a lock, not on the machine).
 */
export function threadTimes(pid: number): { main: ThreadTime; others: ThreadTime; byName: Map<string, number> } {
  const fs = require("node:fs") as typeof import("node:fs");
  const main = { cpu: 0, queued: 0 };
  const others = { cpu: 0, queued: 0 };
  /** The other threads' CPU seconds by the kernel's name of each (Worker, JITWorker, HeapHelper, …). */
  const byName = new Map<string, number>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    let fields: string[];
    let name: string;
    try {
      fields = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ");
      name = fs.readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
    } catch {
      continue; // ended meanwhile
    }
    const isMain = tid === String(pid);
    const t = isMain ? main : others;
    const cpu = Number(fields[0]) / 1e9;
    t.cpu += cpu;
    t.queued += Number(fields[1]) / 1e9;
    if (!isMain) byName.set(name, (byName.get(name) ?? 0) + cpu);
  }
  return { main, others, byName };
}

/**
 * Waits until a process has settled (under 20 ms of CPU in half a second): e.g. corpus loads
 * its embedding model in the background shortly after it starts listening, and a throughput
 * run measures the server as it runs for the rest of its life, not that start-up work.
 */
export async function waitIdle(pid: number, timeoutMs = 30_000): Promise<void> {
  const start = performance.now();
  let last = cpuSeconds(pid);
  while (performance.now() - start < timeoutMs) {
    await sleep(500);
    const now = cpuSeconds(pid);
    if (now - last < 0.02 && performance.now() - start > 3_000) return;
    last = now;
  }
  throw new Error(`process ${pid} did not settle within ${timeoutMs} ms`);
}

export function requireTool(name: string, debianPackage: string): string {
  const path = Bun.which(name);
  if (!path) {
    console.error(`${name} is needed for this benchmark: apt-get install ${debianPackage}`);
    process.exit(2);
  }
  return path;
}

/** Requests per second from wrk (64 connections by default). */
export async function wrk(url: string, opts: { seconds?: number; connections?: number; script?: string } = {}): Promise<number> {
  const args = ["wrk", "-t2", `-c${opts.connections ?? 64}`, `-d${opts.seconds ?? 5}s`];
  if (opts.script) args.push("-s", opts.script);
  args.push(url);
  const out = Bun.spawnSync(args).stdout.toString();
  const m = /Requests\/sec:\s+([\d.]+)/.exec(out);
  if (!m) throw new Error(`wrk gave no rate:\n${out}`);
  return Number(m[1]);
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

export function kill(proc: Subprocess): Promise<number | null> {
  proc.kill("SIGTERM");
  return proc.exited;
}

/**
 * Cold starts: `times` fresh servers from `spawn`, each timed from spawn to its first 200 on
 * GET /; `whenReady` measures more of each before it is killed.
 */
export async function coldStarts(
  times: number,
  spawn: (port: number) => Subprocess,
  whenReady: (proc: Subprocess, base: string) => unknown,
): Promise<number[]> {
  const starts: number[] = [];
  for (let i = 0; i < times; i++) {
    const port = freePort();
    const base = `http://127.0.0.1:${port}`;
    const t0 = performance.now();
    const proc = spawn(port);
    await waitFor200(`${base}/`);
    starts.push(performance.now() - t0);
    await whenReady(proc, base);
    await kill(proc);
  }
  return starts;
}
