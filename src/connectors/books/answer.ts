// Questions over books answered as an accountant would (D34): when the best-ranked result of a
// question is a transaction (or one of the next few is, and a book names every word of it), the
// question is about the books (a journal file of them), and what it asks
// (plan.ts, asked.ts) says which sum: a period's total ("how much did I spend on restaurants in
// 2014"), an account's balance at a date ("the balance of Checking at the end of March 2015"),
// or the largest (smallest) transactions ("my largest expenses in June"). The accounts are those
// whose names hold the question's words, the payees those whose names hold its other words, each
// as the index folds words (bm25.ts words). Every transaction of the file is read again, through
// the reading worker (D31), and summed exactly per commodity (sums.ts); the answer says the
// total, its commodity and its period, and cites the first few transactions it adds up, with
// how many there are. Anything else is answered as before (answer.ts).
import { OPERATOR_OWNER } from "../../auth/subjects";
import { words } from "../../retrieval/bm25";
import {
  ACCOUNT_NOUNS,
  ARTICLES,
  ASKS_QUANTITY,
  AUXILIARIES,
  all,
  BALANCE_NOUNS,
  EARNING,
  IS,
  MONEY_WORDS,
  OWING,
  PARTITIVE,
  PAYING,
  PREPOSITIONS,
  PRONOUNS,
  QUESTION_WORDS,
  WAS,
} from "../../retrieval/language/words";
import type { Question, RankedChunk } from "../../retrieval/types";
import { cutText } from "../../text";
import type { ActiveConnector } from "../registry";
import { shownRecord } from "../source-url";
import type { SourceRecord } from "../types";
import { BooksConnector } from "./connector";
import { transactionOf } from "./records";
import {
  type BookTransaction,
  type CommodityTotals,
  compareDecimals,
  isZeroDecimal,
  negateDecimal,
  type Posting,
  sumPostings,
} from "./sums";

/** Transactions cited by a books answer: the first few it adds up (shape C returns five sources). */
export const CITED_TRANSACTIONS = 3;
/**
 * Bytes of journal files read again for one answer, at most (each file's own, and their records'
 * text in all): the records cross to the serving thread, which sums them there (D31: read in the
 * worker, summed here in turns of TRANSACTIONS_PER_TURN). example.beancount (347 KB, 1,146
 * transactions) took 110-430 ms in the worker and 10-70 ms of this thread (its records' JSON, the
 * sort and every sum), measured under the shared machine's load. A larger book is answered by its
 * ranked transactions, as any other source.
 */
export const MAX_ANSWERED_BOOK_BYTES = 1024 * 1024;
/** Records made into transactions in one turn of the serving thread: then it serves others. */
const TRANSACTIONS_PER_TURN = 256;
/** Accounts a total names one by one; more are summed together and counted. */
const NAMED_ACCOUNTS = 3;

export interface BooksAnswer {
  /** Shape C's answer: the sums, their commodities and period, with the transactions' markers. */
  text: string;
  /** The results with the transactions cited first, in the order of their markers. */
  chunks: RankedChunk[];
  /** What the text says, as data (corpus_answer): the sums, the period, the transactions and how well the book matched. */
  facts: BooksFacts;
}

export type BooksSum = "total" | "balance" | "largest" | "smallest";
type Sum = BooksSum;

/** A books answer as data: what shape C's text says, each part once. */
export interface BooksFacts {
  sum: BooksSum;
  /**
   * Every commodity's exact decimal sum of the transactions summed (D34: never mixed), as the text
   * says them first: of income or liabilities, the amount earned or owed (the journal's negated);
   * none when the question's words name several accounts alike (then `accounts`).
   */
  totals: Array<{ amount: string; commodity: string }>;
  /** "earned" or "owed": the totals are the journal's sums negated, as an accountant says income and debts. */
  reading?: Reading;
  /** Accounts the question's words name alike ("checking": Assets:Bank:Checking and Asséts:Bánk:Chécking), each summed apart, as booked. */
  accounts?: Array<{ account: string; totals: Array<{ amount: string; commodity: string }> }>;
  /** For the largest or smallest: the transactions listed, each with its amounts, in the text's order. */
  listed: Array<{ date: string; amounts: Array<{ amount: string; commodity: string }> }>;
  /** The period summed: its first day and its last (a balance: up to its day), as the text says it. */
  period: { from?: string; to?: string; said: string };
  /** Transactions summed, and how many of them are cited (the first results, markers [1]…). */
  transactions: number;
  cited: number;
  /** Of the question's words that may name an account or a payee, how many the book's names hold. */
  named: number;
  asked: number;
  /** Whether the book's dates cover the period asked. */
  covers: boolean;
}

