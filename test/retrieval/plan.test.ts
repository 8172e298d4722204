// Planning a question, with a fixed clock (issue: the query pipeline).
import { describe, expect, test } from "bun:test";
import { controlsAsSpaces, searchNeedles } from "../../src/connectors/types";
import { billedIn } from "../../src/retrieval/countries";
import { planQuery } from "../../src/retrieval/plan";

const NOW = new Date("2026-11-22T10:00:00Z");
const iso = (d?: Date) => d?.toISOString().slice(0, 10);

describe("planQuery", () => {
  test("terms without stop words; quoted phrases; source hints", () => {
    const p = planQuery('emails from Jeff about the "price caps" in California', NOW);
    expect(p.terms).toEqual(["emails", "jeff", "california"]);
    expect(p.phrases).toEqual(["price caps"]);
    expect(p.people).toEqual(["Jeff"]);
    expect(p.sourceHint).toBe("email");
    // Orders and customers are rows of a shop's tables; invoices are documents (issue 16).
    expect(planQuery("open orders of Acme", NOW).sourceHint).toBe("row");
    expect(planQuery("fuel invoice from Poland", NOW).sourceHint).toBe("file");
    expect(planQuery("Acme", NOW).sourceHint).toBeUndefined();
    // "How much" and "how many" ask for an amount, not for mail that says "thanks so much"
    // (outside walkthrough: "How much did I spend at Nando's?" lost the receipt to such mail).
    expect(planQuery("How much did I spend at Nando's?", NOW).terms).toEqual(["spend", "nando"]);
    expect(planQuery("how many invoices from Acme", NOW).terms).toEqual(["invoices", "acme"]);
  });

  test("a question asking when names the time of what it asks about: words to match, not a filter on the records", () => {
    // Outside walkthrough: the notice of the August meeting was sent in July, and the filter lost it.
    const when = planQuery("When is the Board of Directors meeting in August 2001?", NOW);
    expect([when.dateFrom, when.dateTo, when.timeAsked]).toEqual([undefined, undefined, false]);
    expect(when.terms).toEqual(["board", "directors", "meeting", "august", "2001"]);
    const mail = planQuery("mail about the board meeting in August 2001", NOW);
    expect([mail.dateFrom?.toISOString(), mail.timeAsked]).toEqual(["2001-08-01T00:00:00.000Z", true]);
    // Unless the date is the records' ("invoices in March 2023") or comes right after "when in" (outside attack).
    for (const [q, from] of [
      ["When did I pay invoices in March 2023?", "2023-03-01T00:00:00.000Z"],
      ["What date were the receipts from July 2017 issued?", "2017-07-01T00:00:00.000Z"],
      ["When in 2022 did we pay Orlen more than 300 PLN?", "2022-01-01T00:00:00.000Z"],
    ] as const)
      expect([q, planQuery(q, NOW).dateFrom?.toISOString()]).toEqual([q, from]);
  });

  test("dates in words, relative to the clock", () => {
    const cases: Array<[string, string | undefined, string | undefined]> = [
      ["invoices last month", "2026-10-01", "2026-11-01"],
      ["what did Acme invoice us in March", "2026-03-01", "2026-04-01"],
      ["orders since 2001", "2001-01-01", undefined],
      ["mail before 2001", undefined, "2001-01-01"],
      ["reports in 2024", "2024-01-01", "2025-01-01"],
      ['"price caps" in May 2001', "2001-05-01", "2001-06-01"],
      ["meetings on 2001-05-14", "2001-05-14", "2001-05-15"],
      ["between March 1 and March 15 2024", "2024-03-01", "2024-03-16"],
      ["invoices last year", "2025-01-01", "2026-01-01"],
    ];
    for (const [q, from, to] of cases) {
      const p = planQuery(q, NOW);
      expect([q, iso(p.dateFrom), iso(p.dateTo)]).toEqual([q, from, to]);
    }
    // The words of the date are not search terms.
    expect(planQuery("invoices last month", NOW).terms).toEqual(["invoices"]);
  });

  test("a currency before or after the amount, as a whole word (second outside attack): not 'Europe', not a gene's 'rs10818488'", () => {
    for (const [question, value, currency] of [
      ["invoices over 1000 euros", 1000, "EUR"],
      ["invoices over EUR 1000", 1000, "EUR"],
      ["receipts over RM 100", 100, "MYR"],
      ["invoices over ₹1000", 1000, "INR"],
      ["bills over Rs.500", 500, "INR"],
      ["receipts over 100 ringgit", 100, "MYR"],
      ["orders over 50 pounds", 50, "GBP"],
      ["invoices from Europe over 1000", 1000, undefined],
    ] as const) {
      const [amount] = planQuery(question, NOW).amounts;
      expect([question, amount?.value, amount?.currency, amount?.comparison]).toEqual([question, value, currency, "over"]);
    }
    expect(planQuery("invoices over 1000 euros", NOW).terms).toEqual(["invoices"]);
    const snp = planQuery("The locus rs647161 is associated with colorectal carcinoma.", NOW);
    expect(snp.amounts).toEqual([]);
    expect(snp.terms).toContain("rs647161");
    // A lower-case code before a number, nothing compared: words to find (third outside attack).
    expect(planQuery("what did rs 12345 show", NOW).amounts).toEqual([]);
    expect(planQuery("which invoice was eur 4.904,94", NOW).terms).toContain("904");
  });

  test("amounts with currency and comparison; e-mail addresses", () => {
    const p = planQuery("Acme invoices over 1,000 EUR from jeff.dasovich@enron.com", NOW);
    expect(p.amounts).toEqual([{ value: 1000, currency: "EUR", comparison: "over" }]);
    expect(p.addresses).toEqual(["jeff.dasovich@enron.com"]);
    expect(p.terms).toContain("jeff.dasovich@enron.com");
    expect(p.terms).not.toContain("000");
    expect(planQuery("receipts under $25.50", NOW).amounts).toEqual([{ value: 25.5, currency: "USD", comparison: "under" }]);
  });
});

