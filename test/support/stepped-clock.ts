// The request timeout's sweep clock (src/http/timeout.ts), stepped by the test: no real wait.
import type { SweepClock } from "../../src/http/timeout";

/** A sweep clock the test steps: `advance` moves the time and runs the sweep, as its interval would. */
export function steppedClock() {
  let t = 0;
  let sweep: (() => void) | undefined;
  const clock: SweepClock = {
    now: () => t,
    every: (fn) => {
      sweep = fn;
      return 1;
    },
    cancel: () => {
      sweep = undefined;
    },
  };
  return {
    clock,
    advance(ms: number) {
      t += ms;
      sweep?.();
    },
    get sweeping() {
      return sweep !== undefined;
    },
  };
}