const BALANCE_WORDS = new Set(all(BALANCE_NOUNS).flatMap(words));
/** Words of paying or of an amount ("pay", "spent", "cost", "total"): they ask a total, and name no account or payee. */
const PAYING_WORDS = new Set([...all(PAYING), ...all(MONEY_WORDS)].flatMap(words));
const EARNING_WORDS = new Set(all(EARNING).flatMap(words));
/** Words of owing ("owe", "debt"): they ask a liability's balance, and name no account. */
const OWING_WORDS = new Set(all(OWING).flatMap(words));
const SPENT_WORDS = new Set(
  all(PAYING)
    .flatMap(words)
    .filter((w) => !EARNING_WORDS.has(w)),
);
/** The function words of every language the tables speak ("le", "de", "het"), and "account": they name no account ("Impôts sur le revenu") or payee. */
const FUNCTION_WORDS = new Set(
  [QUESTION_WORDS, ARTICLES, AUXILIARIES, IS, WAS, PARTITIVE, ASKS_QUANTITY, PREPOSITIONS, PRONOUNS, ACCOUNT_NOUNS].flatMap((t) =>
    all(t).flatMap(words),
  ),
);
/** Which way the money asked about went: paid out, earned, or owed. */
type Direction = "spent" | "earned" | "owed";
/** How a sum of income or of liabilities is said: the journal books both negative (credits). */
type Reading = "earned" | "owed";
/** Each direction's root account: "Expenses" (beancount, Ledger), "Expense" (GnuCash); "Income", "Revenue(s)"; "Liabilities". */
const ROOTS: Record<Direction, RegExp> = { spent: /^expenses?$/i, earned: /^(?:income|revenues?)$/i, owed: /^liabilit(?:y|ies)$/i };
const rootOf = (account: string) => account.split(":")[0]!;
const SPENDING_ROOT = ROOTS.spent;

/** The direction the question's words ask ("earn", "receive": earned; "owe": owed; "pay", "spend": spent), if any. */
function directionOf(q: Question): Direction | undefined {
  const asked = q.terms.flatMap(words);
  if (asked.some((w) => OWING_WORDS.has(w))) return "owed";
  if (asked.some((w) => EARNING_WORDS.has(w))) return "earned";
  return asked.some((w) => SPENT_WORDS.has(w)) ? "spent" : undefined;
}

/** "earned" (or "owed") when every account summed is income (or a liability): said as the journal's sum negated. */
function readingOf(accounts: string[]): Reading | undefined {
  if (accounts.length === 0) return undefined;
  if (accounts.every((a) => ROOTS.earned.test(rootOf(a)))) return "earned";
  return accounts.every((a) => ROOTS.owed.test(rootOf(a))) ? "owed" : undefined;
}

/**
 * The words of a name (an account's segment, a payee), folded as the index folds the question's
 * (bm25.ts words: case, accents, stems), the run-together ones apart too: "GroupTermLife" is
 * asked as "group term life", "BofA" as "bofa".
 */
export function nameWords(name: string): Set<string> {
  return new Set([...words(name), ...words(name.replace(/(\p{Ll})(\p{Lu})|(\p{L})(\p{N})/gu, "$1$3 $2$4"))]);
}

