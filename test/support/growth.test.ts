// The ratio the linear-time tests rest on tells linear work from quadratic on this machine, busy or not.
import { expect, test } from "bun:test";
import { howItGrows } from "./growth";

/** Spaces before an 'x' found by a pattern anchored at the start: tried once, linear. */
const linear = (n: number) => /^\s+x/.test(`${" ".repeat(n)}y`);

/** Trailing spaces found by a pattern tried from every space: quadratic, as the attacks' patterns were. */
const quadratic = (n: number) => /\s+$/.test(`${" ".repeat(n)}x`);

test("linear work reads as linear, quadratic work does not", async () => {
  expect(await howItGrows(linear, 20_000)).toBe("linear");
  expect(await howItGrows(quadratic, 500)).not.toBe("linear");
});
