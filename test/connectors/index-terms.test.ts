// The blinded words of an index (index-terms.ts): what a text stores and what a question
// matches must be the same keyed hash of the same stem, however the memo was filled.
import { expect, test } from "bun:test";
import { TermBlinder } from "../../src/connectors/index-terms";

const blinder = () => new TermBlinder(() => Buffer.alloc(32, 7));

test("a word and its inflections are one blinded term, whichever is seen first", () => {
  const first = blinder();
  const second = blinder();
  expect(first.text("Shipments")).toBe(second.term("shipment"));
  expect(second.text("shipment shipments Shipments")).toBe(Array(3).fill(first.term("shipments")).join(" "));
});

test("words are folded (case, diacritics) and cut at anything but letters and digits; no word is spelled", () => {
  const b = blinder();
  const stored = b.text("Café-Owner's résumé: 2001 invoices");
  expect(stored).toBe(["cafe", "owner", "s", "resume", "2001", "invoice"].map((w) => b.term(w)).join(" "));
  expect(stored).not.toMatch(/caf|owner|resum|invoice/);
});

test("another key, other terms", () => {
  expect(new TermBlinder(() => Buffer.alloc(32, 8)).text("harbour")).not.toBe(blinder().text("harbour"));
});