/** What sum the question asks for, from its plan; none when it asks no amount. */
function sumAsked(q: Question): Sum | undefined {
  const p = q.plan;
  if (p.order) return p.order === "desc" ? "largest" : "smallest";
  const asked = q.terms.flatMap(words);
  // What is owed is a liability's balance ("what do I owe on the credit card").
  if (asked.some((w) => BALANCE_WORDS.has(w) || OWING_WORDS.has(w))) return "balance";
  return p.asks === "amount" || p.asks === "count" || asked.some((w) => PAYING_WORDS.has(w)) ? "total" : undefined;
}

interface Entry {
  record: SourceRecord;
  t: BookTransaction;
  /** Its payee's and narration's words, as the index folds them. */
  payee: Set<string>;
}

/**
 * The accounts the question's words name: for each account, the part of its path up to the last
 * segment holding one of them; the ones naming the most words. Earned or owed, among income or
 * liabilities only ("what I earned at Hoogle" is not Assets:US:Hoogle), and that root itself when
 * none of them is named ("how much did I earn in 2014"). Accounts named by the same words
 * ("checking": Assets:Bank:Checking and Asséts:Bánk:Chécking) are `alike`: summed apart, never
 * one of them at random; spent, the expense ones among them are meant.
 */
function accountsNamed(
  book: Entry[],
  asked: Set<string>,
  direction: Direction | undefined,
): { accounts: string[]; used: Set<string>; alike: boolean } {
  const names = new Set(book.flatMap((e) => e.t.postings.map((p) => p.account)));
  const found = new Map<string, Set<string>>();
  const rooted = direction === "earned" || direction === "owed" ? ROOTS[direction] : undefined;
  for (const account of names) {
    if (rooted && !rooted.test(rootOf(account))) continue;
    const segments = account.split(":");
    const held = new Set<string>();
    segments.forEach((segment, i) => {
      const mine = [...nameWords(segment)].filter((w) => asked.has(w));
      for (const w of mine) held.add(w);
      if (mine.length) found.set(segments.slice(0, i + 1).join(":"), new Set(held));
    });
  }
  const most = Math.max(0, ...[...found.values()].map((s) => s.size));
  const best = [...found].filter(([, s]) => s.size === most && most > 0).map(([a]) => a);
  if (best.length === 0 && rooted) {
    const roots = [...new Set([...names].map(rootOf).filter((r) => rooted.test(r)))].sort();
    return { accounts: roots, used: new Set(), alike: roots.length > 1 };
  }
  // The accounts named by the same words, together: spent, the expense ones of them if any.
  const alikeGroups = new Map<string, string[]>();
  for (const a of best) {
    const key = [...found.get(a)!].sort().join(" ");
    const group = alikeGroups.get(key);
    if (group) group.push(a);
    else alikeGroups.set(key, [a]);
  }
  const meant = [...alikeGroups.values()].flatMap((group) => {
    const spent = direction === "spent" ? group.filter((a) => SPENDING_ROOT.test(rootOf(a))) : [];
    return spent.length ? spent : group;
  });
  // An account and its sub-accounts are summed once, by the account.
  const meantSet = new Set(meant);
  const accounts = meant.filter((a) => accountHolding(a, meantSet) === a).sort();
  const keys = accounts.map((a) => [...found.get(a)!].sort().join(" "));
  return { accounts, used: new Set(accounts.flatMap((a) => [...found.get(a)!])), alike: new Set(keys).size < keys.length };
}

/**
 * The question's words that name payees, of those left once accounts took theirs: the words it
 * writes as names that name one ("What did I pay Verizon": not "pay"); when it names no account,
 * any word naming one ("how much at chichipotle"). Beside an account, a word in lower case
 * describes it ("my biggest restaurant bill"), a payee's name is written as a name.
 */
function payeeTermsOf(book: Entry[], q: Question, left: string[], accountNamed: boolean): string[] {
  const held = new Set(book.flatMap((e) => [...e.payee]));
  const naming = left.filter((w) => held.has(w));
  const names = naming.filter((w) => q.plan.names.includes(w));
  return names.length || accountNamed ? names : naming;
}

