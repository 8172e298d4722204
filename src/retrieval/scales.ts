// Scores brought to 0..1 within a group of candidates.

/** The lowest at 0, the highest at 1 (all at 1 when they are equal). */
export const minMax = (xs: number[]) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return (x: number) => (hi > lo ? (x - lo) / (hi - lo) : xs.length ? 1 : 0);
};

/**
 * Scores as a share of the best: a record that matches fewer of the words scores less, never
 * nothing (min-max gave the weakest match 0: a Customer row naming Paris sank below every
 * Invoice row naming it, and out of the connector's ten).
 */
export const byBest = (xs: number[]) => {
  const hi = Math.max(0, ...xs);
  return (x: number) => (hi > 0 ? x / hi : 0);
};
