// Shape C's answer as data (questions/typed-answer.ts): each statement of the extractive answer
// with the source its marker cites and the value of the kind asked; how sure it is follows the
// answer's features (a statement holding the kind asked, from the best-ranked source, is surer
// than one that does not, from a weaker source), never a constant; nothing found is `none`.
import { describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import type { CitedRanked } from "../../src/archive/answer";
import { answerText, TypedAnswer, typedAnswer } from "../../src/questions/typed-answer";
import { planQuery } from "../../src/retrieval/plan";
import type { QueryOutcome } from "../../src/retrieval/types";

const NOW = new Date("2024-06-01T00:00:00Z");

function source(n: number, title: string, text: string, score: number): CitedRanked {
  const hex = n.toString(16).padStart(32, "0");
  return {
    c: {
      connectorId: "docs",
      connectorLabel: "Papers",
      owner: "alice",
      record: {
        id: `r${n}`,
        title,
        content: text,
        source_url: `file:///docs/${n}.txt`,
        date: null,
        type: "file",
        path: `${n}.txt`,
        metadata: {},
      },
      chunkIndex: 0,
      text,
      score,
      lexical: score,
    },
    documentId: `doc_${hex}`,
    chunkId: hex,
    sha256: "ab".repeat(32),
    recordKey: hex,
  };
}

function asked(question: string, chosen: CitedRanked[]) {
  const outcome: QueryOutcome = {
    plan: planQuery(question, NOW),
    chunks: chosen.map((x) => x.c),
    connectorsSearched: 1,
    totalFound: chosen.length,
    notes: [],
  };
  const text = answerText(outcome, chosen);
  const typed = typedAnswer(question, text, outcome, chosen, "https://corpus.example");
  expect(Value.Check(TypedAnswer, typed)).toBe(true);
  return typed;
}

const INVOICE = "Zephyr Plumbing Ltd\nInvoice 7731\nAmount due: 1,284.50 EUR\nDue date: 15 April 2024";

describe("shape C's answer as data", () => {
  test("an amount asked: the statement, its value and currency, the source its marker cites, with its citation", () => {
    const typed = asked("How much is the amount due on the Zephyr Plumbing invoice?", [
      source(1, "Zephyr Plumbing invoice", INVOICE, 10),
      source(2, "Harbour notes", "The harbour crane was inspected in March.", 2),
    ]);
    expect(typed.kind).toBe("statement");
    expect(typed).toMatchObject({ value: "1284.50", unit: "EUR", transactions: null });
    const said = typed.statements.find((s) => s.value === "1284.50")!;
    expect(typed.answer).toContain(`${said.text} [${said.source}]`);
    expect(typed.sources[said.source - 1]).toMatchObject({
      id: `chnk_${(1).toString(16).padStart(32, "0")}`,
      url: `https://corpus.example/d/chnk_${(1).toString(16).padStart(32, "0")}`,
      title: "Zephyr Plumbing invoice",
    });
    expect(typed.confidence_factors.kind).toBe(1);
    expect(typed.confidence).toBeGreaterThan(0.5);
  });

  test("a date asked: the day, as YYYY-MM-DD", () => {
    const typed = asked("When is the Zephyr Plumbing invoice due?", [source(1, "Zephyr Plumbing invoice", INVOICE, 10)]);
    expect(typed.statements.some((s) => s.value === "2024-04-15")).toBe(true);
  });

  test("how sure follows the answer: the same question answered by a statement of another kind, from a weaker source, is less sure", () => {
    const strong = asked("How much is the amount due on the Zephyr Plumbing invoice?", [source(1, "Zephyr Plumbing invoice", INVOICE, 10)]);
    const weak = asked("How much is the amount due on the Zephyr Plumbing invoice?", [
      source(1, "Harbour memo", "Memo about the harbour visit and the new crane.", 10),
      source(2, "Zephyr Plumbing note", "Zephyr Plumbing will send the invoice for the amount due next week.", 4),
    ]);
    expect(weak.kind).toBe("statement");
    expect(weak.value).toBeNull();
    expect(weak.confidence).toBeLessThan(strong.confidence);
    expect(weak.confidence).toBe(
      Math.round(weak.confidence_factors.kind! * weak.confidence_factors.rank! * weak.confidence_factors.words! * 1000) / 1000,
    );
  });

  test("nothing to answer from: none, no value, no confidence", () => {
    const typed = asked("How much did I pay Zephyr Plumbing?", []);
    expect(typed).toMatchObject({ kind: "none", value: null, unit: null, statements: [], sources: [], confidence: 0 });
  });
});
