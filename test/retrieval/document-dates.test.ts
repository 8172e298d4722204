// Dates inside documents (issue 16): a document's record date is its file time, so a question
// that asks for a time is weighed by the dates its text names. Outside walkthrough: "How much did I
// pay at IKEA Cheras in July 2017?" put the receipt of 23/12/17 first; the one of 27/07/17 is the answer.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { DATE_OR_TIME, documentDates } from "../../src/retrieval/document-dates";
import { evidence } from "../../src/retrieval/evidence";
import { planQuery } from "../../src/retrieval/plan";
import { howItGrows } from "../support/growth";

const iso = (t: number) => new Date(t).toISOString().slice(0, 10);

test("the days a document names, as receipts and invoices write them", () => {
  for (const [text, day] of [
    ["DATE:\n25/12/2018 8:13:39 PM", "2018-12-25"],
    ["12/28/2017", "2017-12-28"],
    ["05 MAR 2018", "2018-03-05"],
    ["28 MAR 18", "2018-03-28"],
    ["02/JAN/2017", "2017-01-02"],
    ["Factuurdatum: 19 april 2014", "2014-04-19"],
    ["Orderdatum: 18 mei 2014", "2014-05-18"],
    ["Rechnungsdatum: 7. Mai 2014", "2014-05-07"],
    ["TOTAL AMOUNT DUE ON August 3 , 2014", "2014-08-03"],
    ["Invoice Date: 2023-03-20. Pay by 28/11/2022.", "2023-03-20 2022-11-28"],
  ] as const)
    expect([text, documentDates(text).map(iso).join(" ")]).toEqual([text, day]);
});

test("each reading of an ambiguous day; numbers that are no dates give none", () => {
  expect(documentDates("27/07/17").map(iso)).toEqual(["2017-07-27", "2027-07-17"]);
  expect(documentDates("17-12-28").map(iso)).toEqual(["2028-12-17", "2017-12-28"]);
  // A version, a phone, a page range, a room, a day that does not exist (outside attack).
  for (const text of [
    "TEL 03-7890 1234, NO.53 55,57 & 59, v1.2.3, 12 PCS 2018",
    "31/02/2018",
    "v2.10.15, Tel 06-12-34, pages 10-12-14, room 12/5/20",
  ])
    expect([text, documentDates(text)]).toEqual([text, []]);
});

test("long runs of digits, separators and month-like words take linear time", async () => {
  for (const [unit, units] of [
    ["1/", 7_500],
    ["12-12-", 2_500],
    ["1 march ", 2_500],
    ["9", 15_000],
  ] as const)
    expect([unit, await howItGrows((n) => documentDates(unit.repeat(n)), units)]).toEqual([unit, "linear"]);
});

const receipt = (id: string, content: string): SourceRecord => ({
  id,
  title: `${id}.txt`,
  content,
  source_url: `file:///receipts/${id}.txt`,
  date: "2026-11-26T00:00:00.000Z",
  type: "file",
  path: `${id}.txt`,
  metadata: {},
});

test("a document naming a day in the time asked for weighs more than one naming another day; a year of it counts as before", () => {
  const plan = planQuery("How much did I pay at IKEA Cheras in July 2017?", new Date("2026-11-26T00:00:00Z"));
  const july = evidence(plan, receipt("087", "IKEA CHERAS\n27/07/17 14:02\nTOTAL RM INCLUDING GST 6%\n538.00"));
  const december = evidence(plan, receipt("102", "IKEA CHERAS\n23/12/16 10:11\nTOTAL 23.00"));
  const year = evidence(plan, receipt("103", "IKEA CHERAS\nMember since 2017\nTOTAL 12.00"));
  expect(july).toBeGreaterThan(december);
  expect(year).toBe(july);
  // A document naming only days outside the time does not count by their year ("in March 2018": not 3 April 2018).
  const march = planQuery("Unihakka receipts in March 2018", new Date("2026-11-26T00:00:00Z"));
  expect(evidence(march, receipt("030", "UNIHAKKA\n05 MAR 2018\nTOTAL 8.20"))).toBeGreaterThan(
    evidence(march, receipt("031", "UNIHAKKA\n03 APR 2018\nTOTAL 8.20")),
  );
});

test("a date or a time a statement names: a month in any language of the tables, a day's word in any, never a word that begins like one", () => {
  for (const named of [
    "the hearing is on August 28th",
    "Rechnungsdatum 7. Mai 2014",
    "livraison le 3 mars",
    "betaling vóór 12 maart",
    "we meet on Friday",
    "vrijdag om 10 uur",
    "at noon",
    "at 3:30",
    "by 9 am",
    "due 2014-05-07",
    "on 12/05/2014",
  ])
    expect({ named, found: DATE_OR_TIME.test(named) }).toEqual({ named, found: true });
  for (const none of ["the Mayor of Oslo", "marshmallows 12", "order 12345", "Junction 4", "Decembrist 5"])
    expect({ none, found: DATE_OR_TIME.test(none) }).toEqual({ none, found: false });
});

test("a document whose days all lie outside the time asked for weighs less than one naming none, whatever year its text cites", () => {
  const plan = planQuery("invoices from 2014", new Date("2026-11-26T00:00:00Z"));
  const of2018 = evidence(plan, receipt("519", "TAX INVOICE\nBHPETROL\n30-06-2018 09:09:49\n*RELIEF UNDER SECTION 56(3)(B)GST ACT 2014"));
  const undated = evidence(plan, receipt("600", "TAX INVOICE\nBHPETROL\nTOTAL 50.00"));
  const of2014 = evidence(plan, receipt("601", "FACTUUR\nFactuurdatum 29 maart 2014\nTotaal 49,99"));
  expect(of2018).toBeLessThan(undated);
  expect(undated).toBeLessThan(of2014);
});