/** YYYY-MM-DD of an instant. */
const day = (d: Date) => d.toISOString().slice(0, 10);
const dayBefore = (d: Date) => day(new Date(d.getTime() - 86_400_000));
/** Days from one YYYY-MM-DD to a later one. */
const daysBetween = (from: string, to: string) => Math.round((Date.parse(to) - Date.parse(from)) / 86_400_000);

export interface Period {
  from?: string;
  /** Exclusive. */
  to?: string;
}

/**
 * The period asked: the filters given, else the question's dates (any date it names: in books a
 * date is always a time). A relative one ("last year", "in June") is read against now; when the
 * book ends before the period so read starts, against the book's last day instead: books kept
 * until 2015 are asked "last year" of their own time, and the answer names the period it read.
 */
async function periodOf(q: Question, lastDay: string): Promise<Period> {
  const o = q.options;
  if (o.dateFrom || o.dateTo) return { from: o.dateFrom && day(o.dateFrom), to: o.dateTo && day(o.dateTo) };
  const { dateRange } = await import("../../retrieval/question-dates");
  const now = o.now ?? new Date();
  let r: { from?: Date; to?: Date } = q.plan.dateFrom || q.plan.dateTo ? { from: q.plan.dateFrom, to: q.plan.dateTo } : {};
  if (!r.from && !r.to) r = dateRange(q.plan.text, now);
  if (r.from && day(r.from) > lastDay) {
    const again = dateRange(q.plan.text, new Date(`${lastDay}T23:59:59.999Z`));
    if (again.from || again.to) r = again;
  }
  return { from: r.from && day(r.from), to: r.to && day(r.to) };
}

const MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];

/** How a period is said: "in 2014", "in June 2015", "from 2015-03-01 to 2015-05-31", "to 2014-12-31". */
export function saidPeriod({ from, to }: Period): string {
  if (from && to) {
    const last = dayBefore(new Date(`${to}T00:00:00Z`));
    if (from.endsWith("-01-01") && last === `${from.slice(0, 4)}-12-31`) return `in ${from.slice(0, 4)}`;
    if (from.endsWith("-01") && last.slice(0, 7) === from.slice(0, 7) && to.endsWith("-01"))
      return `in ${MONTHS[Number(from.slice(5, 7)) - 1]} ${from.slice(0, 4)}`;
    return from === last ? `on ${from}` : `from ${from} to ${last}`;
  }
  if (from) return `since ${from}`;
  if (to) return `up to ${dayBefore(new Date(`${to}T00:00:00Z`))}`;
  return "in all the book";
}

/** The totals an answer says: a commodity summing to zero is left out unless all do. */
function shownTotals(totals: CommodityTotals): Array<{ amount: string; commodity: string }> {
  const all = Object.entries(totals);
  const shown = all.filter(([, n]) => !isZeroDecimal(n));
  return (shown.length ? shown : all.slice(0, 1)).map(([commodity, amount]) => ({ amount, commodity }));
}

/** Totals as said: "2345.67 USD and 10 VACHR". */
function saidTotals(totals: CommodityTotals): string {
  return (
    shownTotals(totals)
      .map(({ amount, commodity }) => (commodity ? `${amount} ${commodity}` : amount))
      .join(" and ") || "0"
  );
}

/** Totals as the answer reads them: earned or owed, the journal's sums negated (it books both as credits). */
const readAs = (totals: CommodityTotals, reading: Reading | undefined): CommodityTotals =>
  reading ? Object.fromEntries(Object.entries(totals).map(([c, n]) => [c, negateDecimal(n)])) : totals;

/** "129184.98 USD earned (booked as -129184.98 USD)": the journal's sign kept beside; else the totals as booked. */
const saidRead = (totals: CommodityTotals, reading: Reading | undefined): string =>
  reading ? `${saidTotals(readAs(totals, reading))} ${reading} (booked as ${saidTotals(totals)})` : saidTotals(totals);

