// D34: the books' sums checked against the tools themselves, on the same files: beancount's
// bean-query on example.beancount and Ledger on its sample.dat, 18 totals and balances, each to
// the last decimal the tool prints, per commodity. The transactions come back from their
// records (bookRecords, transactionOf), as the answer layer will read them.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { BookFormat } from "../../../src/connectors/books/format";
import { bookRecords, transactionOf } from "../../../src/connectors/books/records";
import { type BookTransaction, balanceAt, type CommodityTotals, totalsOf } from "../../../src/connectors/books/sums";
import { SHARED_DATA } from "../../support/servers";

const BEANCOUNT = join(SHARED_DATA, "accounting/beancount/example.beancount");
const LEDGER = join(SHARED_DATA, "accounting/ledger/sample.dat");

function transactions(path: string, format: BookFormat): BookTransaction[] {
  return bookRecords(readFileSync(path), { file: path, url: `file://${path}`, format }).map((r) => transactionOf(r)!);
}

/** "4608.220" and "4608.22" are one amount: trailing zeros of the fraction dropped, nothing rounded. */
const same = (totals: CommodityTotals) =>
  Object.fromEntries(
    Object.entries(totals)
      .map(([c, n]) => [c, n.includes(".") ? n.replace(/0+$/, "").replace(/\.$/, "") : n] as const)
      .filter(([, n]) => !/^-?0$/.test(n))
      .sort(([a], [b]) => (a < b ? -1 : 1)),
  );

function run(command: string[]): string {
  const p = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${command[0]} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

/** bean-query's per-currency sums of the postings `where` selects, exact: its tables round to a precision it infers ("-130853" for -130853.37). */
function beanQuery(where: string): CommodityTotals {
  const csv = run(["bean-query", "-f", "csv", BEANCOUNT, `SELECT currency, str(sum(number)) AS total WHERE ${where} GROUP BY currency`]);
  const rows = csv.trim().split("\n").slice(1);
  return Object.fromEntries(
    rows.map((row) => {
      const [currency, total] = row.split(",").map((s) => s.trim());
      return [currency!, /^Decimal\('(.*)'\)$/.exec(total!)?.[1] ?? total!];
    }),
  );
}

/** Ledger's balance of the accounts `pattern` names, one amount per commodity ("$-2,500.00", "500.00€", "50 AAPL"). */
function ledgerBalance(pattern: string, ...options: string[]): CommodityTotals {
  const out = run([
    "ledger",
    "-f",
    LEDGER,
    "balance",
    pattern,
    "--collapse",
    "--no-total",
    "--balance-format",
    "%(scrub(display_total))\n",
    ...options,
  ]);
  const totals: CommodityTotals = {};
  for (const line of out
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean)) {
    const m = /^(-?)([^\d\s-]*)\s*(-?)([\d,]+(?:\.\d+)?)\s*([^\d\s]*)$/.exec(line);
    if (!m) throw new Error(`ledger printed an amount this test cannot read: ${line}`);
    if (m[4] === "0" && !m[2] && !m[5]) continue;
    totals[m[2] || m[5]!] = `${m[1] || m[3]}${m[4]!.replace(/,/g, "")}`;
  }
  return totals;
}

