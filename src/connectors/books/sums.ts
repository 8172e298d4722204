// Exact sums over books (D34): amounts are decimal strings, added as bigints scaled to the
// largest number of decimals met, per commodity, never mixed and never through a float. An
// account's balance at a date and the totals of an account and its sub-accounts over a period
// are what an accountant's question asks; the transactions summed come back to be cited.

/** One leg of a transaction: an amount in one commodity booked to one account. */
export interface Posting {
  account: string;
  /** An exact decimal: "-1234.50", never a float's rendering. */
  amount: string;
  /** "USD", "$", "AAPL"; "" when the source names none (a QIF file). */
  commodity: string;
}

/** One transaction as a journal holds it, with the file and line it starts at. */
export interface BookTransaction {
  /** YYYY-MM-DD. */
  date: string;
  payee: string;
  narration: string;
  postings: Posting[];
  tags: string[];
  meta: Record<string, string>;
  /** The file, relative to the connector's folder, and its 1-based line (OFX, GnuCash: where the transaction's element opens). */
  file: string;
  line: number;
}

/** A decimal's digits as a bigint and how many of them follow the point. */
interface Scaled {
  units: bigint;
  scale: number;
}

const DECIMAL = /^([+-]?)(\d+)(?:\.(\d+))?$/;

/** An amount that is not a plain decimal ("1e3", "1,000", "$5"): a parser's bug, never rounded over. */
export class NotADecimal extends Error {}

function scaled(amount: string): Scaled {
  const m = DECIMAL.exec(amount);
  if (!m) throw new NotADecimal(`not a decimal amount: ${JSON.stringify(amount.slice(0, 40))}`);
  const fraction = m[3] ?? "";
  const units = BigInt(m[2] + fraction);
  return { units: m[1] === "-" ? -units : units, scale: fraction.length };
}

const rescale = (s: Scaled, scale: number): bigint => s.units * 10n ** BigInt(scale - s.scale);

function render({ units, scale }: Scaled): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale);
  const fraction = scale ? `.${digits.slice(digits.length - scale)}` : "";
  return `${negative ? "-" : ""}${whole}${fraction}`;
}

/** a + b, exactly; the result keeps the larger number of decimals ("1.5" + "2.25" = "3.75", "1.50" + "1" = "2.50"). */
export function addDecimals(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale);
  return render({ units: rescale(x, scale) + rescale(y, scale), scale });
}

/** -a, exactly. */
export const negateDecimal = (a: string): string => {
  const x = scaled(a);
  return render({ units: -x.units, scale: x.scale });
};

/** a × b, exactly (a price times a quantity). */
export function multiplyDecimals(a: string, b: string): string {
  const x = scaled(a);
  const y = scaled(b);
  return render({ units: x.units * y.units, scale: x.scale + y.scale });
}

/** Whether a decimal is zero ("0", "-0.00"). */
export const isZeroDecimal = (a: string): boolean => scaled(a).units === 0n;

/** Compares two decimals: negative, zero or positive as a < b, a = b, a > b. */
export function compareDecimals(a: string, b: string): number {
  const x = scaled(a);
  const y = scaled(b);
  const scale = Math.max(x.scale, y.scale);
  const d = rescale(x, scale) - rescale(y, scale);
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}

/** Per commodity, the sum of the amounts: one entry per commodity met, never converted. */
export type CommodityTotals = Record<string, string>;

/** The postings' amounts added per commodity. */
export function sumPostings(postings: Iterable<Posting>): CommodityTotals {
  const sums = new Map<string, Scaled>();
  for (const p of postings) {
    const x = scaled(p.amount);
    const s = sums.get(p.commodity);
    if (!s) sums.set(p.commodity, x);
    else {
      const scale = Math.max(s.scale, x.scale);
      sums.set(p.commodity, { units: rescale(s, scale) + rescale(x, scale), scale });
    }
  }
  return Object.fromEntries([...sums].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([c, s]) => [c, render(s)]));
}

/** `account` itself or one of its sub-accounts ("Expenses:Food" holds "Expenses:Food:Restaurant", not "Expenses:Foodstuff"). */
export const underAccount = (account: string, prefix: string): boolean =>
  account === prefix || (account.startsWith(prefix) && account.charCodeAt(prefix.length) === 0x3a);

/** What to total: an account and its sub-accounts, over a period of dates. */
export interface TotalsQuery {
  /** "Expenses:Food:Restaurant"; every account when absent. */
  account?: string;
  /** First date counted, YYYY-MM-DD (inclusive); from the start when absent. */
  from?: string;
  /** First date no longer counted, YYYY-MM-DD (exclusive); to the end when absent. */
  to?: string;
  /** Only transactions whose payee or narration holds this (case-insensitive): "what did I pay Verizon". */
  payee?: string;
}

/** The totals and the transactions they add up (in date order), to be cited. */
export interface Totals {
  totals: CommodityTotals;
  transactions: BookTransaction[];
  postings: number;
}

/** Totals of the postings to `query.account` (and its sub-accounts) dated in [from, to). */
export function totalsOf(transactions: Iterable<BookTransaction>, query: TotalsQuery): Totals {
  const needle = query.payee?.toLowerCase();
  const summed: BookTransaction[] = [];
  const postings: Posting[] = [];
  for (const t of transactions) {
    if ((query.from && t.date < query.from) || (query.to && t.date >= query.to)) continue;
    if (needle && !`${t.payee}\n${t.narration}`.toLowerCase().includes(needle)) continue;
    const mine = query.account ? t.postings.filter((p) => underAccount(p.account, query.account!)) : t.postings;
    if (mine.length === 0) continue;
    summed.push(t);
    postings.push(...mine);
  }
  summed.sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : 0));
  return { totals: sumPostings(postings), transactions: summed, postings: postings.length };
}

/** An account's balance (with its sub-accounts) at the end of `date` (YYYY-MM-DD, inclusive). */
export function balanceAt(transactions: Iterable<BookTransaction>, account: string, date: string): Totals {
  const next = new Date(`${date}T00:00:00Z`);
  next.setUTCDate(next.getUTCDate() + 1);
  return totalsOf(transactions, { account, to: next.toISOString().slice(0, 10) });
}