describe("a question's words as written", () => {
  test("accents are kept (SQL and IMAP match substrings of what is stored); a decomposed form is composed", () => {
    expect(planQuery("customers in São Paulo", NOW).terms).toEqual(["customers", "são", "paulo"]);
    expect(planQuery("where is the résumé?".normalize("NFD"), NOW).terms).toEqual(["résumé"]);
  });

  test("a combining mark is part of its word: Hindi and Thai words are not cut at their vowel signs", () => {
    expect(planQuery("नमस्ते दुनिया", NOW).terms).toEqual(["नमस्ते", "दुनिया"]);
    expect(planQuery("สวัสดี", NOW).terms).toEqual(["สวัสดี"]);
  });
});

describe("countries named", () => {
  test("their own names are searched too; an amount in their currency is recognised", () => {
    const plan = planQuery("fuel invoice from Poland");
    expect(plan.terms).toEqual(["fuel", "invoice", "poland", "polska", "polski", "polskie"]);
    expect(plan.countries.map((c) => c.currency)).toEqual(["PLN"]);
    expect(planQuery("invoices from Acme").countries).toEqual([]);
    const [poland] = plan.countries;
    expect(billedIn("Razem: 316,83 PLN", poland!)).toBe(true);
    expect(billedIn("Do zapłaty 316,83 zł", poland!)).toBe(true);
    expect(billedIn("PLN 316.83", poland!)).toBe(true);
    // A code inside a word, or with no number beside it, is not an amount.
    expect(billedIn("SPLNX 316", poland!)).toBe(false);
    expect(billedIn("prices in PLN on request", poland!)).toBe(false);
  });
});

describe("questions for the most or the least", () => {
  test("largest first, smallest first, or no order; 'most recent' asks for a time", () => {
    expect(planQuery("which customer in Brazil spent the most").order).toBe("desc");
    expect(planQuery("highest invoice total in 2021").order).toBe("desc");
    expect(planQuery("the cheapest order from Oslo").order).toBe("asc");
    expect(planQuery("the least paid invoice").order).toBe("asc");
    expect(planQuery("the most recent mail from Jeff").order).toBeUndefined();
    expect(planQuery("invoices from Acme").order).toBeUndefined();
  });

  test("a comparator is a condition, not a superlative: 'at least 100' sorts nothing, in every language of the tables", () => {
    for (const q of [
      "invoices of at least 100 EUR",
      "orders of at most 50 dollars",
      "factures d'au moins 100 euros",
      "faktury co najmniej 100 zł",
    ])
      expect({ q, order: planQuery(q).order }).toEqual({ q, order: undefined });
    expect(planQuery("the largest invoice of at least 100 EUR").order).toBe("desc");
    expect(planQuery("the cheapest order of at least 20 dollars").order).toBe("asc");
  });

  test("a superlative is read in the invoices' languages too (words.ts LARGEST, SMALLEST: a row each)", () => {
    expect(planQuery("Welke factuur had het hoogste totaal?").order).toBe("desc");
    expect(planQuery("la facture la plus chère de 2023").order).toBe("desc");
    expect(planQuery("Welche Rechnung hatte den höchsten Betrag?").order).toBe("desc");
    expect(planQuery("najwyższa faktura w 2024").order).toBe("desc");
    expect(planQuery("de goedkoopste bestelling").order).toBe("asc");
    expect(planQuery("die kleinste Rechnung").order).toBe("asc");
    expect(planQuery("la facture la plus récente").order).toBeUndefined();
  });
});

