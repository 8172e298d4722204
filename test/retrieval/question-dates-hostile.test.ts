// Attack: a question written to be read as many dates. chrono read the whole question: "Mon 1 "
// said 666 times (3,996 characters, under the question's 4,000) took 1.1 s of the serving thread's
// CPU, and 8 times the text ~5 times longer than 8 runs on it (its results are compared with each
// other). Only the first two dates are used, so only the text around them is read (D31: no request
// holds the serving thread).
import { expect, test } from "bun:test";
import { planQuery } from "../../src/retrieval/plan";
import { dateRange, onDaysSaid } from "../../src/retrieval/question-dates";
import { howItGrows } from "../support/growth";

const NOW = new Date("2026-11-22T10:00:00Z");
const iso = (d?: Date) => d?.toISOString().slice(0, 10);

test("attack: dates said again and again are read in linear time", async () => {
  for (const unit of ["Mon 1 ", "May 1 ", "1/1 ", "12.06.2001 "])
    expect({ unit, grows: await howItGrows((n) => dateRange(unit.repeat(n), NOW), 12) }).toEqual({ unit, grows: "linear" });
});

test("attack: a question of hostile dates reads as a date or none, never an error", () => {
  for (const q of [
    "between 99 and 1 Foo 99999",
    "between 5 and 3 May",
    "on 99/99",
    "on 31.12.9999",
    "FRI 31/31",
    "between 1 and ".repeat(300),
    "1 May - ".repeat(500),
    "\u0000on\u0001 14\u0002 May",
  ]) {
    const p = planQuery(q, NOW);
    for (const d of [p.dateFrom, p.dateTo]) expect({ q, valid: d === undefined || !Number.isNaN(d.getTime()) }).toEqual({ q, valid: true });
  }
});

test("a date far into a long question is read as the question alone reads it, with its range's second date", () => {
  // Past several windows, and cut across one: the filler's length is no multiple of a window.
  const filler = "tell me about the shop and what it sold to me ".repeat(23);
  for (const q of [
    "mails from 2024-03-01 to 2024-03-15",
    "mails between 2024-03-01 and 2024-03-15",
    "invoices since last week",
    "mails until 12.06.2001",
    "mails before yesterday",
    "between March 1 and March 15 2024",
    // chrono reads "May" as a month after "in" only: the window holding it holds the word before.
    "The team offsite is in Lisbon in May; flights booked by Orsolya.",
  ]) {
    const [alone, long] = [dateRange(q, NOW), dateRange(filler + q, NOW)];
    expect({ q, from: iso(long.from), to: iso(long.to), asked: long.asked }).toEqual({
      q,
      from: iso(alone.from),
      to: iso(alone.to),
      asked: alone.asked,
    });
  }
  expect([iso(dateRange(`${filler}mails from 2024-03-01 to 2024-03-15`, NOW).to)]).toEqual(["2024-03-16"]);
  const offsite = dateRange(`${filler}The team offsite is in Lisbon in May; flights booked by Orsolya.`, NOW);
  expect([iso(offsite.from), iso(offsite.to)]).toEqual(["2026-05-01", "2026-06-01"]);
});

test("attack: a range with a year at each end, or across a year's end, is read whole (as before the grammar)", () => {
  for (const [q, from, to] of [
    ["mails from December 2023 to January 2024", "2023-12-01", "2024-02-01"],
    ["receipts from 20 December 2017 to 5 January 2018", "2017-12-20", "2018-01-06"],
    ["mails from 3 March 2017 to 5 May 2018", "2017-03-03", "2018-05-06"],
    ["mails between March 3, 2017 and May 5, 2018", "2017-03-03", "2018-05-06"],
    ["receipts from 20 December to 5 January 2018", "2017-12-20", "2018-01-06"],
    ["receipts 28 Dec - 3 Jan 2018", "2017-12-28", "2018-01-04"],
    ["invoices from December to January 2024", "2023-12-01", "2024-02-01"],
  ] as const) {
    const p = planQuery(q, NOW);
    expect({ q, from: iso(p.dateFrom), to: iso(p.dateTo) }).toEqual({ q, from, to });
  }
});

test("attack: days across a year's end without a year are matched in every year, both sides of New Year", () => {
  const p = planQuery("What did I spend between 20 December and 5 January?", NOW);
  expect(p.days?.anyYear).toBe(true);
  const on = (d: string) => onDaysSaid(Date.parse(`${d}T00:00:00Z`), p.days!);
  expect(["2017-12-20", "2017-12-31", "2018-01-01", "2018-01-05", "2017-12-19", "2018-01-06"].map(on)).toEqual([
    true,
    true,
    true,
    true,
    false,
    false,
  ]);
});

test("attack: ends said the wrong way round, or a 29 February without a year, make no empty or backward range", () => {
  for (const q of [
    "mails on 24/01/18 and 31/12/99",
    "between 2024-03-01 and 2020-01-01",
    "in February 29",
    "receipts on 29 February",
    "on 29/02",
    "January 31 – 13 march 31",
  ]) {
    const r = dateRange(q, NOW);
    expect({ q, forward: !(r.from && r.to) || r.from < r.to }).toEqual({ q, forward: true });
  }
  expect(iso(dateRange("receipts on 29 February", NOW).from)).toBe("2024-02-29");
  // Chrono's reading across a year's end, its first end without a year.
  const r = dateRange("mails between December 20 and January 5, 2018", NOW);
  expect([iso(r.from), iso(r.to)]).toEqual(["2017-12-20", "2018-01-06"]);
});

test("attack: a day that is part of what is sought does not hide the day asked after it", () => {
  const p = planQuery("Tokyo Presentation 15 May: what did I buy on 16 May 2018?", NOW);
  expect([p.timeAsked, iso(p.dateFrom), iso(p.dateTo)]).toEqual([true, "2018-05-16", "2018-05-17"]);
});