const inPeriod = (t: BookTransaction, { from, to }: Period) => !(from && t.date < from) && !(to && t.date >= to);

/**
 * The shortest of `accounts` that `account` is or is under (sums.ts underAccount), found by its
 * own path's prefixes, not by trying each account: a journal of thousands of accounts named alike
 * ("checking" under each of 2,000 banks) was matched pair by pair, seconds of the serving thread.
 */
function accountHolding(account: string, accounts: ReadonlySet<string>): string | undefined {
  for (let i = account.indexOf(":"); i !== -1; i = account.indexOf(":", i + 1)) {
    const prefix = account.slice(0, i);
    if (accounts.has(prefix)) return prefix;
  }
  return accounts.has(account) ? account : undefined;
}

/** The postings of a transaction the question sums: those of the accounts named (none under another); with none named, its spending side. */
function postingsOf(t: BookTransaction, accounts: ReadonlySet<string>): Posting[] {
  if (accounts.size) return t.postings.filter((p) => accountHolding(p.account, accounts) !== undefined);
  // "What did I pay Verizon": the expense accounts it was booked to; a book without them (QIF's
  // categories) the positive side; a one-sided book (OFX) its one account.
  const spent = t.postings.filter((p) => SPENDING_ROOT.test(p.account.split(":")[0]!));
  if (spent.length) return spent;
  const positive = t.postings.filter((p) => !p.amount.startsWith("-"));
  return positive.length && positive.length < t.postings.length ? positive : t.postings;
}

/** The transactions cited, as results: the record shown to its asker (source-url.ts), scored as the best result. */
function citedChunks(a: ActiveConnector, q: Question, top: RankedChunk, entries: Entry[]): RankedChunk[] {
  return entries.map((e) => ({
    connectorId: a.id,
    connectorLabel: a.label,
    owner: a.owner === "operator" ? OPERATOR_OWNER : q.options.user,
    record: shownRecord(a, e.record),
    chunkIndex: 0,
    text: e.record.content,
    score: top.score,
    lexical: top.lexical,
  }));
}

/** A name as an answer says it: a journal's line may be 64K characters long (format.ts MAX_LINE_CHARS). */
const shortName = (name: string) => cutText(name, NAME_CHARS);
const NAME_CHARS = 120;

const markers = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `[${from + i}]`).join(" ");
const transactionsWord = (n: number) => `${n} transaction${n === 1 ? "" : "s"}`;

/** The results among which a transaction makes a question one of books (the first, or any when a book names all its words). */
const LEADING_RESULTS = 3;

/** Journal files a books answer reads at most, and their bytes in all: the best-ranked transactions' files first, then the others of their connector. */
export const BOOKS_READ = 16;

/**
 * The books answer to the question, when its best-ranked result is a transaction of a books
 * connector (or one of the next few is, and a book names every word of it) and it asks a sum of
 * accounts or payees a book names; undefined otherwise (the
 * answer is then made from the ranked results, as for any source). The book is the first journal
 * file, the best-ranked transactions' first, that names them and whose dates cover the period
 * asked ("the balance of Checking at the end of March 2015": not a journal that ends in 2004),
 * else of those covering it the one naming most, else the one naming most.
 */
