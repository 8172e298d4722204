// What held a benchmark server's serving thread (D31): the server runs with a CPU profile and
// scripts/bench/stall-log.ts preloaded; once it stopped, each logged stall is matched with the
// profile's samples in its window, and the project's functions are ranked by the CPU time of the
// stalls they ran in (a stall's CPU shared by its samples' share). Used by hostile-sources.ts
// with BENCH_PROFILE=<folder>.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

/** The server command's flags for `folder`, and where its stall log goes. */
export function profiledServer(folder: string): { flags: string[]; env: Record<string, string> } {
  return {
    flags: ["--preload", join(import.meta.dir, "stall-log.ts"), "--cpu-prof", `--cpu-prof-dir=${folder}`],
    env: { CORPUS_BENCH_STALL_LOG: join(folder, "stalls.jsonl") },
  };
}

/** A span of the server's life, in µs since the epoch (as the stall log's ends). */
export interface Window {
  fromUs: number;
  toUs: number;
}

/** `performance.now()` readings of this process (`from`, `to`) as a Window of the stall log's clock. */
export const windowOf = (from: number, to: number): Window => ({
  fromUs: Math.round((performance.timeOrigin + from) * 1000),
  toUs: Math.round((performance.timeOrigin + to) * 1000),
});

/**
 * The stalls of `folder` (those that ended in `window`, when given: the server's start-up and a
 * baseline's first questions are not what indexing held): how many held the thread more than
 * `heldMs` of CPU, the largest, and the top `top` functions by CPU in stalls.
 */
export function stallReport(folder: string, heldMs = 20, top = 15, window?: Window): string {
  const log = readFileSync(join(folder, "stalls.jsonl"), "utf8").trim().split("\n").filter(Boolean);
  const stalls = log
    .map((l) => JSON.parse(l) as { endUs: number; stalledMs: number; cpuMs: number })
    .filter((s) => !window || (s.endUs >= window.fromUs && s.endUs <= window.toUs));
  const profileFile = readdirSync(folder).find((f) => f.endsWith(".cpuprofile"));
  if (!profileFile) return "no CPU profile written";
  const profile = JSON.parse(readFileSync(join(folder, profileFile), "utf8")) as {
    nodes: ProfileNode[];
    startTime: number;
    samples: number[];
    timeDeltas: number[];
  };
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (n: ProfileNode) =>
    `${n.callFrame.functionName || "(anonymous)"} ${n.callFrame.url.replace(/^.*?\/(src|node_modules)\//, "$1/")}:${n.callFrame.lineNumber + 1}`;
  const times: number[] = [];
  let t = profile.startTime;
  for (const d of profile.timeDeltas) times.push((t += d));
  const byFunction = new Map<string, number>();
  const held = stalls.filter((s) => s.cpuMs > heldMs);
  for (const s of held) {
    const from = s.endUs - (s.stalledMs + 5) * 1000;
    const ids = profile.samples.filter((_, i) => times[i]! >= from && times[i]! <= s.endUs);
    for (const id of ids) {
      const seen = new Set<string>();
      for (let n: number | undefined = id; n !== undefined; n = parent.get(n)) {
        const node = nodes.get(n)!;
        // The project's own frames, and the native one that ran (gc, a statement).
        if (n !== id && !node.callFrame.url.includes("/src/")) continue;
        const key = name(node);
        if (seen.has(key)) continue;
        seen.add(key);
        byFunction.set(key, (byFunction.get(key) ?? 0) + s.cpuMs / ids.length);
      }
    }
  }
  const largest = held
    .map((s) => s.cpuMs)
    .sort((a, b) => b - a)
    .slice(0, 10)
    .map((ms) => ms.toFixed(0));
  return [
    `${held.length} turns held the serving thread more than ${heldMs} ms of CPU (of ${stalls.length} stalls > 20 ms${window ? " in the window" : ""}); the largest: ${largest.join(", ")} ms`,
    ...[...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([fn, ms]) => `  ${ms.toFixed(0).padStart(6)} ms  ${fn}`),
  ].join("\n");
}
