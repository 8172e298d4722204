// The books parsers (D34) on the real files of shared/data/accounting: transaction counts as
// PROVENANCE.md gives them, each transaction's fields and its line, exact amounts, and broken
// or hostile files refused with their line (never their text).
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { parseBeancount } from "../../../src/connectors/books/beancount";
import {
  BookUnreadable,
  bookFormatOf,
  LineCounter,
  MAX_AMOUNT_DIGITS,
  MAX_LINE_CHARS,
  plainDecimal,
} from "../../../src/connectors/books/format";
import { parseGnucash } from "../../../src/connectors/books/gnucash";
import { parseLedger } from "../../../src/connectors/books/ledger";
import { parseOfx } from "../../../src/connectors/books/ofx";
import { parseQif } from "../../../src/connectors/books/qif";
import { bookRecords, MAX_TRANSACTION_ENTRIES, transactionOf } from "../../../src/connectors/books/records";
import { sumPostings } from "../../../src/connectors/books/sums";
import { SourceSkipped } from "../../../src/connectors/types";
import { SHARED_DATA } from "../../support/servers";

const BOOKS = join(SHARED_DATA, "accounting");
const text = (path: string, encoding: BufferEncoding = "utf8") => readFileSync(join(BOOKS, path), encoding);

/** Every transaction balances to zero per commodity (those of one-sided formats aside). */
const balanced = (postings: { account: string; amount: string; commodity: string }[]) =>
  Object.values(sumPostings(postings)).every((s) => /^-?0(\.0+)?$/.test(s));

describe("beancount", () => {
  const { transactions } = parseBeancount(text("beancount/example.beancount"), "example.beancount");

  test("example.beancount: 1,146 transactions, 2013-01-01 to 2015-12-20, each balanced, each at its line", () => {
    expect(transactions.length).toBe(1146);
    expect(transactions[0]!.date >= "2013-01-01").toBe(true);
    expect(
      transactions
        .map((t) => t.date)
        .sort()
        .at(-1),
    ).toBe("2015-12-20");
    const lines = text("beancount/example.beancount").split("\n");
    for (const t of transactions) {
      expect(lines[t.line - 1]!.startsWith(t.date)).toBe(true);
      // Postings carrying a cost ({...}) balance at cost; the rest in their own commodity.
      if (!lines.slice(t.line, t.line + t.postings.length + 2).some((l) => l.includes("{"))) expect(balanced(t.postings)).toBe(true);
    }
  });

  test("payee, narration, tags and exact amounts as written", () => {
    const t = transactions.find((x) => x.line === 1253)!;
    expect(t).toMatchObject({ date: "2013-06-19", payee: "Bar Crudo", narration: "", tags: ["trip-san-francisco-2013"] });
    const sale = transactions.find((x) => x.payee === "" && x.narration === "Sell shares of ITOT" && x.date === "2013-10-21")!;
    expect(sale.postings).toContainEqual({ account: "Assets:US:ETrade:ITOT", amount: "-8", commodity: "ITOT" });
    expect(sale.postings).toContainEqual({ account: "Assets:US:ETrade:Cash", amount: "837.05", commodity: "USD" });
  });

  test("an elided amount takes the balance of the others' weights (cost times units)", () => {
    const {
      transactions: [t],
    } = parseBeancount(
      '2014-01-02 * "Broker" "Buy"\n  Assets:Stock  10 ABC {12.50 USD}\n  Expenses:Fees  1.05 USD\n  Assets:Cash\n',
      "x.beancount",
    );
    expect(t!.postings.at(-1)).toEqual({ account: "Assets:Cash", amount: "-126.05", commodity: "USD" });
  });

  test("a transaction line it cannot read refuses the file with its line", () => {
    expect(() => parseBeancount('2014-01-02 * "A"\n  Assets:Cash  12,5x USD\n', "x.beancount")).toThrow(
      new BookUnreadable(2, "a posting's amount is not a number and a commodity"),
    );
  });
});

