// Shape C's answer never quotes an invoice's address, phone, e-mail, web or page lines, which the
// README promises (outside walkthrough: "How much did Acme invoice us in March?" was answered with
// "4557 De Silva St Fremont CA 94538 … (870)-931-0505 azure.Interior24@example.com …").
import { expect, test } from "bun:test";
import { extractiveAnswer } from "../../src/retrieval/answer";

// The lines as an invoice's text has them, several naming the question's words.
const invoice = [
  "Azure Interior",
  "4557 De Silva St",
  "Bill to: Acme Corp, 12 Harbour Road, Fremont CA 94538",
  "Tel: (870)-931-0505",
  "acme.invoices@example.com",
  "www.acme.example/invoices/march",
  "Acme Corp, Kacherakanahalli Village, Hoskote Taluk, India - 560067",
  "Acmestrasse 12 Berlin",
  "1012 AB Amsterdam Acme office",
  "Invoice INV/2023/03/0008 for the March delivery of office chairs to Acme.",
  "Total due: 5,500.00 USD, payable by 30 April.",
  "Page: 1 / 1",
].join("\n");

test("the total with its currency answers 'how much'; none of the address, phone, e-mail, web or page lines is quoted", () => {
  const answer = extractiveAnswer("How much did Acme invoice us in March?", ["acme", "invoice", "march"], [{ text: invoice }]);
  expect(answer).toContain("Total due: 5,500.00 USD");
  for (const line of ["De Silva", "94538", "931-0505", "@example.com", "www.acme", "560067", "Acmestrasse", "Amsterdam", "Page"])
    expect([line, answer.includes(line)]).toEqual([line, false]);
  // Asked what the invoice is, none of them either.
  const what = extractiveAnswer("Acme invoice March", ["acme", "invoice", "march"], [{ text: invoice }]);
  for (const line of ["94538", "@example.com", "www.acme", "560067", "Acmestrasse", "Amsterdam"])
    expect([line, what.includes(line)]).toEqual([line, false]);
});

test("sentences that mention a street or a number are still answers", () => {
  const text =
    "The meeting is on June 12 at the Venetian Resort in Las Vegas.\nWe moved 12 pallets to the harbour on Main Street yesterday.";
  const answer = extractiveAnswer("where is the meeting and what about the pallets", ["meeting", "pallets", "harbour"], [{ text }]);
  expect(answer).toContain("Venetian Resort");
  expect(answer).toContain("12 pallets to the harbour on Main Street");
});
