// Preloaded into a benchmark's server (`bun --preload`, scripts/bench/stalls.ts): a 5 ms timer on
// the serving thread appends each turn of the event loop longer than STALL_MS to the file named by
// CORPUS_BENCH_STALL_LOG, with its end (µs since the epoch, as a CPU profile's clock) and the
// thread's CPU time in it: what held the thread, against what only waited for a core.
import { appendFileSync } from "node:fs";

const STALL_MS = 20;
const TICK_MS = 5;
const file = process.env.CORPUS_BENCH_STALL_LOG;
const threadCpuMs = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

if (file) {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  setInterval(() => {
    const [now, cpu] = [performance.now(), threadCpuMs()];
    const stalledMs = now - last - TICK_MS;
    if (stalledMs > STALL_MS)
      appendFileSync(
        file,
        `${JSON.stringify({ endUs: Math.round((performance.timeOrigin + now) * 1000), stalledMs, cpuMs: cpu - lastCpu })}\n`,
      );
    [last, lastCpu] = [now, cpu];
  }, TICK_MS).unref();
}