describe("hostile lines", () => {
  test("a run of 60,000 digits is refused at once (its amount pattern once backtracked for minutes over it)", () => {
    expect(() => parseBeancount(`2024-01-01 * "x"\n  Assets:Cash ${"1".repeat(60_000)}x\n`, "x.beancount")).toThrow(
      new BookUnreadable(2, "a posting's amount is not a number and a commodity"),
    );
    expect(() => parseBeancount(`2024-01-01 * "x"\n  Assets:Cash 1 X {${"1".repeat(60_000)}\n`, "x.beancount")).not.toThrow();
  });

  test("an amount of more than MAX_AMOUNT_DIGITS digits is no amount (a bigint of 60,000 digits took 60 ms to print)", () => {
    expect(plainDecimal("1".repeat(MAX_AMOUNT_DIGITS))).toBe("1".repeat(MAX_AMOUNT_DIGITS));
    expect(plainDecimal(`${"1".repeat(MAX_AMOUNT_DIGITS)}.5`)).toBeUndefined();
    expect(() => parseLedger(`2024/01/01 x\n  A:B  ${"1".repeat(60_000)}\n  C\n`, "x.ledger")).toThrow(
      new BookUnreadable(2, "a posting's amount is not a number"),
    );
  });

  test("a line past MAX_LINE_CHARS refuses a line-based journal, with its line", () => {
    const long = "a".repeat(MAX_LINE_CHARS + 1);
    const tooLong = `a line is longer than ${MAX_LINE_CHARS} characters`;
    expect(() => parseLedger(`; ok\n2024/01/01 ${long}\n`, "x.ledger")).toThrow(new BookUnreadable(2, tooLong));
    expect(() => parseBeancount(`2024-01-01 * "${long}"\n`, "x.beancount")).toThrow(new BookUnreadable(1, tooLong));
    expect(() => parseQif(`!Type:Bank\nP${long}\n^\n`, "x.qif")).toThrow(new BookUnreadable(2, tooLong));
  });
});

describe("Ledger", () => {
  const { transactions } = parseLedger(text("ledger/sample.dat"), "sample.dat");

  test("sample.dat: 7 transactions, 2004-05-01 to 2004-05-27; rules (= and ~) are not transactions", () => {
    expect(transactions.length).toBe(7);
    // `ledger stats` counts 17 postings: these 16 and the one its automated transaction (`=`) adds.
    expect(transactions.reduce((n, t) => n + t.postings.length, 0)).toBe(16);
    expect(transactions.map((t) => t.date)).toEqual([
      "2004-05-01",
      "2004-05-03",
      "2004-05-14",
      "2004-05-14",
      "2004-05-14",
      "2004-05-27",
      "2004-05-27",
    ]);
  });

  test("commodities before and after the number, a price, elided amounts, applied tags, notes, Cyrillic accounts", () => {
    expect(transactions[0]!.postings).toEqual([
      { account: "Assets:Bank:Checking", amount: "1000.00", commodity: "$" },
      { account: "Equity:Opening Balances", amount: "-1000.00", commodity: "$" },
    ]);
    expect(transactions[1]!.postings).toEqual([
      { account: "Assets:Brokerage", amount: "50", commodity: "AAPL" },
      { account: "Equity:Opening Balances", amount: "-1500.00", commodity: "$" },
    ]);
    expect(transactions[2]!.postings[0]).toEqual({ account: "Assets:Bank:Checking", amount: "500.00", commodity: "€" });
    expect(transactions[4]!.postings[0]!.account).toBe("Русский язык:Активы:Русский язык:Русский язык");
    expect(transactions[5]!.tags).toEqual(["foo"]);
    expect(transactions[6]).toMatchObject({ payee: "Credit card company", line: 46, tags: ["MyTag", "AnotherTag"], meta: { code: "100" } });
  });

  test("amounts as hledger writes them: a sign before the commodity, thousands, a quoted commodity", () => {
    const {
      transactions: [t],
    } = parseLedger('2024-01-05 Shop\n    Expenses:Food    -$1,234.5\n    Assets:Fund    3 "VANGUARD 500"\n    Assets:Cash\n', "x.journal");
    expect(t!.postings.slice(0, 2)).toEqual([
      { account: "Expenses:Food", amount: "-1234.5", commodity: "$" },
      { account: "Assets:Fund", amount: "3", commodity: "VANGUARD 500" },
    ]);
    expect(t!.postings.slice(2)).toEqual([
      { account: "Assets:Cash", amount: "1234.5", commodity: "$" },
      { account: "Assets:Cash", amount: "-3", commodity: "VANGUARD 500" },
    ]);
  });

  test("a comment block hides what looks like a transaction", () => {
    const { transactions } = parseLedger(
      "comment\n2024/01/01 Not booked\n    A:B  $1\n    C\nend comment\n2024/01/02 Booked\n    A:B  $2\n    C\n",
      "x.ledger",
    );
    expect(transactions.map((t) => [t.payee, t.line])).toEqual([["Booked", 6]]);
  });

  test("two postings without an amount refuse the file at the transaction's line", () => {
    expect(() => parseLedger("\n2024/01/05 Shop\n    Expenses:Food\n    Assets:Cash\n", "x.ledger")).toThrow(
      new BookUnreadable(2, "a transaction leaves out more than one posting's amount"),
    );
  });
});

