// Shape C over books (D34), through the REST API over the real journals: each answer's total,
// balance or largest amount is what bean-query (example.beancount) or ledger (sample.dat)
// computes on the same file, to the cent, with its commodity, and cites the transactions it adds
// up; "last year" of a book that ends before now is its own last year; a second user never sees
// the first's books; a journal too large to be read again for a sum is answered from its ranked
// transactions, and a question of thousands of words stays bounded.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BOOKS_READ, booksAnswer, CITED_TRANSACTIONS, MAX_ANSWERED_BOOK_BYTES } from "../../../src/connectors/books/answer";
import { BooksConnector } from "../../../src/connectors/books/connector";
import { MAX_LINE_CHARS } from "../../../src/connectors/books/format";
import { SourceReader } from "../../../src/connectors/reading/reader";
import type { ActiveConnector } from "../../../src/connectors/registry";
import { planQuery } from "../../../src/retrieval/plan";
import { bearer, postJson, tempDir, testApp } from "../../helpers";
import { growthOf, LINEAR_GROWTH } from "../../support/growth";
import { localIndexes } from "../../support/local-index";
import { SHARED_DATA } from "../../support/servers";

setDefaultTimeout(240_000);

const ACCOUNTING = join(SHARED_DATA, "accounting");

function run(command: string[]): string {
  const p = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (p.exitCode !== 0) throw new Error(`${command[0]} failed: ${p.stderr.toString()}`);
  return p.stdout.toString();
}

/** bean-query's CSV rows, each as its cells (a Decimal's str() unwrapped). */
function beanQuery(query: string): string[][] {
  return run(["bean-query", "-f", "csv", join(ACCOUNTING, "beancount/example.beancount"), query])
    .trim()
    .split("\n")
    .slice(1)
    .map((row) => row.split(",").map((s) => s.trim().replace(/^Decimal\('(.*)'\)$/, "$1")));
}

/** The USD total bean-query sums over `where`, and the lines of the transactions it sums (first or last first). */
function beanTotal(where: string, last = false): { total: string; lines: number[] } {
  const [[total]] = beanQuery(`SELECT str(sum(number)) WHERE ${where} AND currency = 'USD'`) as [[string]];
  const lines = beanQuery(`SELECT DISTINCT date, lineno WHERE ${where} ORDER BY date, lineno${last ? " DESC" : ""} LIMIT 3`).map(
    ([, line]) => Number(line),
  );
  return { total, lines };
}

