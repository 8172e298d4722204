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
