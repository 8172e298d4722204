// How long shape C's answer takes as a document grows: linear, judged by the project's growth
// helper (CPU time at two sizes, re-timed while unclear). It needs sizes large enough to time,
// so it runs with the integration tests, not the unit suite (issue 35 item 9: the unit suite
// stays fast and never times anything).
import { expect, test } from "bun:test";
import { answerTo } from "../support/answer";
import { howItGrows } from "../support/growth";

test("a label followed by tens of thousands of amount lines takes linear time (each join re-read the growing line)", async () => {
  for (const [head, line, lines] of [
    ["TOTAL", "1", 1_560],
    ["TOTAL", "12345", 520],
    ["x", "ab 1 cd", 390],
  ] as const) {
    const answer = (n: number) => {
      const text = `${head}\n${`${line}\n`.repeat(n)}`;
      answerTo("how much was the total", ["total"], [{ text }, { text, type: "email" }]);
    };
    expect([line, await howItGrows(answer, lines)]).toEqual([line, "linear"]);
  }
});
