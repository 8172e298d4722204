// How long the event loop went without a turn while some work ran: a tick every 5 ms notes
// the longest gap, and `onTick` runs at each (the memory tests sample RSS there).

export async function watchingTheLoop<T>(work: () => Promise<T>, onTick: () => void = () => {}): Promise<{ value: T; stalledMs: number }> {
  let last = performance.now();
  let stalledMs = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    stalledMs = Math.max(stalledMs, now - last);
    last = now;
    onTick();
  }, 5);
  try {
    const value = await work();
    // A stall that lasted to the end was never seen by a tick.
    return { value, stalledMs: Math.max(stalledMs, performance.now() - last) };
  } finally {
    clearInterval(tick);
  }
}
