// The ratio the linear-time tests rest on tells linear work from quadratic on this machine, busy or not.
import { expect, test } from "bun:test";
import { howItGrows } from "./growth";

/** Sums every character: linear. */
const linear = (n: number) => {
  let sum = 0;
  for (let i = 0; i < n * 200; i++) sum += i & 7;
  return sum;
};

/** Compares every character with each before it: quadratic, as a search back per item was. */
const quadratic = (n: number) => {
  let sum = 0;
  for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) sum += (i ^ j) & 7;
  return sum;
};

test("linear work reads as linear, quadratic work does not", async () => {
  expect(await howItGrows(linear, 2_000)).toBe("linear");
  expect(await howItGrows(quadratic, 300)).not.toBe("linear");
});
