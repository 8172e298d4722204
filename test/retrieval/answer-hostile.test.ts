// Attack: a source crafted by anyone who can write to the user: a long run of letters with no
// comma or line break, or a long '<a@a@…' line. BOILERPLATE (answer.ts) backtracks quadratically
// on each sentence of shape C's sources, on the thread that serves every user (see cite-hostile).
import { expect, test } from "bun:test";
import { answerTo } from "../support/answer";
import { howItGrows } from "../support/growth";

const shapeC = (text: string) => answerTo("harbour invoice", ["harbour", "invoice"], [{ text }]);

test("shape C's answer over a source with a long run of letters takes linear time", async () => {
  expect(await howItGrows((n) => shapeC(`Harbour invoice ${"a".repeat(n)}`), 10_000)).toBe("linear");
});

test("shape C's answer over a source with a long '<a@a@…' line takes linear time", async () => {
  expect(await howItGrows((n) => shapeC(`Harbour invoice <${"a@".repeat(n)}`), 7_500)).toBe("linear");
});

test("a 'how much' question over a line of 100,000 digits takes linear time (the amount rule tried a run from each digit: 11 s a source)", async () => {
  for (const unit of ["1", "1,", "1."]) {
    const howMuch = (n: number) => {
      const sources = Array.from({ length: 5 }, () => ({ text: `Harbour invoice ${unit.repeat(n / unit.length)}` }));
      answerTo("how much was the harbour invoice total", [], sources);
    };
    // 4,000 digits against 8 runs on 500 (both past SENTENCE_PROBE): the run from each digit cost
    // 11 s on 100,000, over 100 times the linear work at this size already.
    expect([unit, await howItGrows(howMuch, 500)]).toEqual([unit, "linear"]);
  }
});
