// The books section of the answer evaluation stays honest (D34): each fact is what the tools
// themselves compute on shared/data/accounting (bean-query on example.beancount, ledger on
// sample.dat), or for a QIF or OFX file, which neither reads, the sum of the amounts of the
// transactions the label lists, read here from the file, not through corpus's parsers.
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { factPattern, loadAnswerLabels } from "../../../scripts/eval/answers-labels";
import { SHARED_DATA } from "../../support/servers";

const ACCOUNTING = join(SHARED_DATA, "accounting");
const books = loadAnswerLabels().questions.filter((q) => q.source === "books");

function run(command: string[]): string {
  const p = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${command[0]} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

/**
 * bean-query's rows as "<number> <currency>" lines (its str() of a Decimal is "Decimal('4608.22')"
 * or the number); earned or owed, each number negated; apart, "<account>: <number> <currency>"
 * on one line, "; " between.
 */
function beanQuery(query: string, { reading, apart }: { reading?: string; apart?: boolean } = {}): string {
  const csv = run(["bean-query", "-f", "csv", join(ACCOUNTING, "beancount/example.beancount"), query]);
  const rows = csv
    .trim()
    .split("\n")
    .slice(1)
    .map((row) => {
      const cells = row.split(",").map((s) => s.trim());
      const [account, number, currency] = apart ? cells : ["", ...cells];
      const n = /^Decimal\('(.*)'\)$/.exec(number!)?.[1] ?? number!;
      const said = `${reading ? (n.startsWith("-") ? n.slice(1) : `-${n}`) : n} ${currency}`;
      return apart ? `${account}: ${said}` : said;
    });
  return rows.join(apart ? "; " : "\n");
}

/** Cents of an amount as a file writes it ("1,004.81", "-42.4", "-7"). */
function cents(amount: string): bigint {
  const m = /^([+-]?)([\d,]*)(?:\.(\d{1,2}))?$/.exec(amount.trim());
  if (!m) throw new Error(`not an amount: ${amount}`);
  const value = BigInt(m[2]!.replace(/,/g, "") || "0") * 100n + BigInt((m[3] ?? "").padEnd(2, "0"));
  return m[1] === "-" ? -value : value;
}
const said = (c: bigint) => `${c < 0n ? "-" : ""}${(c < 0n ? -c : c) / 100n}.${String((c < 0n ? -c : c) % 100n).padStart(2, "0")}`;

/** The amount of a listed transaction: a QIF record's T field from its first line to its "^"; an OFX file's n-th STMTTRN opening on a line. */
function amountOf(record: string, kind: "qif" | "ofx"): bigint {
  const m = /^books:(.+)#L(\d+)(?:\.(\d+))?$/.exec(record);
  if (!m) throw new Error(`not a books record: ${record}`);
  const lines = readFileSync(join(ACCOUNTING, m[1]!), "latin1").split(/\r?\n/);
  if (kind === "qif") {
    const rest = lines.slice(Number(m[2]) - 1);
    const fields = rest.slice(
      0,
      rest.findIndex((l) => l.startsWith("^")),
    );
    return cents(fields.find((l) => l.startsWith("T"))!.slice(1));
  }
  const opened = lines[Number(m[2]) - 1]!.split("<STMTTRN>").slice(1);
  return cents(/<TRNAMT>([^<\s]+)/.exec(opened[Number(m[3] ?? 1) - 1]!)![1]!);
}

describe("the books labels of scripts/eval/answers-labels.json, against the tools", () => {
  test("at least 20 books questions, a train and a test half, each with its oracle", () => {
    expect(books.length).toBeGreaterThanOrEqual(20);
    expect(books.filter((q) => q.split === "test").length).toBeGreaterThanOrEqual(10);
    expect(books.every((q) => q.oracle !== undefined)).toBe(true);
  });

  for (const q of books)
    test(`${q.id}: /${q.fact}/ is what the oracle computes`, () => {
      const oracle = q.oracle!;
      let computed: string;
      if ("bean-query" in oracle) computed = beanQuery(oracle["bean-query"], oracle);
      else if ("ledger" in oracle) computed = run(["ledger", "-f", join(ACCOUNTING, "ledger/sample.dat"), ...oracle.ledger]);
      else computed = said(q.record.reduce((sum, r) => sum + amountOf(r, oracle.sum), 0n));
      expect(computed).toMatch(factPattern(q.fact));
    });
});
