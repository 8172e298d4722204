// The days a question names, read once into its plan by question-dates.ts's grammar (D32): a day,
// a month, a range, a weekday and its abbreviations, in the languages of the tables; and the
// documents dated on them, which win among a shop's many receipts (evidence.ts datedAsAsked).
import { describe, expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { datedAsAsked } from "../../src/retrieval/evidence";
import { planQuery } from "../../src/retrieval/plan";
import { onDaysSaid } from "../../src/retrieval/question-dates";

const NOW = new Date("2026-11-22T10:00:00Z");
const iso = (d?: Date) => d?.toISOString().slice(0, 10);
const read = (q: string) => {
  const p = planQuery(q, NOW);
  return [q, p.timeAsked, iso(p.dateFrom), iso(p.dateTo), p.days?.anyYear, p.days?.weekday];
};
const day = (iso: string) => Date.parse(`${iso}T00:00:00Z`);
const receipt = (content: string): SourceRecord => ({
  id: "r",
  title: "receipt.txt",
  content,
  type: "file",
  metadata: {},
  source_url: "",
  date: "",
  path: "r.txt",
});

describe("a day, a month or a range said in a question", () => {
  test("a day with its month's name or in numbers, with a cue or a weekday, in each language of the tables", () => {
    for (const [q, from] of [
      ["What did I eat at McDonald's on Sunday 24 June 2018?", "2018-06-24"],
      ["Who served me at Mizu Mentai on 31 March 2018?", "2018-03-31"],
      ["What was the pickup time of the Domino's order of 8 May 2018?", "2018-05-08"],
      ["Hoeveel wisselgeld kreeg ik bij Sanyu op 2 december 2017?", "2017-12-02"],
      ["Qu'ai-je acheté chez Aik Huat le 13 juillet 2017 ?", "2017-07-13"],
      ["Wie viel habe ich am 21. November 2016 bei 99 Speed Mart bezahlt?", "2016-11-21"],
      ["What did I buy at Sanyu on 24/05/2017?", "2017-05-24"],
    ] as const)
      expect(read(q).slice(0, 4)).toEqual([q, true, from, iso(new Date(day(from) + 86_400_000))]);
  });

  test("ranges of days and of months, the last day or month included", () => {
    expect(read("What was my total at Aik Huat between 10 and 20 June 2017?").slice(1, 4)).toEqual([true, "2017-06-10", "2017-06-21"]);
    expect(read("How much did I pay at 99 Speed Mart from 1 to 10 February 2016?").slice(1, 4)).toEqual([true, "2016-02-01", "2016-02-11"]);
    expect(read("How much did I spend at Mr. D.I.Y. 20-25 May 2016?").slice(1, 4)).toEqual([true, "2016-05-20", "2016-05-26"]);
    expect(read("receipts du 1 au 10 février 2016").slice(1, 4)).toEqual([true, "2016-02-01", "2016-02-11"]);
    expect(read("between March 1 and March 15 2024").slice(1, 4)).toEqual([true, "2024-03-01", "2024-03-16"]);
    // Without a year, a document of any year's May to July meets it; mail and tables keep every year.
    expect(read("receipts from May to July")).toEqual(["receipts from May to July", false, undefined, undefined, true, undefined]);
    expect(read("Hoeveel heb ik betaald bij Popular Book in april 2018?").slice(1, 4)).toEqual([true, "2018-04-01", "2018-05-01"]);
  });

  test("a weekday or its abbreviation (a row of words.ts WEEKDAYS) says a pair of numbers is a day, read either way round", () => {
    const p = planQuery("How much did I pay at AEON on FRI 09/02?", NOW);
    expect([p.timeAsked, p.days?.anyYear, p.days?.weekday]).toEqual([false, true, 5]);
    // 9 February 2018 was a Friday, 2 September 2018 a Sunday, 9 February 2019 a Saturday.
    expect([day("2018-02-09"), day("2018-09-02"), day("2019-02-09")].map((t) => onDaysSaid(t, p.days!))).toEqual([true, false, false]);
    expect(planQuery("Wat betaalde ik bij AEON op vr 09/02?", NOW).days?.weekday).toBe(5);
    expect(planQuery("Popular Book on WED 24/01", NOW).days?.weekday).toBe(3);
  });

  test("a day said without a year is of any year for documents; mail and tables are not narrowed by it", () => {
    const p = planQuery("What did I pay at Gardenia on 14 December?", NOW);
    expect([p.timeAsked, iso(p.dateFrom), p.days?.anyYear]).toEqual([false, undefined, true]);
    // Test half: "the Senate hearing on April 18" (2001) lost its mail when the day narrowed mail to 2026.
    expect(planQuery("Who testifies at the Senate hearing on April 18?", NOW).terms).toEqual([
      "testifies",
      "senate",
      "hearing",
      "april",
      "18",
    ]);
    expect([day("2017-12-14"), day("2017-12-15")].map((t) => onDaysSaid(t, p.days!))).toEqual([true, false]);
  });

  test("a date that is part of what is sought stays words: no cue, a subject line, a pair of numbers alone, 'when' asked of it", () => {
    for (const q of [
      "Tokyo Presentation 15 May",
      "Re: Meeting on 14 May",
      "How many pages 10-12 of the report",
      "What is 3/4 of the total",
    ])
      expect(read(q).slice(0, 2)).toEqual([q, false]);
    expect(planQuery("When is the Board of Directors meeting on 14 August 2001?", NOW).timeAsked).toBe(false);
    // "Since" leaves the end open, as before.
    expect(read("receipts since April 2014").slice(1, 4)).toEqual([true, "2014-04-01", undefined]);
  });

  test("a day written as documents write it ('29 maart 2014') is also searched by its words; numbers are not", () => {
    expect(planQuery("Wat was het bedrag op de factuur van 29 maart 2014?", NOW).terms).toEqual([
      "bedrag",
      "factuur",
      "29",
      "maart",
      "2014",
    ]);
    expect(planQuery("How much did I pay at AEON on FRI 09/02/2018?", NOW).terms).toEqual(["pay", "aeon"]);
  });
});

describe("documents dated as asked", () => {
  test("a receipt of the day asked is of it, one of another day is not, one naming no day is neither", () => {
    const p = planQuery("How much did I pay at AEON on FRI 09/02?", NOW);
    expect(datedAsAsked(p, receipt("AEON CO. (M) BHD\nTOTAL 5.90\n09/02/2018 12:53"))).toBe(true);
    expect(datedAsAsked(p, receipt("AEON CO. (M) BHD\nTOTAL 476.80\n11/05/2018 10:02"))).toBe(false);
    expect(datedAsAsked(p, receipt("AEON CO. (M) BHD\nTOTAL 5.90"))).toBeUndefined();
    expect(datedAsAsked(planQuery("How much did I pay at AEON?", NOW), receipt("TOTAL 5.90\n09/02/2018"))).toBeUndefined();
  });
});