export async function booksAnswer(q: Question, ranked: RankedChunk[], active: ActiveConnector[]): Promise<BooksAnswer | undefined> {
  const sum = sumAsked(q);
  const booksOf = (c: RankedChunk | undefined) => {
    const a = c && active.find((x) => x.id === c.connectorId);
    const file = c?.record.metadata.file;
    return a && a.connector instanceof BooksConnector && typeof file === "string" && transactionOf(c.record)
      ? { a, connector: a.connector, file }
      : undefined;
  };
  // A books question: its best-ranked result is a transaction; or one of the next few is, and a
  // book names every word of it ("Hoeveel heb ik in 2015 aan restaurants uitgegeven?" ranked an
  // invoice of 2015 first).
  const leading = ranked.slice(0, LEADING_RESULTS).findIndex((c) => booksOf(c) !== undefined);
  const first = booksOf(ranked[leading]);
  if (!sum || !first) return undefined;
  const fully = leading > 0;
  const files = new Map<string, { a: ActiveConnector; connector: BooksConnector; file: string }>();
  const add = (b: { a: ActiveConnector; connector: BooksConnector; file: string }) => {
    const key = JSON.stringify([b.a.id, b.file]);
    if (files.size < BOOKS_READ && !files.has(key)) files.set(key, b);
  };
  for (const c of ranked) {
    const b = booksOf(c);
    if (b) add(b);
  }
  for (const { source } of first.connector.files().sort((x, y) => (x.source < y.source ? -1 : 1))) add({ ...first, file: source });
  // The book covering the period asked (else nearest to it), then naming most of the question's
  // words, then best-ranked: a balance at a date a book does not reach is not its balance, however
  // well it names the account ("what did I owe on the credit card at the end of June 2014": not
  // sample.dat's MasterCard of 2004).
  let best: { answer: BooksAnswer; named: number; gap: number } | undefined;
  let budget = MAX_ANSWERED_BOOK_BYTES;
  for (const { a, connector, file } of files.values()) {
    const records = await connector.fileRecords(file, budget).catch(() => undefined);
    budget -= (records ?? []).reduce((n, r) => n + r.content.length, 0);
    const book: Entry[] = [];
    for (const [i, record] of (records ?? []).entries()) {
      const t = transactionOf(record);
      if (t) book.push({ record, t, payee: nameWords(`${t.payee} ${t.narration}`) });
      if (i % TRANSACTIONS_PER_TURN === TRANSACTIONS_PER_TURN - 1) await new Promise((resolve) => setImmediate(resolve));
    }
    if (book.length > 0) {
      book.sort((x, y) => (x.t.date < y.t.date ? -1 : x.t.date > y.t.date ? 1 : x.t.line - y.t.line));
      const answered = await answerFrom(q, sum, { a, file, book }, ranked);
      if (answered?.covers && answered.named === answered.asked) return answered.answer;
      if (answered && !fully && (!best || answered.gap < best.gap || (answered.gap === best.gap && answered.named > best.named)))
        best = answered;
    }
    if (budget <= 0) break;
  }
  return best?.answer;
}

/**
 * The question's words that may name an account or a payee: not a date's ("2014", "march", "end"
 * of "at the end of March 2015"), a number, a function word or a word of paying or of a balance.
 */
async function namingWords(q: Question, sum: Sum): Promise<Set<string>> {
  const { dateRange } = await import("../../retrieval/question-dates");
  const dated = new Set(dateRange(q.plan.text, q.options.now ?? new Date()).spans.flatMap(([x, y]) => words(q.plan.text.slice(x, y))));
  return new Set(
    q.terms
      .flatMap(words)
      .filter(
        (w) =>
          !/^\d+$/.test(w) &&
          !dated.has(w) &&
          !PAYING_WORDS.has(w) &&
          !OWING_WORDS.has(w) &&
          !FUNCTION_WORDS.has(w) &&
          !(sum === "balance" && BALANCE_WORDS.has(w)),
      ),
  );
}

