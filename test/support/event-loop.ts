// How long the event loop went without a turn while some work ran: a tick every 5 ms notes
// the longest gap, and `onTick` runs at each (the memory tests sample RSS there). `heldCpuMs` is
// the most CPU time this thread (the one running the loop) used between two ticks: what a turn
// itself took, whether or not it also waited for a core beside other processes, which
// `stalledMs` counts; other threads (the collector's, a worker's) are not counted.

const threadCpuMs = () => {
  const { user, system } = process.threadCpuUsage();
  return (user + system) / 1000;
};

export async function watchingTheLoop<T>(
  work: () => Promise<T>,
  onTick: () => void = () => {},
): Promise<{ value: T; stalledMs: number; heldCpuMs: number }> {
  let last = performance.now();
  let lastCpu = threadCpuMs();
  let stalledMs = 0;
  let heldCpuMs = 0;
  const note = () => {
    const [now, cpu] = [performance.now(), threadCpuMs()];
    stalledMs = Math.max(stalledMs, now - last);
    heldCpuMs = Math.max(heldCpuMs, cpu - lastCpu);
    [last, lastCpu] = [now, cpu];
  };
  const tick = setInterval(() => {
    note();
    onTick();
  }, 5);
  try {
    const value = await work();
    // A stall that lasted to the end was never seen by a tick.
    note();
    return { value, stalledMs, heldCpuMs };
  } finally {
    clearInterval(tick);
  }
}
