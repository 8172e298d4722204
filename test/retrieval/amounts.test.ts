// Amounts in records against the amount conditions of a question (fixed clock for planning).
import { describe, expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { AMOUNT_BOOST, AMOUNT_ONLY_BOOST, AMOUNT_PROBE, amountSignal, amountsWithCurrency } from "../../src/retrieval/amounts";
import { evidence } from "../../src/retrieval/evidence";
import { planQuery } from "../../src/retrieval/plan";
import { recordKey } from "../../src/retrieval/record-memo";
import { howItGrows, SCALE } from "../support/growth";

const NOW = new Date("2026-11-22T10:00:00Z");
/** The amounts' values alone. */
const amountsIn = (record: SourceRecord) => amountsWithCurrency(record).map((a) => a.value);

describe("amounts as a signal", () => {
  const record = (content: string, metadata: Record<string, number | string> = {}): SourceRecord => ({
    id: "r",
    title: "Invoice",
    content,
    source_url: "x",
    date: null,
    type: "file",
    path: "r",
    metadata,
  });

  test("amounts are read in either decimal convention and from numeric metadata", () => {
    expect(amountsIn(record("Total 1,250.00 EUR, VAT 237.50"))).toEqual([1250, 237.5]);
    expect(amountsIn(record("Summe 1.250,00 EUR"))).toEqual([1250]);
    expect(amountsIn(record("no numbers", { table: "Invoice", InvoiceId: 7, total: 99.5 }))).toEqual([99.5]);
    expect(amountsIn(record("Grand Total Rs 1939, Totaal € 4.904,94"))).toEqual([1939, 4904.94]);
  });

  test("account, phone and order numbers and a file's size are not amounts (issue 16)", () => {
    expect(amountsIn(record("TOTAL AMOUNT DUE ON August 3 , 2014 $4.11"))).toEqual([4.11]);
    expect(amountsIn(record("NIP 5261040828 Phone 713-345-7774 Klantnummer: 6669263 Ordernummer: 12572103", { size: 15231 }))).toEqual([]);
    expect(amountsIn(record("paid on 2026-03-30 at 10:30"))).toEqual([]);
  });

  test("a record meeting 'over 1,000 EUR' ranks higher, one failing it lower, one without amounts unchanged", () => {
    const plan = planQuery("Acme invoices over 1,000 EUR", NOW);
    expect(amountSignal(plan, record("Total 1,250.00 EUR"))).toBe(AMOUNT_BOOST);
    expect(amountSignal(plan, record("Total 250.00 EUR"))).toBe(-AMOUNT_BOOST);
    expect(amountSignal(plan, record("Thanks for the meeting"))).toBe(0);
    expect(amountSignal(planQuery("Acme invoices", NOW), record("Total 250.00 EUR"))).toBe(0);
  });
});

const doc = (content: string): SourceRecord => ({
  id: "x",
  title: "invoice.pdf",
  content,
  source_url: "file:///x/invoice.pdf",
  date: null,
  type: "file",
  path: "invoice.pdf",
  metadata: {},
});

test("an amount condition counts the amounts in its currency: 1,939 INR is not over 1000 EUR, nor a receipt in ringgit (outside walkthrough, outside attack)", () => {
  const plan = planQuery("Which invoices are over 1000 EUR?", new Date("2026-11-26T00:00:00Z"));
  const rupees = doc("Tax Invoice\nGrand Total Rs 1939\nRoom charges 1939.00");
  const euros = doc("Factuur\nTotaal € 4.904,94\nBTW € 851,27");
  const small = doc("Facture\nTotal TTC : 56,02 €");
  expect(amountSignal(plan, rupees)).toBe(-AMOUNT_ONLY_BOOST);
  expect(amountSignal(plan, doc("TAX INVOICE\nTOTAL RM 2,500.00"))).toBe(-AMOUNT_ONLY_BOOST);
  // A record stating no amount is not judged; nor one of no stated currency, by the question's.
  expect(amountSignal(plan, doc("Invoice\nPlease find attached"))).toBe(0);
  expect(amountSignal(plan, doc("Invoice\nTotal 2,500.00"))).toBe(AMOUNT_ONLY_BOOST);
  // A receipt printing its total's label alone on the line above its amount (SROIE): that is its total; not a count, cash or a line with numbers.
  const labelAbove = doc(
    "INVOICE\nQTY U.PRICE RM(TOTAL)\n1\n20.00\n20.00\nSUB TOTAL :\n20.00\nGRAND TOTAL :\n20.00\nTOTAL PAID :\n50.00\nCASH :\n20.00",
  );
  expect(amountsWithCurrency(labelAbove).filter((a) => a.total)).toEqual([{ value: 20, currency: "MYR", total: true }]);
  expect(amountSignal(plan, labelAbove)).toBe(-AMOUNT_ONLY_BOOST);
  expect(amountsWithCurrency(doc("TOTAL 2 ITEMS\n15.00 EUR")).filter((a) => a.total)).toEqual([]);
  // A rate in the label is no amount ("TOTAL INCL. GST@6%", Mr. D.I.Y.); an amount with more on its line is not the label's.
  expect(
    amountsWithCurrency(doc("TOTAL INCL. GST@6%\n36.60"))
      .filter((a) => a.total)
      .map((a) => a.value),
  ).toEqual([36.6]);
  expect(amountsWithCurrency(doc("TOTAL :\n2x 5.00 EUR")).filter((a) => a.total)).toEqual([]);
  // Numbers on lines of their own are not one number grouped by thousands (third outside attack: "24" / "473.30" read as 24,473.30).
  expect(amountsWithCurrency(doc("TOTAL:\n24\n473.30 EUR")).map((a) => a.value)).toEqual([473.3]);
  // "Rm" in an address is a room, not ringgit (second outside attack); a fee in dollars in a mail stating no total is not judged.
  expect(amountSignal(plan, doc("Acme Ltd, Rm 1204, Nathan Road\nTotal 1,452.00\nAll amounts in EUR"))).toBe(AMOUNT_ONLY_BOOST);
  const mail: SourceRecord = { ...doc("Hi, the courier fee was USD 25.00, see you Monday"), type: "email", title: "Courier" };
  expect(amountSignal(plan, mail)).toBe(0);
  // A document stating amounts only in dollars, its total's label not beside them (a PDF's layout), is no euro invoice.
  expect(amountSignal(plan, doc("$127.50\nService A 12 $10.00 $120.00\n$127.50\nSubtotal:\nTotal:"))).toBe(-AMOUNT_ONLY_BOOST);
  // A code written against its number is read: "GRAND TOTAL RM39.00".
  expect(amountsWithCurrency(doc("GRAND TOTAL RM39.00")).filter((a) => a.total)).toEqual([{ value: 39, currency: "MYR", total: true }]);
  // Two conditions: judged by the one in a currency the record states.
  const either = planQuery("invoices over $1000 or over 1000 EUR", new Date("2026-11-26T00:00:00Z"));
  expect(amountSignal(either, euros)).toBe(AMOUNT_ONLY_BOOST);
  // The amount is all the question says beyond "invoices": it weighs more than beside other words.
  expect(amountSignal(plan, euros)).toBe(AMOUNT_ONLY_BOOST);
  expect(amountSignal(plan, small)).toBe(-AMOUNT_ONLY_BOOST);
  expect(amountSignal(planQuery("Coolblue invoices over 1000 EUR", new Date("2026-11-26T00:00:00Z")), euros)).toBe(AMOUNT_BOOST);
  // An amount without a currency of its own is in the one its record is written in.
  expect(amountsWithCurrency(rupees)).toEqual([
    { value: 1939, currency: "INR", total: true },
    { value: 1939, currency: "INR" },
  ]);
  // An invoice is over or under by its total, stated last on its line; not by its share capital or a line read as "1 278.61".
  const flipkart = doc("Product Title Qty Price Tax(%) Tax Total\n1 278.61 14.50%\nTotal 1 278.61 40.39 319.00\nGrand Total 319.00");
  expect(amountSignal(plan, flipkart)).toBe(-AMOUNT_ONLY_BOOST);
  const netpresse = doc("Total TTC : 56,02 €\nSarl au capital de 10 000€");
  expect(amountSignal(plan, netpresse)).toBe(-AMOUNT_ONLY_BOOST);
});

test("a total is not a percentage or a page number after it, and a paid invoice's 'balance due 0,00' does not make it small (outside attack)", () => {
  const at = new Date("2026-11-26T00:00:00Z");
  const over = planQuery("Which invoices are over 1000 EUR?", at);
  expect(amountSignal(over, doc("Total 1.452,00 EUR 21%"))).toBe(AMOUNT_ONLY_BOOST);
  expect(amountSignal(over, doc("Total 1,452.00 EUR 2"))).toBe(AMOUNT_ONLY_BOOST);
  const under = planQuery("Which invoices are under 50 EUR?", at);
  expect(amountSignal(under, doc("Total 1.452,00 €  Paid 1.452,00 €  Balance due 0,00 €"))).toBe(-AMOUNT_ONLY_BOOST);
});

test("amounts on one long line take linear time (a search back per amount was quadratic: 1 MB, 1.7-6.3 s)", async () => {
  // Linear, and nothing read past what is read of a record. A quarter of AMOUNT_PROBE is enough:
  // a search back per amount, char by char, read 6.4-7.6 times longer there (issue 35).
  for (const unit of ["$1 ", "1.00 ", "€1 $2 £3 RM4 "]) {
    const amounts = (n: number) => amountsWithCurrency(doc(unit.repeat(Math.ceil(n / unit.length))));
    expect([unit, await howItGrows(amounts, AMOUNT_PROBE / SCALE / 4)]).toEqual([unit, "linear"]);
  }
  expect(amountsWithCurrency(doc(`${"x".repeat(AMOUNT_PROBE)} $5 ${"$1 ".repeat(300_000)}`))).toEqual([]);
  // A long run of spaces before amounts on one line (fifth outside attack: 27 s on 25 KB while an amount's line was tested whole).
  const spaces = (n: number) => amountsWithCurrency(doc(`Invoice total\n${" ".repeat(n)}abcde ${"1.00 ".repeat(100)}`));
  expect(await howItGrows(spaces, 3_125)).toBe("linear");
});

test("key columns are no amounts however their names are written, as PostgreSQL folds them too; 'amount_paid' is one", () => {
  const row = (metadata: Record<string, number | string>): SourceRecord => ({ ...doc(""), metadata: { table: "invoice", ...metadata } });
  expect(amountsIn(row({ InvoiceId: 7, customer_id: 3, customerid: 17, orderid: 16, ID: 2, amount_paid: 12.5, total: 99 }))).toEqual([
    12.5, 99,
  ]);
});

test("a receipt naming its currency on a line of its own is in that currency: its 1,000.00 cash tendered is no euro amount (outside walkthrough)", () => {
  const plan = planQuery("Which invoices are over 1000 EUR?", new Date("2026-11-26T00:00:00Z"));
  const receipt = doc("BEYOND BROTHERS HARDWARE\nAMOUNT\n(RM)\nNAILS 12.50\nCASH\n1,000.00\nCHANGE\n987.50");
  expect(amountsWithCurrency(receipt).every((a) => a.currency === "MYR")).toBe(true);
  // A document in ringgit only: not one of the invoices over 1000 EUR asked for.
  expect(amountSignal(plan, receipt)).toBe(-AMOUNT_ONLY_BOOST);
});

test("a record's amounts and dates, remembered by its key, are read again once its text or columns change (issue 36)", () => {
  const plan = planQuery("Which invoices are over 1000 EUR?", NOW);
  const key = recordKey("alice", "docs", "inv-1");
  const doc = (content: string, metadata: Record<string, number | string> = {}): SourceRecord => ({
    id: "inv-1",
    title: "Invoice",
    content,
    source_url: "x",
    date: null,
    type: "file",
    path: "inv-1",
    metadata,
  });
  expect(amountSignal(plan, doc("Total 1,250.00 EUR"), key)).toBe(AMOUNT_ONLY_BOOST);
  expect(amountSignal(plan, doc("Total 1,250.00 EUR"), key)).toBe(AMOUNT_ONLY_BOOST);
  expect(amountSignal(plan, doc("Total 250.00 EUR"), key)).toBe(-AMOUNT_ONLY_BOOST);
  // A row's amount is a column: the same text, another total.
  const row = (total: number) => doc("BillingCity: Oslo", { table: "Invoice", Total: total });
  expect(amountSignal(plan, row(1_250), key)).toBe(AMOUNT_ONLY_BOOST);
  expect(amountSignal(plan, row(250), key)).toBe(-AMOUNT_ONLY_BOOST);
  // A document's own dates, for a time asked.
  const march = planQuery("receipts in March 2018", NOW);
  const inMarch = evidence(march, doc("Date: 12/03/2018 Total 5.00"), key);
  const inMay = evidence(march, doc("Date: 12/05/2019 Total 5.00"), key);
  expect(inMarch).toBeGreaterThan(inMay);
  expect(evidence(march, doc("Date: 12/03/2018 Total 5.00"), key)).toBe(inMarch);
});