describe("QIF", () => {
  // PROVENANCE.md: the records ending in `^` of each file.
  const RECORDS: Record<string, number> = {
    "Money95bank_fr.qif": 143,
    "Money95invst_fr.qif": 10,
    "Money95mfunds_fr.qif": 3,
    "Money95stocks_fr.qif": 28,
    "ms-money.qif": 347,
    "web.qif": 7,
    "cbb-export.qif": 9,
    "abc.qif": 7,
    "abc-all.qif": 96,
    "bogus.qif": 99,
    "every.qif": 250,
    "quicktest.qif": 132,
    "swipe.qif": 11,
  };

  test("every record of the 13 files is read: transactions and list entries together make PROVENANCE.md's counts", () => {
    const files = readdirSync(join(BOOKS, "gnucash")).filter((f) => f.endsWith(".qif"));
    expect(files.sort()).toEqual(Object.keys(RECORDS).sort());
    for (const file of files) {
      const { transactions, otherEntries } = parseQif(text(`gnucash/${file}`, "latin1"), file);
      expect({ file, records: transactions.length + otherEntries }).toEqual({ file, records: RECORDS[file]! });
      expect(transactions.length).toBeGreaterThan(0);
      for (const t of transactions) expect(t.date).toMatch(/^(19|20)\d\d-\d\d-\d\d$/);
    }
  });

  test("a French MS Money file (ISO-8859-1) reads its accents; splits and transfers balance the account's posting", () => {
    const [record] = bookRecords(readFileSync(join(BOOKS, "gnucash/Money95bank_fr.qif")), {
      file: "b.qif",
      url: "file:///b.qif",
      format: "qif",
    }).slice(-1);
    expect(record!.title).toContain("Crédit Mutuel");
    const { transactions } = parseQif(text("gnucash/cbb-export.qif"), "cbb-export.qif");
    for (const t of transactions) if (t.postings.length > 1) expect(balanced(t.postings)).toBe(true);
  });

  test("a record cut off before its `^` refuses the file", () => {
    expect(() => parseQif("!Type:Bank\nD01/02/95\nT12.00\n", "x.qif")).toThrow(new BookUnreadable(2, "the last record has no closing ^"));
  });
});

describe("OFX", () => {
  test("SGML 1.02 statements: 12 and 27 transactions, exact amounts, the statement's currency and account", () => {
    const download = parseOfx(text("beancount/ingest/Downloads/ofxdownload.ofx"), "d.ofx").transactions;
    expect(download.length).toBe(12);
    expect(download[0]).toMatchObject({
      date: "2013-12-01",
      payee: "SPOTIFY USA         28770130901",
      postings: [{ account: "AMEX:379700001111222", amount: "-9.99", commodity: "USD" }],
    });
    const card = parseOfx(text("beancount/ingest/office/documents/Liabilities/US/CreditCard/2013-12-03.bofa.ofx"), "c.ofx").transactions;
    expect(card.length).toBe(27);
  });

  test("XML 2.x reads the same, entities decoded, each transaction at its own line", () => {
    const xml = `<?xml version="1.0" encoding="UTF-8"?>\n<?OFX OFXHEADER="200" VERSION="211"?>\n<OFX><BANKMSGSRSV1><STMTTRNRS><STMTRS>\n<CURDEF>EUR</CURDEF><BANKACCTFROM><ACCTID>FR76-1</ACCTID></BANKACCTFROM>\n<BANKTRANLIST>\n<STMTTRN><TRNTYPE>DEBIT</TRNTYPE><DTPOSTED>20240105</DTPOSTED><TRNAMT>-12.30</TRNAMT><FITID>a1</FITID><NAME>Caf&eacute; &amp; Co</NAME></STMTTRN>\n<STMTTRN><TRNTYPE>CREDIT</TRNTYPE><DTPOSTED>20240106120000</DTPOSTED><TRNAMT>1,000.00</TRNAMT><FITID>a2</FITID><NAME>Salary</NAME><CURRENCY><CURSYM>USD</CURSYM></CURRENCY></STMTTRN>\n</BANKTRANLIST></STMTRS></STMTTRNRS></BANKMSGSRSV1></OFX>\n`;
    const { transactions } = parseOfx(xml, "x.ofx");
    expect(transactions.map((t) => [t.date, t.payee, t.postings[0], t.line])).toEqual([
      ["2024-01-05", "Caf&eacute; & Co", { account: "FR76-1", amount: "-12.30", commodity: "EUR" }, 6],
      ["2024-01-06", "Salary", { account: "FR76-1", amount: "1000.00", commodity: "USD" }, 7],
    ]);
  });

  test("lines are counted in one pass: each character looked at once, however many offsets are asked (a one-line statement's were each read to its end)", () => {
    const oneLine = "<STMTTRN>x</STMTTRN>".repeat(50_000);
    const lines = new LineCounter(oneLine);
    for (let at = 0; at < oneLine.length; at += 20) expect(lines.lineAt(at)).toBe(1);
    expect(lines.looked).toBe(oneLine.length);
    const text = "a\nbb\n\nccc";
    const counter = new LineCounter(text);
    expect([0, 1, 2, 5, 6, 7, 10].map((at) => counter.lineAt(at))).toEqual([1, 1, 2, 3, 4, 4, 4]);
    expect(counter.looked).toBe(text.length);
  });

  test("a statement cut inside a transaction, or no OFX at all, is refused", () => {
    expect(() => parseOfx("<OFX><STMTTRN><DTPOSTED>20240101<TRNAMT>-1", "x.ofx")).toThrow(
      new BookUnreadable(1, "a transaction is cut off"),
    );
    expect(() => parseOfx("hello", "x.ofx")).toThrow(new BookUnreadable(1, "no <OFX> element"));
  });
});