describe("dates as evidence, not walls (issue 16)", () => {
  test("a date in a subject line or without a time asked for is a word, not a filter", () => {
    for (const q of [
      "Re: Meeting on Friday",
      "Re: May 15th deal",
      "California update 5/3",
      "Monday conference call",
      "Tokyo Presentation 15 May",
      "directions for June 21-22",
    ]) {
      const p = planQuery(q, NOW);
      expect([q, p.timeAsked, p.dateFrom, p.dateTo]).toEqual([q, false, undefined, undefined]);
    }
    expect(planQuery("Re: Meeting on Friday", NOW).terms).toContain("friday");
  });

  test("a time asked for narrows", () => {
    for (const q of ["mail in June 2001", "since March", "emails from last week", "invoices from 2014", "meetings on 2001-05-14"]) {
      const p = planQuery(q, NOW);
      expect([q, p.timeAsked, Boolean(p.dateFrom || p.dateTo)]).toEqual([q, true, true]);
    }
    // The year is also a word to find in documents, whose dates are in their text.
    expect(planQuery("invoices from 2014", NOW).terms).toEqual(["invoices", "2014"]);
    // "From" a month is that month, as "from" a year is that year; "since" leaves the end open; a
    // range ends with its last month (outside walkthrough: "from April 2014" was read as since).
    const range = (q: string) => [q, iso(planQuery(q, NOW).dateFrom), iso(planQuery(q, NOW).dateTo)];
    expect(range("invoices from April 2014")).toEqual(["invoices from April 2014", "2014-04-01", "2014-05-01"]);
    expect(range("receipts since April 2014")).toEqual(["receipts since April 2014", "2014-04-01", undefined]);
    expect(range("mail from April to June 2014")).toEqual(["mail from April to June 2014", "2014-04-01", "2014-07-01"]);
    // Open-ended however it is said (outside attack), and a range between months ends with the last.
    for (const q of ["invoices from March 2025 onwards", "mail from March 2025 to date", "receipts starting from March 2025"])
      expect(range(q)).toEqual([q, "2025-03-01", undefined]);
    expect(range("invoices between March and May 2023")).toEqual(["invoices between March and May 2023", "2023-03-01", "2023-06-01"]);
  });

  test("a control character in a quoted phrase is a space: the phrase is asked as one, first, as with a space", () => {
    const plain = planQuery('payment terms of suppliers invoices "net 30"', NOW);
    const needled = (phrases: string[], terms: string[]) => searchNeedles({ phrases, terms, limit: 10 });
    for (const c of ["\u0007", "\u0000", "\r\n", "\u001b\u0000"]) {
      for (const quoted of [`net${c} 30`, `net${c}30`, `net ${c}30`]) {
        const p = planQuery(`payment terms of suppliers invoices "${quoted}"`, NOW);
        expect({ quoted, phrases: p.phrases }).toEqual({ quoted, phrases: ["net 30"] });
        expect(needled(p.phrases, p.terms)).toEqual(needled(plain.phrases, plain.terms));
        expect(needled(p.phrases, p.terms)[0]).toBe("net 30");
      }
    }
    // As the search reads the question (search.ts: controls as spaces first): the same phrase.
    expect(planQuery(controlsAsSpaces('"net\u0007 30"'), NOW).phrases).toEqual(["net 30"]);
  });

  test("'over 1000' is one thousand", () => {
    expect(planQuery("invoices over 1000", NOW).amounts).toEqual([{ value: 1000, currency: undefined, comparison: "over" }]);
  });
});
