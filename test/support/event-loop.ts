// How long the event loop went without a turn while some work ran: a tick every 5 ms notes
// the longest gap, and `onTick` runs at each (the memory tests sample RSS there). `heldCpuMs` is
// the most CPU time the process used between two ticks: what a turn itself took, however busy
// the machine (a test beside other test processes waits for a core too, which `stalledMs` counts).

const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

export async function watchingTheLoop<T>(
  work: () => Promise<T>,
  onTick: () => void = () => {},
): Promise<{ value: T; stalledMs: number; heldCpuMs: number }> {
  let last = performance.now();
  let lastCpu = cpuMs();
  let stalledMs = 0;
  let heldCpuMs = 0;
  const note = () => {
    const [now, cpu] = [performance.now(), cpuMs()];
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
