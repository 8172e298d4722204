// Shape C over a table's rows (answer-rows.ts, D32): asked for the records meeting an amount
// condition, each cited row that meets it is said, not one row's amount as a single fact.
import { expect, test } from "bun:test";
import type { AnswerSource } from "../../src/retrieval/answer";
import { answerTo } from "../support/answer";

const row = (id: number, city: string, total: number, meetsAmount: boolean): AnswerSource => ({
  text: `BillingAddress: Rua ${id}\nBillingCity: ${city}\nTotal: ${total}`,
  metadata: { table: "Invoice", InvoiceId: String(id), BillingCity: city, Total: total },
  meetsAmount,
});

test("the rows meeting an amount condition are each said with their cells, in the ranking's order; those failing it are not", () => {
  const sources = [row(257, "Lisbon", 13.86, true), row(125, "Lisbon", 0.99, false), row(312, "Lisbon", 10.91, true)];
  expect(answerTo("Which Lisbon invoices were over 10 USD?", [], sources)).toBe(
    "BillingAddress: Rua 257; BillingCity: Lisbon; Total: 13.86. [1] BillingAddress: Rua 312; BillingCity: Lisbon; Total: 10.91. [3]",
  );
  // In another language of the tables, and by a range.
  expect(answerTo("Welche Rechnungen nach Lisbon lagen zwischen 10 und 20 Dollar?", [], sources)).toContain("Total: 10.91. [3]");
});

test("without a condition, or with the best source no table's row, a row's amount is one fact as before", () => {
  const sources = [row(257, "Lisbon", 13.86, true), row(312, "Lisbon", 10.91, true)];
  expect(answerTo("What was the total of the Lisbon invoice?", [], sources)).not.toContain("[2]");
  const receipt: AnswerSource = { text: "KEDAI PAPAN YEW CHUAN\nTOTAL: 190.80", meetsAmount: true };
  expect(answerTo("Which receipts were over 100 RM?", [], [receipt, ...sources])).toBe("TOTAL: 190.80. [1]");
});