describe("GnuCash", () => {
  test("taxreport.gnucash (v2): 75 transactions, 2000-01-08 to 2001-01-11, full account names, balanced, exact", () => {
    const { transactions } = parseGnucash(text("gnucash/taxreport.gnucash"), "taxreport.gnucash");
    expect(transactions.length).toBe(75);
    const dates = transactions.map((t) => t.date).sort();
    expect([dates[0], dates.at(-1)]).toEqual(["2000-01-08", "2001-01-11"]);
    // The demo book holds 12 transactions of one split each (its "test dup" and "Retained Earnings" ones): those cannot balance.
    expect(transactions.filter((t) => t.postings.length === 1).length).toBe(12);
    for (const t of transactions) if (t.postings.length > 1) expect(balanced(t.postings)).toBe(true);
    const tax = transactions.find((t) => t.line === 3236)!;
    expect(tax).toMatchObject({ payee: "Fed Est Tax", date: "2000-01-08" });
    expect(tax.postings[0]).toEqual({ account: "Expense:Taxes:Federal:Estimated", amount: "187.00", commodity: "USD" });
  });

  test("the same book gzip-compressed (GnuCash's default) reads the same records", () => {
    const place = { file: "t.gnucash", url: "file:///t.gnucash", format: "gnucash" as const };
    const plain = bookRecords(readFileSync(join(BOOKS, "gnucash/taxreport.gnucash")), place);
    expect(bookRecords(gzipSync(readFileSync(join(BOOKS, "gnucash/taxreport.gnucash"))), place)).toEqual(plain);
    expect(plain.length).toBe(75);
  });

  test("currency_tree_xml.gnucash (v1): 15 transactions in several currencies", () => {
    const { transactions } = parseGnucash(text("gnucash/currency_tree_xml.gnucash"), "c.gnucash");
    expect(transactions.length).toBe(15);
    const commodities = new Set(transactions.flatMap((t) => t.postings.map((p) => p.commodity)));
    expect([...commodities].sort()).toEqual(expect.arrayContaining(["DEM", "FRF", "USD"]));
  });

  test("a book cut off inside a transaction is refused; so is an amount that no decimal holds exactly", () => {
    const book = text("gnucash/taxreport.gnucash");
    expect(() => parseGnucash(book.slice(0, book.indexOf("</gnc:transaction>", 100_000) - 10), "t.gnucash")).toThrow(BookUnreadable);
    expect(() =>
      parseGnucash(book.replace("<split:quantity>10000/100</split:quantity>", "<split:quantity>1/3</split:quantity>"), "t.gnucash"),
    ).toThrow("a split's amount is not a fraction over a power of ten");
  });
});

