// Clocks a test moves, injected as `now` wherever src takes one: the test steps time
// instead of waiting for it.

/** A frozen clock: only `advance` and `set` move it. */
export function testClock(start = Date.UTC(2026, 10, 22, 10, 0, 0)) {
  let t = start;
  return { now: () => t, advance: (ms: number) => (t += ms), set: (v: number) => (t = v) };
}

/** The real clock plus what the test added: for a whole app, whose libraries also read the real time. */
export function skewedClock() {
  let skew = 0;
  return { now: () => Date.now() + skew, advance: (ms: number) => (skew += ms) };
}
