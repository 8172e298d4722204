// Attack: questions as typed on other keyboards, or pasted from other text. The planner's terms
// are what SQL (LIKE/ILIKE) and IMAP (SEARCH TEXT) sources are asked for as substrings, so a
// term the data cannot contain finds nothing there, whatever the local index does with it.
import { describe, expect, test } from "bun:test";
import { planQuery } from "../../src/retrieval/plan";
import { howItGrows } from "../support/growth";

const NOW = new Date("2026-11-22T10:00:00Z");

describe("a question typed or pasted in another form", () => {
  test("full-width Latin (a Japanese or Chinese IME) asks for the same words as ASCII", () => {
    // 'ｉｎｖｏｉｃｅｓ ｆｒｏｍ Ｇｅｒｍａｎｙ' is NFC already: LIKE '%ｇｅｒｍａｎｙ%' matches no 'Germany'.
    const wide = planQuery("ｉｎｖｏｉｃｅｓ ｆｒｏｍ Ｇｅｒｍａｎｙ", NOW);
    const narrow = planQuery("invoices from Germany", NOW);
    expect(wide.terms).toEqual(narrow.terms);
    expect(wide.sourceHint).toBe(narrow.sourceHint);
  });

  test("a zero-width space, soft hyphen, word joiner or BOM pasted inside a word does not cut it in two", () => {
    // Copied from a web page or a PDF: U+200B, U+00AD, U+2060 and U+FEFF are invisible.
    // 'Ger\u200Bmany' was asked as 'ger' and 'many' (LIKE '%many%' matches 'Germany' and much else).
    for (const hidden of ["\u200B", "\u00AD", "\u2060", "\uFEFF"]) {
      const p = planQuery(`customers in Ger${hidden}many`, NOW);
      const plain = planQuery("customers in Germany", NOW).terms;
      expect(plain.slice(0, 2)).toEqual(["customers", "germany"]);
      expect([hidden.codePointAt(0)!.toString(16), p.terms]).toEqual([hidden.codePointAt(0)!.toString(16), plain]);
    }
  });

  test("an amount written the European way (1.000 / 1.234,56) is read as written", () => {
    // '1.000 EUR' is one thousand; it was read as 1 ('over 1' is met by every invoice).
    expect(planQuery("invoices over 1.000 EUR", NOW).amounts).toEqual([{ value: 1000, currency: "EUR", comparison: "over" }]);
    // '1.234,56 €' was dropped (NaN) and its digits became search terms.
    const p = planQuery("invoices over 1.234,56 €", NOW);
    expect(p.amounts).toEqual([{ value: 1234.56, currency: "EUR", comparison: "over" }]);
    expect(p.terms).toEqual(["invoices"]);
  });
});

describe("dates and names in other forms", () => {
  const iso = (d?: Date) => d?.toISOString().slice(0, 10);
  const range = (q: string) => {
    const p = planQuery(q, NOW);
    return [q, iso(p.dateFrom), iso(p.dateTo)];
  };

  test("a range of years asks for every year of it, the last included", () => {
    // Each was read as the first year alone (to 2000-01-01 or 2001-01-01): the mail of the
    // later years, asked for, is never searched.
    expect(range("mails from 2000 to 2001")).toEqual(["mails from 2000 to 2001", "2000-01-01", "2002-01-01"]);
    expect(range("mails between 2000 and 2001")).toEqual(["mails between 2000 and 2001", "2000-01-01", "2002-01-01"]);
    expect(range("mails from 1999 until 2001")).toEqual(["mails from 1999 until 2001", "1999-01-01", "2002-01-01"]);
    expect(range("contracts in 1999-2001")).toEqual(["contracts in 1999-2001", "1999-01-01", "2002-01-01"]);
  });

  test("a date with dots is day first, as where it is written (31.12.2001 already is)", () => {
    // '12.06.2001' was read as 6 December, '05.06.2001' as 6 May.
    expect(range("mails on 12.06.2001")).toEqual(["mails on 12.06.2001", "2001-06-12", "2001-06-13"]);
    expect(range("mails on 05.06.2001")).toEqual(["mails on 05.06.2001", "2001-06-05", "2001-06-06"]);
  });

  test("a sender's name with letters outside ASCII is a person, whole", () => {
    // 'from José García' gave the person 'Jos' (a sender boost for every Joseph and Josh);
    // 'from Émile Zola' and 'from Łukasz' gave none.
    expect(planQuery("emails from José García", NOW).people).toEqual(["José García"]);
    expect(planQuery("emails from Émile Zola", NOW).people).toEqual(["Émile Zola"]);
    expect(planQuery("emails from Łukasz", NOW).people).toEqual(["Łukasz"]);
  });
});