describe("records", () => {
  const place = { file: "books/example.beancount", url: "file:///srv/books/example.beancount", format: "beancount" as const };
  const records = bookRecords(readFileSync(join(BOOKS, "beancount/example.beancount")), place);

  test("one record per transaction: text like the journal entry, id and address at its file and line, postings in metadata", () => {
    expect(records.length).toBe(1146);
    const r = records.find((x) => x.id === "books/example.beancount#L1965")!;
    expect(r.title).toBe("Cafe Modagor: Eating out with Joe");
    expect(r.content).toBe(
      "2014-03-02 Cafe Modagor Eating out with Joe\n  Liabilities:US:Chase:Slate  -42.15 USD\n  Expenses:Food:Restaurant  42.15 USD",
    );
    expect(r.source_url).toBe("file:///srv/books/example.beancount#L1965");
    expect(r.date).toBe("2014-03-02T00:00:00.000Z");
    expect(r.metadata.accounts).toBe("Liabilities:US:Chase:Slate, Expenses:Food:Restaurant");
    expect(transactionOf(r)).toEqual(
      parseBeancount(text("beancount/example.beancount"), place.file).transactions.find((t) => t.line === 1965)!,
    );
  });

  test("ids are unique, transactions on one line (OFX) told apart", () => {
    expect(new Set(records.map((r) => r.id)).size).toBe(records.length);
    const ofx = bookRecords(readFileSync(join(BOOKS, "beancount/ingest/Downloads/ofxdownload.ofx")), { ...place, format: "ofx" });
    expect(ofx.map((r) => r.id).slice(0, 2)).toEqual(["books/example.beancount#L11", "books/example.beancount#L11.2"]);
  });

  // A gzip bomb past the bound: books/parse-bomb.test.ts (80 MB built and 64 MB expanded, a size-bound proof).
  test("a broken file is skipped with its format and line in the reason, never its text", () => {
    const broken = Buffer.from('2014-01-02 * "Secret payee"\n  Assets:Cash  12,5x USD\n');
    expect(() => bookRecords(broken, { ...place, format: "beancount" })).toThrow(
      new SourceSkipped("is not a readable beancount file (line 2: a posting's amount is not a number and a commodity)"),
    );
  });

  test("a transaction of more postings, tags and metadata than MAX_TRANSACTION_ENTRIES skips its file: one record is never megabytes for the serving thread (D31)", () => {
    const skipped = new SourceSkipped(`holds a transaction of more than ${MAX_TRANSACTION_ENTRIES} postings, tags and metadata (line 1)`);
    const beancount = (postings: number, meta = 0) =>
      Buffer.from(
        `2020-01-01 * "Payroll"\n${Array.from({ length: meta }, (_, i) => `  k${i}: "v"\n`).join("")}${"  Assets:Cash  1.00 USD\n".repeat(postings)}  Equity:Opening\n`,
      );
    const [record] = bookRecords(beancount(MAX_TRANSACTION_ENTRIES - 1), place);
    expect(transactionOf(record!)!.postings.length).toBe(MAX_TRANSACTION_ENTRIES);
    expect(() => bookRecords(beancount(MAX_TRANSACTION_ENTRIES), place)).toThrow(skipped);
    expect(() => bookRecords(beancount(1, MAX_TRANSACTION_ENTRIES), place)).toThrow(skipped);
    // Ledger tags: a comment line each, every line short.
    const ledger = Buffer.from(`2020/01/01 Payroll\n${"    ; :a:\n".repeat(MAX_TRANSACTION_ENTRIES)}    Assets:Cash  $1\n    Equity\n`);
    expect(() => bookRecords(ledger, { ...place, format: "ledger" })).toThrow(skipped);
  });
});

test("formats by name, plain decimals", () => {
  expect(["a.beancount", "b.ledger", "c.journal", "d.dat", "e.QIF", "f.ofx", "g.gnucash", "h.txt"].map(bookFormatOf)).toEqual([
    "beancount",
    "ledger",
    "ledger",
    "ledger",
    "qif",
    "ofx",
    "gnucash",
    undefined,
  ]);
  expect(["1,234.50", "+5", ".5", "-0.10", "1e3", "", "12,5"].map((s) => plainDecimal(s))).toEqual([
    "1234.50",
    "5",
    "0.5",
    "-0.10",
    undefined,
    undefined,
    undefined,
  ]);
  expect(plainDecimal("1.234,50", true)).toBe("1234.50");
});
