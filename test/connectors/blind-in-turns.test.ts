// D31: a record's words are blinded a slice at a time, the event loop turning between slices
// (4 M characters took ~0.5-1 s, in one go on the serving thread); the words are the same.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { BLIND_SLICE_CHARS, TermBlinder } from "../../src/connectors/index-terms";

test("textInTurns gives text()'s words, cut at spaces only, and lets the event loop turn between slices", async () => {
  const blinder = new TermBlinder(() => randomBytes(32));
  const words = ["Invoice", "total", "1.250,00", "EUR", "明日の会議", "café", "naïve\nline", "tab\there"];
  let text = "";
  for (let i = 0; text.length < 10 * BLIND_SLICE_CHARS; i++) text += `${words[i % words.length]}${i % 7 ? " " : "\n"}`;
  let turns = 0;
  const ticking = setInterval(() => turns++, 0);
  const sliced = await blinder.textInTurns(text);
  clearInterval(ticking);
  expect(sliced).toBe(blinder.text(text));
  // Timers ran between the ten slices (one may fall due only after the next).
  expect(turns).toBeGreaterThanOrEqual(5);
  // One word longer than a slice: no space to cut at, blinded whole.
  const long = `a ${"x".repeat(3 * BLIND_SLICE_CHARS)} b`;
  expect(await blinder.textInTurns(long)).toBe(blinder.text(long));
});
