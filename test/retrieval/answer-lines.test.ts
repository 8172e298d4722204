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
  "1012 AB Amsterdam",
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

test("asked for a contact (a phone, an e-mail), its line is the answer", () => {
  const card = {
    text: "Azure Interior\n4557 De Silva St\nFremont CA 94538\nPhone: (870) 931-0505\nsupport@acme.example\nwww.conference.example",
  };
  expect(extractiveAnswer("What is Azure Interior's phone number?", ["azure", "interior", "phone"], [card])).toContain("(870) 931-0505");
  expect(extractiveAnswer("What is the support e-mail address?", ["support", "e-mail"], [card])).toContain("support@acme.example");
});

test("ordinary sentences that look a little like addresses are answers", () => {
  for (const [question, text] of [
    ["where are the pallets", "40 pallets are on their way to the harbour."],
    ["when does the EU Data Act apply", "2025 EU Data Act applies from September."],
    ["chairs order number", "Order number for the chairs: PO 12345"],
    ["Acme parcel tracking", "Acme parcel shipped, tracking, 482913"],
  ] as const)
    expect([question, extractiveAnswer(question, [], [{ text }])]).toEqual([question, `${/[.!?]$/.test(text) ? text : `${text}.`} [1]`]);
});

test("a mail's header block is not taken for a table row", () => {
  const header = { text: "From: Jeff Dasovich\nSent: Monday, June 4, 2001 10:00 AM\nTo: Steven Kean\nSubject: California price caps" };
  const body = { text: "Jeff expects California to keep the price caps through the summer." };
  const answer = extractiveAnswer(
    "What did Jeff say about California price caps?",
    ["jeff", "california", "price", "caps"],
    [header, body],
  );
  expect(answer).not.toContain("From:");
  expect(answer).toContain("Jeff expects California");
});
