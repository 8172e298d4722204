// Whether work grows linearly with its input, by a ratio timed in one run, never an absolute bound
// ("under 500 ms" fails on a busy machine). The work on SCALE times the input is timed against
// SCALE runs on the input: the same characters, so linear work takes as long either way and
// quadratic work SCALE times longer. Timed in the process's CPU time, not the clock's: beside a
// load of 15 on two cores, a run waited for a core several times its own length, and linear work
// read 11-13 times longer on 8 times the input. Timings belong in scripts/bench/.

/** How many times larger the one input is than each of the many. */
export const SCALE = 8;

/**
 * Below this the work is linear (~1), above it quadratic (~SCALE): the middle of the two on a log
 * scale. Measured by the clock beside a load of 9-12 on two cores: 0.48-1.74 for linear work.
 */
export const LINEAR_GROWTH = Math.sqrt(SCALE);

/** The CPU time this process has used, in ms (getrusage: exact, not by ticks; waiting for a core is not in it). */
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** A growth above LINEAR_GROWTH divided by this is no clear verdict yet: more runs are timed. */
const UNCLEAR = 2;
/** The most runs of each timed before a growth is taken as it stands. */
const MAX_RUNS = 15;
/** The CPU time each timed side takes at least, its work repeated (up to MAX_REPEATS times). */
const MIN_TIMED_MS = 5;
const MAX_REPEATS = 64;
/** Runs of the parts timed to choose how many repeats make MIN_TIMED_MS: the fastest counts. */
const CALIBRATION_RUNS = 3;

/**
 * How many times longer `work(SCALE * n)` takes than SCALE runs of `work(n)`: the fastest of
 * `runs` of each, taken in turns, and more (up to MAX_RUNS) while the growth is not clearly linear.
 * Each side is the fastest of its runs, so more runs only take out what a busy machine added: a
 * core taken away for a few ms in every one of three sub-millisecond runs read quadratic work as
 * linear, or linear work as 3.8 times longer, beside a load of 9 (the unit suite, issue 35).
 */
export async function growthOf(work: (n: number) => unknown, n: number, runs = 3): Promise<number> {
  const timed = async (what: () => Promise<void>) => {
    // The young garbage of earlier runs collected first, or a collection lands in one run and not
    // the other; a full collection of a test process's heap cost more than the work measured.
    Bun.gc(false);
    const started = cpuMs();
    await what();
    return cpuMs() - started;
  };
  // Each side repeated until it takes MIN_TIMED_MS: sub-millisecond work read 10 times longer on 8
  // times the input beside a load of 10, one preemption's cache misses counted in one side only.
  // The repeats come from the fastest of a few runs of the parts: chosen by one run, a collection
  // of a test process's large heap by the collector's threads (process CPU) made it read 5 ms, and
  // 0.02 ms work was timed unrepeated: citing a 15,000-character line read 2.8-7.2 times longer on 8
  // times the input in 4 of 6 sets of 30 runs beside 3 M live objects (cite-hostile, issue 35);
  // from the fastest of three, at most 1.35 in 6 sets.
  let repeats = 1;
  const whole = async () => {
    for (let r = 0; r < repeats; r++) await work(SCALE * n);
  };
  const parts = async () => {
    for (let r = 0; r < repeats; r++) for (let i = 0; i < SCALE; i++) await work(n);
  };
  // Both compiled first: a run of the optimising compiler may otherwise land in one and not the other.
  await parts();
  await whole();
  let onceMs = Number.POSITIVE_INFINITY;
  // Two runs that both take MIN_TIMED_MS settle it: work that long is timed unrepeated.
  for (let i = 0; i < CALIBRATION_RUNS && !(i >= 2 && onceMs >= MIN_TIMED_MS); i++) onceMs = Math.min(onceMs, await timed(parts));
  while (repeats < MAX_REPEATS && repeats * onceMs < MIN_TIMED_MS) repeats *= 2;
  let [partsMs, wholeMs] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY];
  // Work too small for the clock reads as linear, not as a division by zero.
  const growth = () => wholeMs / Math.max(partsMs, 0.05);
  // Anything but clearly linear is timed again: each side's fastest run only sheds what a busy
  // machine added, so quadratic work stays ~SCALE, while linear work that read 6 times longer once
  // in CI (one slow side in each of three sub-10 ms runs) comes back down.
  const unclear = () => growth() > LINEAR_GROWTH / UNCLEAR;
  for (let i = 0; i < MAX_RUNS && (i < runs || unclear()); i++) {
    partsMs = Math.min(partsMs, await timed(parts));
    wholeMs = Math.min(wholeMs, await timed(whole));
  }
  return growth();
}

/** "linear", or how many times longer the work took on SCALE times the input than SCALE times on it (what a failed test shows). */
export async function howItGrows(work: (n: number) => unknown, n: number): Promise<string> {
  const growth = await growthOf(work, n);
  return growth < LINEAR_GROWTH ? "linear" : `${growth.toFixed(1)} times longer on ${SCALE} times the input than ${SCALE} times on it`;
}
