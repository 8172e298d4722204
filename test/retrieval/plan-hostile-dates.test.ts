// Attack: dates a question names at the edge of what a Date holds (±8.64e15 ms). A range whose
// end falls one day past the last representable day is an Invalid Date, and every local index
// then throws in toISOString (rank.ts's SQL params): the question's connectors all fail.
import { expect, test } from "bun:test";
import { planQuery } from "../../src/retrieval/plan";

const LAST_MS = 8.64e15;
const now = new Date("2026-01-01T00:00:00Z");
/** "in N days" landing on the last day a Date holds (+275760-09-13). */
const toLastDay = Math.floor((LAST_MS - now.getTime()) / 86_400_000);

const valid = (d: Date | undefined) => d === undefined || !Number.isNaN(d.getTime());

test("attack: a question's dates are valid Dates or none, even on the last day a Date holds", () => {
  for (const q of [
    `mails in ${toLastDay} days`,
    `next ${toLastDay} days`,
    `within the next ${toLastDay} days`,
    `mails until ${toLastDay} days from now`,
    `emails between today and ${toLastDay} days from now`,
  ]) {
    const p = planQuery(q, now);
    expect({ q, from: valid(p.dateFrom), to: valid(p.dateTo) }).toEqual({ q, from: true, to: true });
  }
});

test("dates far in the past and future that a Date still holds, or that chrono leaves alone, are valid or none", () => {
  for (const q of [
    "mails from 100000000 days ago",
    "since 273791 years ago",
    "mails in 271822 years",
    `mails in ${toLastDay + 1} days`,
    "mails on September 13, 275760",
    "in the year 0",
    "since 99999999999999999999 weeks ago",
  ]) {
    const p = planQuery(q, now);
    expect({ q, from: valid(p.dateFrom), to: valid(p.dateTo) }).toEqual({ q, from: true, to: true });
  }
});
