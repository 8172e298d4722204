// Account and payee names as people write them (D34): the book's names are folded by the same
// function as the question's words (bm25.ts words: case, accents, stems), and a run-together name
// ("GroupTermLife", "PreTax401k") is read apart as well as whole.
import { expect, test } from "bun:test";
import { nameWords } from "../../../src/connectors/books/answer";
import { words } from "../../../src/retrieval/bm25";

const asked = (question: string) => new Set(words(question));
const holds = (name: string, question: string) => [...asked(question)].every((w) => nameWords(name).has(w));

test("case, spacing and accents fold alike on both sides", () => {
  expect(holds("Checking", "CHECKING")).toBe(true);
  expect(holds("Chécking", "checking")).toBe(true);
  expect(holds("Dépenses", "depenses")).toBe(true);
  expect(holds("Restaurant", "restaurants")).toBe(true);
});

test("a run-together name is read apart and whole: 'group term life', 'pre tax 401k', 'bofa'", () => {
  expect(holds("GroupTermLife", "group term life")).toBe(true);
  expect(holds("PreTax401k", "pre tax 401k")).toBe(true);
  expect(holds("PreTax401k", "pretax401k")).toBe(true);
  expect(holds("BofA", "bofa")).toBe(true);
  expect(holds("MasterCard", "mastercard")).toBe(true);
  // Nothing the name does not hold.
  expect(holds("GroupTermLife", "group health")).toBe(false);
});