describe("bean-query on example.beancount", () => {
  const book = transactions(BEANCOUNT, "beancount");
  const cases: [string, string, () => CommodityTotals][] = [
    [
      "restaurants in 2014",
      "account ~ '^Expenses:Food:Restaurant' AND year = 2014",
      () => totalsOf(book, { account: "Expenses:Food:Restaurant", from: "2014-01-01", to: "2015-01-01" }).totals,
    ],
    [
      "groceries in 2015",
      "account ~ '^Expenses:Food:Groceries' AND year = 2015",
      () => totalsOf(book, { account: "Expenses:Food:Groceries", from: "2015-01-01", to: "2016-01-01" }).totals,
    ],
    [
      "every expense of 2013, per commodity (USD, IRAUSD, VACHR)",
      "account ~ '^Expenses:' AND year = 2013",
      () => totalsOf(book, { account: "Expenses", from: "2013-01-01", to: "2014-01-01" }).totals,
    ],
    [
      "income in 2015",
      "account ~ '^Income:' AND year = 2015",
      () => totalsOf(book, { account: "Income", from: "2015-01-01", to: "2016-01-01" }).totals,
    ],
    [
      "the checking account at the end of March 2015",
      "account ~ '^Assets:US:BofA:Checking$' AND date <= 2015-03-31",
      () => balanceAt(book, "Assets:US:BofA:Checking", "2015-03-31").totals,
    ],
    [
      "the credit card at the end of June 2014",
      "account ~ '^Liabilities:US:Chase:Slate$' AND date <= 2014-06-30",
      () => balanceAt(book, "Liabilities:US:Chase:Slate", "2014-06-30").totals,
    ],
    [
      "the Vanguard accounts at the end of 2014 (fund units and cash)",
      "account ~ '^Assets:US:Vanguard(:|$)' AND date <= 2014-12-31",
      () => balanceAt(book, "Assets:US:Vanguard", "2014-12-31").totals,
    ],
    [
      "the brokerage at the end of the book",
      "account ~ '^Assets:US:ETrade(:|$)' AND date <= 2015-12-31",
      () => balanceAt(book, "Assets:US:ETrade", "2015-12-31").totals,
    ],
    [
      "what was paid to Verizon in 2014",
      "payee = 'Verizon Wireless' AND account ~ '^Expenses:' AND year = 2014",
      () => totalsOf(book, { account: "Expenses", payee: "Verizon", from: "2014-01-01", to: "2015-01-01" }).totals,
    ],
    [
      "home expenses in June 2015",
      "account ~ '^Expenses:Home' AND date >= 2015-06-01 AND date < 2015-07-01",
      () => totalsOf(book, { account: "Expenses:Home", from: "2015-06-01", to: "2015-07-01" }).totals,
    ],
    [
      "taxes in 2014",
      "account ~ '^Expenses:Taxes' AND year = 2014",
      () => totalsOf(book, { account: "Expenses:Taxes", from: "2014-01-01", to: "2015-01-01" }).totals,
    ],
    ["every posting of the book (all sums to zero at cost: here per commodity)", "TRUE", () => totalsOf(book, {}).totals],
  ];
  for (const [what, where, ours] of cases)
    test(what, () => {
      const theirs = beanQuery(where);
      expect(Object.keys(theirs).length).toBeGreaterThan(0);
      expect(same(ours())).toEqual(same(theirs));
    });
});

describe("ledger on sample.dat", () => {
  const book = transactions(LEDGER, "ledger");
  const cases: [string, string[], () => CommodityTotals][] = [
    ["the checking account ($ and €)", ["^Assets:Bank:Checking"], () => balanceAt(book, "Assets:Bank:Checking", "2004-12-31").totals],
    [
      "the checking account before the 27th",
      ["^Assets:Bank:Checking", "-e", "2004/05/27"],
      () => balanceAt(book, "Assets:Bank:Checking", "2004-05-26").totals,
    ],
    ["every expense", ["^Expenses"], () => totalsOf(book, { account: "Expenses" }).totals],
    ["the salary", ["^Income:Salary"], () => totalsOf(book, { account: "Income:Salary" }).totals],
    ["the card", ["^Liabilities:MasterCard"], () => totalsOf(book, { account: "Liabilities:MasterCard" }).totals],
    ["opening balances (a price's weight)", ["^Equity"], () => totalsOf(book, { account: "Equity" }).totals],
  ];
  for (const [what, args, ours] of cases)
    test(what, () => {
      const theirs = ledgerBalance(args[0]!, ...args.slice(1));
      expect(Object.keys(theirs).length).toBeGreaterThan(0);
      expect(same(ours())).toEqual(same(theirs));
    });
});