describe("attack3: what NFKC and the one amount reading changed for questions that planned well", () => {
  test("'№' and '™' are no letters glued to the word: 'счёт №4711' asks for 4711, 'Acme™' for acme", () => {
    // NFKC makes '№' 'No' and '™' 'TM': 'No4711' and 'AcmeTM' are one word each, which no
    // source holds (the index reads the stored '№4711' as 4711, LIKE '%no4711%' matches nothing).
    // Before NFKC the terms were '4711' and 'acme'.
    expect(planQuery("счёт №4711", NOW).terms).toContain("4711");
    expect(planQuery("invoice №4711", NOW).terms).toContain("4711");
    expect(planQuery("Acme™ invoices", NOW).terms).toContain("acme");
    // A quoted phrase pasted from the stored text is asked as stored.
    expect(planQuery('"Acme™ Corp" contract', NOW).phrases).toEqual(["Acme™ Corp"]);
  });

  test("an English amount with three decimals keeps its decimal point ('$3.459' a gallon, '4.125%')", () => {
    // amountValue reads any '.ddd' as thousands: 'over $3.459' became over 3459 (every record
    // with a price under 3459 dollars loses AMOUNT_BOOST); the reading before it said 3.459.
    expect(planQuery("gas stations charging over $3.459", NOW).amounts[0]?.value).toBe(3.459);
    expect(planQuery("loans with a rate above $4.125", NOW).amounts[0]?.value).toBe(4.125);
    // A percentage compared is a rate, no amount of money (D32: the condition grammar).
    expect(planQuery("loans with a rate above 4.125%", NOW).amounts).toEqual([]);
  });

  test("NFKC does not multiply the cost of a question: 4000 '⒛' plan in linear time, as 4000 letters do", async () => {
    // The REST limit is 4000 characters as sent; NFKC makes each '⒛' '20.' and each 'Ⅷ' 'VIII', and
    // the address pattern ([\w.+-]+@…) is quadratic in a run of such characters: ~170 ms on the
    // serving thread a question (12 ms for 4000 ASCII letters).
    for (const unit of ["v", "⒛", "Ⅷ"])
      expect([unit, await howItGrows((n) => planQuery(unit.repeat(n), NOW), 500)]).toEqual([unit, "linear"]);
  });
});

describe("a question in the invoices' languages, read by the language tables' rows (D32)", () => {
  test("its language's function words are no search terms: a source is not found for its 'ile', 'za', 'ai' or 'je'", () => {
    const polish = planQuery("Ile zapłaciłem za Internet w 2015?", NOW);
    expect(polish.terms).toEqual(["zapłaciłem", "internet", "2015"]);
    const french = planQuery("Combien ai-je payé à Verizon Wireless en 2015 ?", NOW);
    expect(french.terms).toEqual(["payé", "verizon", "wireless", "2015"]);
    expect(planQuery("Wie viel habe ich 2015 für Electricity ausgegeben?", NOW).terms).toEqual(["2015", "electricity", "ausgegeben"]);
  });

  test("a year after its language's time cue is the time asked ('w 2015', 'en 2015'), a range of years by its joining words", () => {
    for (const q of [
      "Ile zapłaciłem za Internet w 2015?",
      "Combien ai-je payé à Verizon Wireless en 2015 ?",
      "Hoeveel heb ik in 2015 uitgegeven?",
    ]) {
      const p = planQuery(q, NOW);
      expect([q, p.timeAsked, p.dateFrom?.toISOString(), p.dateTo?.toISOString()]).toEqual([
        q,
        true,
        "2015-01-01T00:00:00.000Z",
        "2016-01-01T00:00:00.000Z",
      ]);
    }
    const range = planQuery("Hoeveel facturen van 2013 tot 2014?", NOW);
    expect([range.dateFrom?.toISOString(), range.dateTo?.toISOString()]).toEqual(["2013-01-01T00:00:00.000Z", "2015-01-01T00:00:00.000Z"]);
  });
});