describe("books questions answered as an accountant would", () => {
  type App = Awaited<ReturnType<typeof testApp>>;
  let t: App;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    const roots = tempDir("corpus-books-answer-");
    const mine = join(roots, "alice");
    const theirs = join(roots, "bob");
    mkdirSync(mine);
    mkdirSync(theirs);
    copyFileSync(join(ACCOUNTING, "beancount/example.beancount"), join(mine, "example.beancount"));
    copyFileSync(join(ACCOUNTING, "ledger/sample.dat"), join(mine, "sample.dat"));
    // Bob's book: restaurants of 2014 too, in a journal just over what a sum reads again.
    const narration = "x".repeat(MAX_LINE_CHARS - 200);
    const entry = (i: number) =>
      `2014-0${1 + (i % 9)}-1${i % 10} * "Trattoria ${i}" "${narration}"\n  Expenses:Food:Restaurant  1.00 EUR\n  Assets:Cash\n`;
    const entries = Math.ceil(MAX_ANSWERED_BOOK_BYTES / (MAX_LINE_CHARS - 100));
    writeFileSync(join(theirs, "big.beancount"), Array.from({ length: entries }, (_, i) => entry(i)).join("\n"));
    t = await testApp({ CORPUS_CONNECTOR_ROOTS: roots });
    const scopes = ["corpus:search", "corpus:read", "connectors:read", "connectors:write"] as const;
    alice = (await t.services.auth.issuer.issue("alice", [...scopes])).token;
    bob = (await t.services.auth.issuer.issue("bob", [...scopes])).token;
    for (const [token, path] of [
      [alice, mine],
      [bob, theirs],
    ] as const)
      expect((await t.app.handle(postJson("/v1/connectors", { id: "books", kind: "books", config: { path } }, bearer(token)))).status).toBe(
        200,
      );
    // Read and indexed by words: the sums need no vectors, and the ranking finds the transactions by theirs.
    for (const user of ["alice", "bob"])
      for (const { connector } of await t.services.connectors.active(user)) await (connector as any).sync();
  });

  afterAll(async () => {
    await t?.services.close();
  });

  async function ask(token: string, query: string) {
    const res = await t.app.handle(postJson("/v1/query", { query, conversation_id: null }, bearer(token)));
    expect(res.status).toBe(200);
    return (await res.json()) as { answer: string; sources: Array<{ n: number; connector: string; source_url: string }> };
  }

  const cases: Array<[string, string, boolean?]> = [
    ["How much did I spend on restaurants in 2014?", "account ~ '^Expenses:Food:Restaurant' AND year = 2014"],
    ["How much did I spend on groceries in 2015?", "account ~ '^Expenses:Food:Groceries' AND year = 2015"],
    ["What did I pay Verizon Wireless in 2015?", "payee = 'Verizon Wireless' AND account ~ '^Expenses:' AND year = 2015"],
    ["How much rent did I pay between March and May 2015?", "account ~ '^Expenses:Home:Rent' AND date >= 2015-03-01 AND date < 2015-06-01"],
    ["How much did I pay in taxes in 2014?", "account ~ '^Expenses:Taxes' AND year = 2014"],
    ["How much salary did I earn at Hoogle in 2014?", "account ~ '^Income:US:Hoogle:Salary' AND year = 2014"],
    [
      "What was the balance of Assets:US:BofA:Checking at the end of March 2015?",
      "account ~ '^Assets:US:BofA:Checking$' AND date <= 2015-03-31",
      true,
    ],
    [
      "What was the balance of my Chase Slate credit card at the end of June 2014?",
      "account ~ '^Liabilities:US:Chase:Slate$' AND date <= 2014-06-30",
      true,
    ],
    ["Wat was het saldo van Assets:US:BofA:Checking eind 2013?", "account ~ '^Assets:US:BofA:Checking$' AND date <= 2013-12-31", true],
    ["Combien ai-je payé à Chichipotle en 2015 ?", "payee = 'Chichipotle' AND account ~ '^Expenses:' AND year = 2015"],
  ];
  for (const [question, where, balance] of cases)
    test(`${question}: bean-query's total, to the cent, citing what it adds up`, async () => {
      const { total, lines } = beanTotal(where, balance);
      const { answer, sources } = await ask(alice, question);
      expect(answer).toContain(`${total} USD`);
      // The first transactions summed (a balance: the last), in the order of their markers.
      const cited = [...answer.matchAll(/\[(\d+)\]/g)].map((m) => sources[Number(m[1]) - 1]!.source_url);
      expect(cited.length).toBe(CITED_TRANSACTIONS);
      expect(cited.map((url) => Number(/#L(\d+)$/.exec(url)?.[1]))).toEqual(lines);
      expect(cited.every((url) => url.includes("example.beancount#L"))).toBe(true);
    });

  test("the largest expenses in June: the month of the book's last year, each amount as bean-query has it", async () => {
    const largest = beanQuery(
      "SELECT lineno, str(number) WHERE account ~ '^Expenses:' AND date >= 2015-06-01 AND date < 2015-07-01 AND currency = 'USD' ORDER BY number DESC LIMIT 1",
    )[0]!;
    const { answer, sources } = await ask(alice, "Show my largest expenses in June");
    expect(answer).toContain("June 2015");
    expect(answer).toMatch(new RegExp(`^The largest .*: ${largest[1]!.replace(".", "\\.")} USD on 2015-06-\\d\\d, .*\\[1\\]`));
    expect(sources[0]!.source_url).toEndWith(`#L${largest[0]}`);
  });

  test("'last year' of a book that ends before now is the year before its last transaction's", async () => {
    const { total } = beanTotal("payee = 'Verizon Wireless' AND account ~ '^Expenses:' AND year = 2014");
    const { answer } = await ask(alice, "What did I pay Verizon Wireless last year?");
    expect(answer).toContain("in 2014");
    expect(answer).toContain(`${total} USD`);
  });

  test("ledger's balance of an account of sample.dat, in its own commodity", async () => {
    const out = run([
      "ledger",
      "-f",
      join(ACCOUNTING, "ledger/sample.dat"),
      "bal",
      "^Liabilities:MasterCard",
      "--balance-format",
      "%(scrub(display_total))\n",
    ]);
    const amount = /\$(-?[\d,]+\.\d\d)/.exec(out)![1]!.replace(/,/g, "");
    const { answer } = await ask(alice, "What was the balance of the MasterCard at the end of May 2004?");
    expect(answer).toContain(`${amount} $`);
  });

  /** bean-query's sums per currency over `where`, exact, as {currency: amount}. */
  const beanSums = (where: string) =>
    Object.fromEntries(beanQuery(`SELECT currency, str(sum(number)) WHERE ${where} GROUP BY currency`).map(([c, n]) => [c!, n!]));
  /** Ledger's balance of one account of sample.dat up to a date (exclusive), as "980.00 $ and 500.00 €" reads in an answer. */
  const ledgerSaid = (account: string, end: string) =>
    run(["ledger", "-f", join(ACCOUNTING, "ledger/sample.dat"), "bal", `^${account}$`, "-e", end, "--flat", "--no-total"])
      .trim()
      .split("\n")
      .map((line) => /^\s*(\$?)(-?[\d,]+\.\d\d)(€?)/.exec(line)!)
      .map(([, dollar, n, euro]) => `${n!.replace(/,/g, "")} ${dollar || euro}`);
  const negated = (n: string) => (n.startsWith("-") ? n.slice(1) : `-${n}`);

  // Account names as people write them: folded as the index folds words, on both sides (D34).
  for (const question of [
    "What was the balance of assets:us:bofa:checking at the end of March 2015?",
    "What was the balance of Assets : US : BofA : Checking at the end of March 2015?",
    "What was the balance of my checking account at the end of March 2015?",
  ])
    test(`${question}: the account of Checking, whatever its case and spacing, to the cent`, async () => {
      const { total } = beanTotal("account ~ '^Assets:US:BofA:Checking$' AND date <= 2015-03-31", true);
      const { answer } = await ask(alice, question);
      expect(answer).toContain(`The balance of Assets:US:BofA:Checking at the end of 2015-03-31: ${total} USD`);
    });

  test("a run-together account name asked in words: 'group term life' earned is Income:US:Hoogle:GroupTermLife, not Expenses:Health:Life", async () => {
    const usd = beanSums("account ~ '^Income:US:Hoogle:GroupTermLife$' AND year = 2014").USD!;
    const { answer } = await ask(alice, "How much group term life did I earn in 2014?");
    expect(answer).toStartWith(`Income:US:Hoogle:GroupTermLife in 2014: ${negated(usd)} USD earned`);
  });

  test("'checking' names two accounts of sample.dat alike (one of them accented): both answered apart, each as ledger has it", async () => {
    const { answer, sources } = await ask(alice, "What was the balance of the checking account at the end of May 2004?");
    const plain = ledgerSaid("Assets:Bank:Checking", "2004/06/01");
    const accented = ledgerSaid("Asséts:Bánk:Chécking:Asséts:Bánk:Chécking", "2004/06/01");
    expect(plain).toEqual(["980.00 $", "500.00 €"]);
    expect(answer).toContain(`Assets:Bank:Checking: ${plain.join(" and ")} [`);
    expect(answer).toContain(`Asséts:Bánk:Chécking: ${accented.join(" and ")} [`);
    expect(answer).toStartWith("Which account is meant?");
    // Never one sum of the two.
    expect(answer).not.toContain("1480.00");
    expect(sources[0]!.source_url).toContain("sample.dat#L");
  });

  test("'vacation' names an asset, an expense and an income account alike: three balances apart, as bean-query has each", async () => {
    const { answer } = await ask(alice, "What was the balance of vacation at the end of 2014?");
    for (const account of ["Assets:US:Hoogle:Vacation", "Expenses:Vacation", "Income:US:Hoogle:Vacation"]) {
      const vachr = beanSums(`account ~ '^${account}$' AND date <= 2014-12-31`).VACHR!;
      const said = account.startsWith("Income") ? `${negated(vachr)} VACHR earned (booked as ${vachr} VACHR)` : `${vachr} VACHR`;
      expect(answer).toContain(`${account}: ${said} [`);
    }
  });

  test("spent on 'vacation': the expense account of the three alike", async () => {
    const vachr = beanSums("account ~ '^Expenses:Vacation$' AND year = 2014").VACHR!;
    const { answer } = await ask(alice, "How much did I spend on vacation in 2014?");
    expect(answer).toStartWith(`Expenses:Vacation in 2014: ${vachr} VACHR`);
  });

  // Sign conventions: income and liabilities are credits, booked negative; said as earned and owed, the journal's sign beside and in the postings cited.
  test("how much did I earn in 2014: every income account's sum per commodity, positive, as bean-query's negated", async () => {
    const sums = beanSums("account ~ '^Income:' AND year = 2014");
    expect(Object.keys(sums).sort()).toEqual(["IRAUSD", "USD", "VACHR"]);
    const { answer, sources } = await ask(alice, "How much did I earn in 2014?");
    const said = Object.keys(sums)
      .sort()
      .map((c) => `${negated(sums[c]!)} ${c}`)
      .join(" and ");
    expect(answer).toStartWith(`Income in 2014: ${said} earned (booked as `);
    // The postings cited keep the journal's sign.
    const cited = sources.filter((s) => answer.includes(`[${s.n}]`));
    expect(cited.length).toBe(CITED_TRANSACTIONS);
    for (const s of cited) expect((s as unknown as { snippet: string }).snippet).toMatch(/Income:\S+ {2}-\d/);
  });

  test("how much salary did I earn: positive, bean-query's negated, to the cent", async () => {
    const usd = beanSums("account ~ '^Income:US:Hoogle:Salary' AND year = 2014").USD!;
    expect(usd).toStartWith("-");
    const { answer } = await ask(alice, "How much salary did I earn at Hoogle in 2014?");
    expect(answer).toStartWith(`Income:US:Hoogle:Salary in 2014: ${negated(usd)} USD earned (booked as ${usd} USD)`);
  });

  test("the largest income of 2015: the largest amount earned, bean-query's most negative transaction", async () => {
    const [[line, usd]] = beanQuery(
      "SELECT lineno, str(sum(number)) AS s WHERE account ~ '^Income:' AND year = 2015 AND currency = 'USD' GROUP BY date, lineno ORDER BY sum(number), lineno LIMIT 1",
    ) as [[string, string]];
    const { answer, sources } = await ask(alice, "What was my largest income in 2015?");
    expect(answer).toMatch(
      new RegExp(
        `^The largest of \\d+ transactions of Income in 2015: ${negated(usd).replace(".", "\\.")} USD and 5 VACHR earned on 2015-`,
      ),
    );
    expect(sources[0]!.source_url).toEndWith(`#L${line}`);
  });

  test("what do I owe on the credit card at the end of June 2014: the liabilities' balance, positive, as bean-query's negated", async () => {
    const usd = beanSums("account ~ '^Liabilities:' AND date <= 2014-06-30").USD!;
    const { answer } = await ask(alice, "What did I owe on the credit card at the end of June 2014?");
    expect(answer).toContain(`at the end of 2014-06-30: ${negated(usd)} USD owed (booked as ${usd} USD)`);
  });

  test("what do I owe on the MasterCard: ledger's balance of sample.dat, positive", async () => {
    const [owed] = ledgerSaid("Liabilities:MasterCard", "2004/06/01");
    expect(owed).toStartWith("-");
    const { answer } = await ask(alice, "How much do I owe on the MasterCard?");
    expect(answer).toStartWith(
      `The balance of Liabilities:MasterCard at the end of 2004-05-27: ${negated(owed!)} owed (booked as ${owed})`,
    );
  });

  test("a second user never sees the first's books: bob's question is answered from his own", async () => {
    const { answer, sources } = await ask(bob, "How much did I spend on restaurants in 2014?");
    expect(sources.length).toBeGreaterThan(0);
    expect(sources.every((s) => s.source_url.includes("big.beancount"))).toBe(true);
    expect(answer).not.toContain(beanTotal("account ~ '^Expenses:Food:Restaurant' AND year = 2014").total);
    expect(answer).not.toMatch(/example\.beancount|USD/);
  });

  test("a journal larger than a sum reads again is answered from its ranked transactions, not summed", async () => {
    const { answer } = await ask(bob, "How much did I spend on restaurants in 2014?");
    expect(answer).not.toMatch(/Expenses:Food:Restaurant in 2014: \d/);
  });

  test("a question of thousands of words is bounded: answered from the book like a short one", async () => {
    const { total } = beanTotal("account ~ '^Expenses:Food:Restaurant' AND year = 2014");
    const noise = Array.from({ length: 600 }, (_, i) => `word${i}`).join(" ");
    const { answer } = await ask(alice, `How much did I spend on restaurants in 2014? ${noise}`.slice(0, 4000));
    expect(answer).toContain(`${total} USD`);
  });
});

/** The reading worker's handle, counting the journal files it is given. */
class CountingReader extends SourceReader {
  files = 0;
  override books(...args: Parameters<SourceReader["books"]>) {
    this.files++;
    return super.books(...args);
  }
}

describe("a books answer's reading is bounded", () => {
  test(`a folder of 40 journals naming nothing asked: ${BOOKS_READ} files read again at most, and no sum`, async () => {
    const folder = tempDir("corpus-books-many-");
    for (let i = 0; i < 40; i++)
      writeFileSync(join(folder, `bank${i}.qif`), `!Type:Bank\nD01/0${1 + (i % 9)}/99\nT-${i}.00\nPAcme ${i}\n^\n`);
    const reader = new CountingReader();
    const connector = new BooksConnector(folder, localIndexes().indexFor("u/books"), {}, undefined, reader);
    try {
      await connector.sync();
      const record = (await connector.fileRecords("bank0.qif", MAX_ANSWERED_BOOK_BYTES))![0]!;
      const active: ActiveConnector = { id: "books", kind: "books", label: "Books", owner: "user", datesAreFileTimes: false, connector };
      const question = "How much did I pay Zenith in 1999?";
      const plan = planQuery(question);
      const ranked = [
        { connectorId: "books", connectorLabel: "Books", owner: "u", record, chunkIndex: 0, text: record.content, score: 1, lexical: 1 },
      ];
      const before = reader.files;
      const answer = await booksAnswer({ options: { user: "u", question, perConnector: 5 }, plan, terms: plan.terms }, ranked, [
        active as any,
      ]);
      expect(answer).toBeUndefined();
      expect(reader.files - before).toBe(BOOKS_READ);
    } finally {
      reader.close();
    }
  });

  test("a payee of 60,000 characters is named in a few words: the answer stays short", async () => {
    const folder = tempDir("corpus-books-long-");
    const payee = `Zenith ${"A".repeat(60_000)}`;
    writeFileSync(
      join(folder, "long.beancount"),
      `2014-03-01 * "${payee}" "rent"\n  Expenses:Rent  10.00 USD\n  Assets:Cash\n\n2014-04-01 * "${payee}" "rent"\n  Expenses:Rent  5.50 USD\n  Assets:Cash\n`,
    );
    const reader = new SourceReader();
    const connector = new BooksConnector(folder, localIndexes().indexFor("u/long"), {}, undefined, reader);
    try {
      await connector.sync();
      const record = (await connector.fileRecords("long.beancount", MAX_ANSWERED_BOOK_BYTES))![0]!;
      const active: ActiveConnector = { id: "books", kind: "books", label: "Books", owner: "user", datesAreFileTimes: false, connector };
      const question = "How much did I pay Zenith in 2014?";
      const plan = planQuery(question);
      const ranked = [
        { connectorId: "books", connectorLabel: "Books", owner: "u", record, chunkIndex: 0, text: record.content, score: 1, lexical: 1 },
      ];
      const answer = await booksAnswer({ options: { user: "u", question, perConnector: 5 }, plan, terms: plan.terms }, ranked, [active]);
      expect(answer?.text).toContain("15.50 USD");
      expect(answer!.text.length).toBeLessThan(1_000);
    } finally {
      reader.close();
    }
  });

  test("thousands of accounts named alike ('checking' under each of 2,000 banks): asked back in time linear in the journal", async () => {
    // Each account was matched against each other and each transaction's postings against every
    // account named: 500, 1,000 and 2,000 such accounts took 0.25, 0.8 and 2.5 s of the serving thread.
    const reader = new SourceReader();
    const books = new Map<number, { record: any; active: ActiveConnector }>();
    const bookOf = async (n: number) => {
      const folder = tempDir("corpus-books-alike-");
      const lines = Array.from({ length: n }, (_, i) => `2014-03-01 * "Shop" "x"\n  Bank${i}:Checking  10.00 USD\n  Equity:Opening\n`);
      writeFileSync(join(folder, "alike.beancount"), lines.join("\n"));
      const connector = new BooksConnector(folder, localIndexes().indexFor(`u/alike${n}`), {}, undefined, reader);
      await connector.sync();
      const record = (await connector.fileRecords("alike.beancount", MAX_ANSWERED_BOOK_BYTES))![0]!;
      books.set(n, { record, active: { id: "books", kind: "books", label: "Books", owner: "user", datesAreFileTimes: false, connector } });
    };
    const question = "What is the balance of checking?";
    const plan = planQuery(question);
    const answer = (n: number) => {
      const { record, active } = books.get(n)!;
      const ranked = [
        { connectorId: "books", connectorLabel: "Books", owner: "u", record, chunkIndex: 0, text: record.content, score: 1, lexical: 1 },
      ];
      return booksAnswer({ options: { user: "u", question, perConnector: 5 }, plan, terms: plan.terms }, ranked, [active]);
    };
    try {
      const n = 250;
      await bookOf(n);
      await bookOf(8 * n);
      const asked = await answer(8 * n);
      expect(asked!.text).toStartWith(`Which account is meant? ${8 * n} accounts are named alike;`);
      expect(asked!.text.length).toBeLessThan(1_000);
      expect(await growthOf(answer, n)).toBeLessThan(LINEAR_GROWTH);
    } finally {
      reader.close();
    }
  });
});