async function answerFrom(
  q: Question,
  sum: Sum,
  { a, file, book }: { a: ActiveConnector; file: string; book: Entry[] },
  ranked: RankedChunk[],
): Promise<{ answer: BooksAnswer; covers: boolean; gap: number; named: number; asked: number } | undefined> {
  const asked = await namingWords(q, sum);
  const { accounts, used, alike } = accountsNamed(book, asked, directionOf(q));
  const reading = alike ? undefined : readingOf(accounts);
  const namedAccounts = new Set(accounts);
  const asBalance = sum === "balance" && accounts.length > 0;
  // A balance is an account's, whoever was paid.
  const payeeTerms = asBalance
    ? []
    : payeeTermsOf(
        book,
        q,
        [...asked].filter((w) => !used.has(w)),
        accounts.length > 0,
      );
  // A balance is of an account: a book naming none does not answer it.
  if ((accounts.length === 0 && payeeTerms.length === 0) || (sum === "balance" && accounts.length === 0)) return undefined;
  const named = used.size + payeeTerms.length;
  const byPayee = payeeTerms.length ? book.filter((e) => payeeTerms.every((w) => e.payee.has(w))) : book;
  const firstDay = book[0]!.t.date;
  const lastDay = book.at(-1)!.t.date;
  const period = await periodOf(q, lastDay);
  const balanceDay = period.to ? dayBefore(new Date(`${period.to}T00:00:00Z`)) : lastDay;
  // Days between the period asked (a balance: its day) and the book's; 0 when the book covers it.
  const [askedFrom, askedTo] = asBalance
    ? [balanceDay, balanceDay]
    : [period.from, period.to && dayBefore(new Date(`${period.to}T00:00:00Z`))];
  const gap =
    askedFrom && askedFrom > lastDay ? daysBetween(lastDay, askedFrom) : askedTo && askedTo < firstDay ? daysBetween(askedTo, firstDay) : 0;
  const covers = gap === 0;
  // A balance is every transaction up to the end of the period; anything else the period's own.
  const counted = asBalance ? { to: period.to } : period;
  const summed = byPayee.flatMap((e) => {
    const postings = inPeriod(e.t, counted) ? postingsOf(e.t, namedAccounts) : [];
    return postings.length ? [{ ...e, postings }] : [];
  });

  const shown = accounts.slice(0, NAMED_ACCOUNTS).map(shortName);
  const whose = accounts.length > NAMED_ACCOUNTS ? `${accounts.length} accounts (${shown.join(", ")} …)` : shown.join(", ");
  const payees = [...new Set(summed.map((e) => e.t.payee).filter(Boolean))].slice(0, NAMED_ACCOUNTS).map(shortName);
  const to = payeeTerms.length
    ? `${reading === "earned" ? "received from" : "paid to"} ${payees.length ? payees.join(", ") : payeeTerms.join(" ")}`
    : "";
  const what = [whose, to].filter(Boolean).join(", ");
  const when = asBalance ? `at the end of ${balanceDay}` : saidPeriod(period);
  const facts = (totals: CommodityTotals, listed: BooksFacts["listed"], cited: number, apart?: BooksFacts["accounts"]): BooksFacts => ({
    sum,
    totals: apart ? [] : shownTotals(readAs(totals, reading)),
    ...(reading ? { reading } : {}),
    ...(apart ? { accounts: apart } : {}),
    listed,
    period: {
      ...(asBalance ? {} : period.from ? { from: period.from } : {}),
      ...(asBalance ? { to: balanceDay } : period.to ? { to: dayBefore(new Date(`${period.to}T00:00:00Z`)) } : {}),
      said: when,
    },
    transactions: summed.length,
    cited,
    named,
    asked: asked.size,
    covers,
  });
  if (summed.length === 0)
    return {
      answer: {
        text: `No transaction of ${what} ${when} in ${file} (its transactions run from ${firstDay} to ${lastDay}).`,
        chunks: ranked,
        facts: facts({}, [], 0),
      },
      covers,
      gap,
      named,
      asked: asked.size,
    };

  const totals = sumPostings(summed.flatMap((e) => e.postings));
  let text: string;
  let cited: Entry[];
  let listedFacts: BooksFacts["listed"] = [];
  let apart: BooksFacts["accounts"];
  if (alike) {
    // The question's words name several accounts alike: each summed apart, cited by its first
    // transaction (a balance: its last), for the asker to say which one is meant.
    // Each transaction's postings to each account, in one pass over them (accountHolding).
    const byAccount = new Map<string, typeof summed>();
    for (const e of summed) {
      const mine = new Map<string, Posting[]>();
      for (const p of e.postings) {
        const account = accountHolding(p.account, namedAccounts);
        if (account === undefined) continue;
        const postings = mine.get(account);
        if (postings) postings.push(p);
        else mine.set(account, [p]);
      }
      for (const [account, postings] of mine) {
        const entries = byAccount.get(account);
        if (entries) entries.push({ ...e, postings });
        else byAccount.set(account, [{ ...e, postings }]);
      }
    }
    const each = accounts.flatMap((account) => {
      const mine = byAccount.get(account);
      return mine ? [{ account, mine, totals: sumPostings(mine.flatMap((e) => e.postings)) }] : [];
    });
    const said = each.slice(0, NAMED_ACCOUNTS);
    cited = [...new Map(said.map((x) => (asBalance ? x.mine.at(-1)! : x.mine[0]!)).map((e) => [e.record.id, e])).values()];
    const marker = (x: (typeof said)[number]) =>
      `[${cited.findIndex((e) => e.record.id === (asBalance ? x.mine.at(-1)! : x.mine[0]!).record.id) + 1}]`;
    const items = said.map((x) => `${shortName(x.account)}: ${saidRead(x.totals, readingOf([x.account]))} ${marker(x)}`);
    const more = each.length > said.length ? `; and ${each.length - said.length} more` : "";
    text = `Which account is meant? ${each.length} accounts are named alike; ${asBalance ? "their balances" : "their totals"} ${when}, each apart: ${items.join("; ")}${more} (${transactionsWord(summed.length)}).`;
    apart = each.map((x) => ({ account: x.account, totals: shownTotals(x.totals) }));
  } else if (sum === "largest" || sum === "smallest") {
    // Each transaction by its amount in the commodity most of them are in (earned or owed, as said).
    const sums = summed.map((e) => ({ e, totals: readAs(sumPostings(e.postings), reading) }));
    const counts = new Map<string, number>();
    for (const s of sums) for (const c of Object.keys(s.totals)) counts.set(c, (counts.get(c) ?? 0) + 1);
    const commodity = [...counts].sort((x, y) => y[1] - x[1])[0]![0];
    const ordered = sums
      .filter((s) => s.totals[commodity] !== undefined)
      .sort((x, y) => compareDecimals(y.totals[commodity]!, x.totals[commodity]!) * (sum === "largest" ? 1 : -1));
    const listed = ordered.slice(0, CITED_TRANSACTIONS);
    cited = listed.map((s) => s.e);
    listedFacts = listed.map((s) => ({ date: s.e.t.date, amounts: shownTotals(s.totals) }));
    const items = listed.map(
      (s, i) =>
        `${saidTotals(s.totals)}${reading ? ` ${reading}` : ""} on ${s.e.t.date}${s.e.t.payee || s.e.t.narration ? `, ${shortName(s.e.t.payee || s.e.t.narration)}` : ""} [${i + 1}]`,
    );
    text = `The ${sum} of ${transactionsWord(summed.length)} of ${what} ${when}: ${items.join("; ")}. In all: ${saidRead(totals, reading)}.`;
  } else if (asBalance) {
    // A balance is cited by the last transactions that made it.
    cited = summed.slice(-CITED_TRANSACTIONS).reverse();
    text = `The balance of ${what} ${when}: ${saidRead(totals, reading)}, after ${transactionsWord(summed.length)} ${markers(cited.length)}${summed.length > cited.length ? ` (the last ${cited.length} cited)` : ""}.`;
  } else {
    cited = summed.slice(0, CITED_TRANSACTIONS);
    text = `${what[0]!.toUpperCase()}${what.slice(1)} ${when}: ${saidRead(totals, reading)}, in ${transactionsWord(summed.length)} ${markers(cited.length)}${summed.length > cited.length ? ` (the first ${cited.length} cited)` : ""}.`;
  }
  const top = ranked[0]!;
  const citedIds = new Set(cited.map((e) => e.record.id));
  return {
    answer: {
      text,
      chunks: [...citedChunks(a, q, top, cited), ...ranked.filter((c) => !(c.connectorId === a.id && citedIds.has(c.record.id)))],
      facts: facts(totals, listedFacts, cited.length, apart),
    },
    covers,
    gap,
    named,
    asked: asked.size,
  };
}
