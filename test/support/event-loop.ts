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

/** How often `turnsWhile` looks for a turn of the loop: longer than a SQL window (WINDOW_MS), so a loop that turns between windows is seen at nearly every look. */
export const LOOK_EVERY_MS = 50;

/**
 * The least share of looks a loop that keeps serving is seen at: a loop held for the whole work
 * is seen at ~none (measured free: 0.6-1.0 beside other engineers' load); a share, not a bound in
 * ms, so a busy machine that slows the work slows the looks alike.
 */
export const FREE_SHARE = 0.3;

/**
 * How freely the event loop turned while `work` ran: a timer every LOOK_EVERY_MS counts the turns
 * it was given, against the looks the work's own wall time allows. `share` is (turns + 1) /
 * (allowed + 1): work too short for a look reads as free, not as a division by zero. `longestMs`
 * is the longest the loop went without a turn, to be compared with `ms` (a ratio, not a bound).
 */
export async function turnsWhile<T>(
  work: () => Promise<T>,
): Promise<{ value: T; ms: number; turns: number; share: number; longestMs: number }> {
  const started = performance.now();
  let last = started;
  let turns = 0;
  let longestMs = 0;
  const look = () => {
    const now = performance.now();
    longestMs = Math.max(longestMs, now - last);
    last = now;
  };
  const timer = setInterval(() => {
    look();
    turns++;
  }, LOOK_EVERY_MS);
  try {
    const value = await work();
    look();
    const ms = performance.now() - started;
    return { value, ms, turns, share: (turns + 1) / (ms / LOOK_EVERY_MS + 1), longestMs };
  } finally {
    clearInterval(timer);
  }
}
