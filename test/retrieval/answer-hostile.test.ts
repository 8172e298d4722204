// Attack: a source crafted by anyone who can write to the user: a long run of letters with no
// comma or line break, or a long '<a@a@…' line. BOILERPLATE (answer.ts) backtracks quadratically
// on each sentence of shape C's sources, on the thread that serves every user (see cite-hostile).
import { expect, test } from "bun:test";
import { extractiveAnswer } from "../../src/retrieval/answer";

const ms = (work: () => unknown) => {
  const started = performance.now();
  work();
  return performance.now() - started;
};

test("shape C's answer over a source with a long run of letters takes linear time", () => {
  const text = `Harbour invoice ${"a".repeat(80_000)}`;
  expect(ms(() => extractiveAnswer("harbour invoice", ["harbour", "invoice"], [{ text }]))).toBeLessThan(500);
});

test("shape C's answer over a source with a long '<a@a@…' line takes linear time", () => {
  const text = `Harbour invoice <${"a@".repeat(60_000)}`;
  expect(ms(() => extractiveAnswer("harbour invoice", ["harbour", "invoice"], [{ text }]))).toBeLessThan(500);
});

test("a 'how much' question over a line of 100,000 digits takes linear time (the amount rule tried a run from each digit: 11 s a source)", () => {
  for (const run of ["1".repeat(100_000), "1,".repeat(50_000), "1.".repeat(50_000)]) {
    const sources = Array.from({ length: 5 }, () => ({ text: `Harbour invoice ${run}` }));
    expect(ms(() => extractiveAnswer("how much was the harbour invoice total", [], sources))).toBeLessThan(500);
  }
});
