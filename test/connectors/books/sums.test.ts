// Exact sums over books (D34): decimal strings added as scaled bigints, per commodity, never
// mixed; an account's balance holds its sub-accounts; periods are [from, to).
import { describe, expect, test } from "bun:test";
import {
  addDecimals,
  type BookTransaction,
  balanceAt,
  compareDecimals,
  multiplyDecimals,
  NotADecimal,
  sumPostings,
  totalsOf,
  underAccount,
} from "../../../src/connectors/books/sums";

const tx = (date: string, payee: string, ...postings: [string, string, string][]): BookTransaction => ({
  date,
  payee,
  narration: "",
  postings: postings.map(([account, amount, commodity]) => ({ account, amount, commodity })),
  tags: [],
  meta: {},
  file: "x.ledger",
  line: 1,
});

describe("decimals", () => {
  test("exact where a float is not: 0.1 + 0.2 is 0.3, a hundred thousand cents are 1000.00", () => {
    expect(0.1 + 0.2).not.toBe(0.3);
    expect(addDecimals("0.1", "0.2")).toBe("0.3");
    let sum = "0";
    let float = 0;
    for (let i = 0; i < 100_000; i++) {
      sum = addDecimals(sum, "0.01");
      float += 0.01;
    }
    expect(sum).toBe("1000.00");
    expect(float).not.toBe(1000);
    expect(addDecimals("-1.50", "1.5")).toBe("0.00");
    expect(addDecimals("-0.05", "0.01")).toBe("-0.04");
    expect(addDecimals("99999999999999999999.99", "0.01")).toBe("100000000000000000000.00");
    expect(multiplyDecimals("-8", "105.75")).toBe("-846.00");
    expect(compareDecimals("10.0", "9.99")).toBe(1);
  });

  test("anything but a plain decimal is refused, not rounded over", () => {
    for (const bad of ["1e3", "1,000", "$5", "", "NaN", "0x10", "1.2.3"]) expect(() => addDecimals(bad, "1")).toThrow(NotADecimal);
  });
});

describe("totals and balances", () => {
  const book = [
    tx("2014-01-31", "Verizon Wireless", ["Expenses:Phone", "55.10", "USD"], ["Assets:Checking", "-55.10", "USD"]),
    tx("2014-02-03", "Cafe", ["Expenses:Food:Restaurant", "12.40", "USD"], ["Liabilities:Card", "-12.40", "USD"]),
    tx("2014-02-28", "Bistro Paris", ["Expenses:Food:Restaurant", "30.00", "EUR"], ["Liabilities:Card", "-30.00", "EUR"]),
    tx(
      "2014-03-01",
      "Grocer",
      ["Expenses:Food", "7.05", "USD"],
      ["Expenses:Foodstuff", "1.00", "USD"],
      ["Assets:Checking", "-8.05", "USD"],
    ),
    tx("2015-01-02", "Verizon Wireless", ["Expenses:Phone", "60.00", "USD"], ["Assets:Checking", "-60.00", "USD"]),
  ];

  test("per commodity, never mixed; an account holds its sub-accounts, not its namesakes", () => {
    expect(totalsOf(book, { account: "Expenses:Food" }).totals).toEqual({ EUR: "30.00", USD: "19.45" });
    expect(underAccount("Expenses:Foodstuff", "Expenses:Food")).toBe(false);
    expect(sumPostings([])).toEqual({});
  });

  test("a period is [from, to): February alone", () => {
    const feb = totalsOf(book, { account: "Expenses", from: "2014-02-01", to: "2014-03-01" });
    expect(feb.totals).toEqual({ EUR: "30.00", USD: "12.40" });
    expect(feb.transactions.map((t) => t.payee)).toEqual(["Cafe", "Bistro Paris"]);
    expect(feb.postings).toBe(2);
  });

  test("a payee's totals: what did I pay Verizon in 2014", () => {
    const verizon = totalsOf(book, { account: "Expenses", payee: "verizon", from: "2014-01-01", to: "2015-01-01" });
    expect(verizon.totals).toEqual({ USD: "55.10" });
    expect(verizon.transactions.length).toBe(1);
  });

  test("a balance at a date counts that date's transactions", () => {
    expect(balanceAt(book, "Assets:Checking", "2014-01-30").totals).toEqual({});
    expect(balanceAt(book, "Assets:Checking", "2014-01-31").totals).toEqual({ USD: "-55.10" });
    expect(balanceAt(book, "Assets:Checking", "2014-12-31").totals).toEqual({ USD: "-63.15" });
    expect(balanceAt(book, "Assets", "2015-01-02").totals).toEqual({ USD: "-123.15" });
  });
});
