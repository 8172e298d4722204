// Words as data and the condition grammar (issue 36 items 2 and 3, D32): paraphrases of pinned
// phrases read as the phrases do, a currency or a language is one table row, and no word list
// makes a question not something.
import { expect, test } from "bun:test";
import { askedOf } from "../../../src/retrieval/asked";
import { CURRENCIES, CURRENCY_CODES } from "../../../src/retrieval/language/currencies";
import { asksTaxAmount, comparesMoney } from "../../../src/retrieval/language/grammar";
import { planQuery } from "../../../src/retrieval/plan";

const NOW = new Date("2026-11-28T00:00:00Z");
const compared = (q: string) => planQuery(q, NOW).amounts.filter((a) => a.comparison !== undefined);

test("an amount compared beside a word of money is money, whatever preposition follows it ('via', 'through')", () => {
  for (const q of ["orders over 100 via PayPal", "purchases over 200 through Amazon", "payments above 50 per month"]) {
    expect([q, comparesMoney(q), askedOf(q).asks === "amount"]).toEqual([q, true, true]);
    expect([q, compared(q).length]).toEqual([q, 1]);
  }
});

test("a compared number followed by what it counts is a count, in the question's kind and in its plan", () => {
  for (const q of [
    "customers with more than 5 orders",
    "receipts with more than 3 and fewer than 10 items",
    "Which orders contain more than 10 of the same track?",
    "Was the system down for more than 2 days?",
    "Which bills got more than 30 votes?",
    "prices up more than 10%",
    "Rechnungen mit mehr als 3 Tagen Verzug",
  ]) {
    expect([q, comparesMoney(q), compared(q)]).toEqual([q, false, []]);
  }
});

test("comparators in Dutch, French, German and Polish are comparisons (one table row each)", () => {
  for (const [q, comparison, currency] of [
    ["Rechnungen über 30 Euro", "over", "EUR"],
    ["facturen boven de 500 euro", "over", "EUR"],
    ["factures de plus de 50 €", "over", "EUR"],
    ["faktury powyżej 200 zł", "over", "PLN"],
    ["bonnen onder 20 euro", "under", "EUR"],
  ] as const) {
    expect([q, compared(q).map((a) => [a.comparison, a.currency])]).toEqual([q, [[comparison, currency]]]);
    expect([q, askedOf(q).asks === "amount"]).toEqual([q, true]);
  }
});

test("a range of amounts is two conditions, in each language of the tables; two years are a time, a range of things counted a count", () => {
  for (const [q, currency] of [
    ["Welche Rechnungen lagen zwischen 50 und 100 Euro?", "EUR"],
    ["invoices between 50 and 100 EUR", "EUR"],
    ["facturen tussen 50 en 100 euro", "EUR"],
    ["factures entre 50 et 100 €", "EUR"],
    ["faktury między 50 i 100 zł", "PLN"],
    ["receipts between RM 50 and 100", "MYR"],
  ] as const) {
    expect([q, compared(q).map((a) => [a.comparison, a.value, a.currency])]).toEqual([
      q,
      [
        ["over", 50, currency],
        ["under", 100, currency],
      ],
    ]);
    expect([q, askedOf(q).asks]).toEqual([q, "amount"]);
  }
  expect(compared("invoices between 2014 and 2015")).toEqual([]);
  // Days of a month and hours are a time too, not amounts over 10 and under 20.
  for (const q of [
    "invoices between 10 and 20 May 2023",
    "payments between 5 and 9 June",
    "mails sent between 3 and 5 pm",
    "Termine zwischen 9 und 11 Uhr",
    "factures entre 2 et 8 mars",
    "calls between 9 and 10:30",
  ])
    expect([q, compared(q)]).toEqual([q, []]);
  expect(compared("invoices between 10 and 20 EUR in May")).toHaveLength(2);
  expect([comparesMoney("receipts with between 3 and 10 items"), compared("receipts with between 3 and 10 items")]).toEqual([false, []]);
});

test("a verb of exceeding is a comparator in each language ('dépassent 10 dollars'); a deadline's words say the language ('Do kiedy …' is Polish)", () => {
  for (const q of [
    "invoices that exceed 500 EUR",
    "Quelles factures de Madrid dépassent 10 dollars ?",
    "Welche Rechnungen übersteigen 100 Euro?",
    "faktury, które przekraczają 300 zł",
  ])
    expect([q, compared(q).map((a) => a.comparison)]).toEqual([q, ["over"]]);
  const polish = askedOf("Do kiedy trzeba zapłacić fakturę Sammy Maystone?");
  expect([polish.language, polish.asks, polish.due]).toEqual(["pl", "date", true]);
});

test("key words led by a tax ask its amount with a word of money or a number; without one, what the tax is", () => {
  for (const q of ["vat coolblue macbook invoice", "btw saeco factuur", "gst 2017 receipts"])
    expect([q, asksTaxAmount(q)]).toEqual([q, true]);
  for (const q of ["VAT rules in Germany", "btw verlegd", "GST exemptions Malaysia"]) {
    expect([q, asksTaxAmount(q), askedOf(q).asks === "amount"]).toEqual([q, false, false]);
  }
});

test("a currency is one row: SGD, which answer.ts knew and the table did not, is read in a question", () => {
  expect(CURRENCY_CODES.sgd).toBe("SGD");
  expect(compared("receipts over 20 SGD")).toEqual([{ value: 20, currency: "SGD", comparison: "over" }]);
  // Every written form of every row reads back as its currency.
  for (const c of CURRENCIES) for (const w of [...c.signs, ...c.codes, ...c.names]) expect([w, CURRENCY_CODES[w]]).toEqual([w, c.iso]);
});

test("a tax question asks an amount by the grammar: what was said of a tax, or what changed in it, does not", () => {
  for (const q of [
    "What's the story with the VAT?",
    "What changed in the VAT?",
    "What did Sherriff say about the entry tax?",
    "Wat betekent btw verlegd?",
    "What tax rules apply to imports?",
  ])
    expect([q, asksTaxAmount(q), askedOf(q).asks === "amount"]).toEqual([q, false, false]);
  for (const q of [
    "the GST bill at Guardian",
    "the VAT on the Coolblue invoice",
    "What was the VAT?",
    "Ile wynosi kwota VAT na fakturze z Orlenu?",
    "Welche MwSt. steht auf der Rechnung?",
  ])
    expect([q, asksTaxAmount(q), askedOf(q).asks === "amount"]).toEqual([q, true, true]);
});

test("'how many' asks a count, not an amount of money", () => {
  for (const q of ["How many employees does Chinook have?", "How many bags of rice did I buy at KT Wong Trading?"])
    expect([q, askedOf(q).asks === "amount"]).toEqual([q, false]);
});

test("question words per language: a time asked in Dutch, French, German or Polish is a 'when'", () => {
  for (const q of [
    "Wanneer heb ik de MacBook betaald?",
    "Quand la facture Free est-elle due ?",
    "Wann wurde die Rechnung bezahlt?",
    "Kiedy zatankowałem w Orlenie?",
  ])
    expect([q, askedOf(q).asks === "date"]).toEqual([q, true]);
  // A time asked for names the time of what it asks about, not of the records that tell it (plan.ts, as "When is … in 2023?").
  expect(planQuery("Wanneer is de vergadering in 2023?", NOW).timeAsked).toBe(false);
});
