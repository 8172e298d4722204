// A seeded random generator for the tests that pick at random (fuzz, crash): mulberry32, small,
// fast and the same on every machine, so a failing run replays from its seed.

export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  /** A whole number from 0 to n - 1. */
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    /** A whole number from lo to hi, both included. */
    between: (lo: number, hi: number) => lo + int(hi - lo + 1),
    pick: <T>(xs: readonly T[]): T => xs[int(xs.length)]!,
    chance: (p: number) => next() < p,
  };
}

export type Seeded = ReturnType<typeof seeded>;
