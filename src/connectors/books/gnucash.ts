// GnuCash XML books: version 2 (`gnc-v2`, the format GnuCash writes, gzip-compressed by default)
// and version 1 (`<gnc><version>1`). Accounts first, named by their path below the root
// ("Expenses:Auto:Gas"); then each transaction with its splits, each split's quantity booked to
// its account in the account's commodity. GnuCash keeps amounts as fractions ("18700/100"): one
// whose denominator is a power of ten is an exact decimal; another refuses the file. One pass
// of indexOf over the blocks; the gzip is inflated by the caller within its bound.
import { BookUnreadable, LineCounter, type OnTransaction, type ParsedBook } from "./format";
import type { BookTransaction, Posting } from "./sums";

const entities = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#x([0-9a-f]+);/gi, (_, n) => String.fromCodePoint(Math.min(Number.parseInt(n, 16), 0x10ffff)))
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Math.min(Number(n), 0x10ffff)))
    .replace(/&amp;/g, "&");

/** Each `<tag ...>...</tag>` block in `text`, with its offset, in order. */
function* blocks(text: string, tag: string, from = 0, to = text.length): Generator<{ body: string; at: number }> {
  const close = `</${tag}>`;
  for (let at = text.indexOf(`<${tag}`, from); at >= 0 && at < to; ) {
    const next = text.charAt(at + tag.length + 1);
    if (next !== ">" && next !== " ") {
      at = text.indexOf(`<${tag}`, at + 1);
      continue;
    }
    const end = text.indexOf(close, at);
    if (end < 0 || end > to) throw new BookUnreadable(1, `a <${tag}> element is cut off`);
    yield { body: text.slice(at, end), at };
    at = text.indexOf(`<${tag}`, end + close.length);
  }
}

/** The text of the first `<tag>` in `body` (entities decoded). */
function field(body: string, tag: string): string | undefined {
  const at = body.indexOf(`<${tag}`);
  if (at < 0) return undefined;
  const start = body.indexOf(">", at) + 1;
  const end = body.indexOf(`</${tag}>`, start);
  if (start <= 0 || end < 0) return undefined;
  return entities(body.slice(start, end).trim());
}

/** "18700/100" as "187.00"; a denominator that is not a power of ten cannot be one exactly. */
export function fraction(text: string | undefined, line: number): string {
  const m = /^(-?)(\d{1,40})\/(1(0{0,20}))$/.exec(text ?? "");
  if (!m) throw new BookUnreadable(line, "a split's amount is not a fraction over a power of ten");
  const scale = m[4]!.length;
  const digits = m[2]!.padStart(scale + 1, "0");
  const whole = digits.slice(0, digits.length - scale).replace(/^0+(?=\d)/, "");
  const amount = `${whole}${scale ? `.${digits.slice(digits.length - scale)}` : ""}`;
  return m[1] && /[1-9]/.test(amount) ? `-${amount}` : amount;
}

interface Names {
  account: string;
  id: string;
  parent: string;
  commodity: string;
  type: string;
  transaction: string;
  date: string;
  description: string;
  num: string;
  split: string;
  quantity: string;
  splitAccount: string;
  memo: string;
  splitId: string;
}

const V2: Names = {
  account: "gnc:account",
  id: "act:id",
  parent: "act:parent",
  commodity: "act:commodity",
  type: "act:type",
  transaction: "gnc:transaction",
  date: "trn:date-posted",
  description: "trn:description",
  num: "trn:num",
  split: "trn:split",
  quantity: "split:quantity",
  splitAccount: "split:account",
  memo: "split:memo",
  splitId: "trn:id",
};

const V1: Names = {
  account: "account",
  id: "guid",
  parent: "parent",
  commodity: "currency",
  type: "type",
  transaction: "transaction",
  date: "date-posted",
  description: "description",
  num: "num",
  split: "split",
  quantity: "quantity",
  splitAccount: "account",
  memo: "memo",
  splitId: "guid",
};

/** A GnuCash account as both formats give it: its name, its parent's id, its commodity, whether it is the root. */
export interface GnucashAccount {
  name: string;
  parent?: string;
  commodity: string;
  root: boolean;
}

/** An account's path below the root ("Expenses:Auto:Gas"), at most 64 levels (a cycle ends there). */
export function accountPath(accounts: Map<string, GnucashAccount>, id: string): string {
  const parts: string[] = [];
  for (let a = accounts.get(id), hops = 0; a && !a.root && hops < 64; a = a.parent ? accounts.get(a.parent) : undefined, hops++)
    parts.unshift(a.name);
  return parts.join(":") || id;
}

export function parseGnucash(text: string, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const v2 = text.includes("<gnc-v2");
  if (!v2 && !/<gnc>\s*<version>1<\/version>/.test(text)) throw new BookUnreadable(1, "not a GnuCash XML book (gnc-v2 or version 1)");
  const n = v2 ? V2 : V1;
  const lines = new LineCounter(text);
  const accounts = new Map<string, GnucashAccount>();
  const firstTransaction = text.indexOf(`<${n.transaction}`);
  for (const { body } of blocks(text, n.account, 0, firstTransaction < 0 ? text.length : firstTransaction)) {
    const id = field(body, n.id);
    if (!id) continue;
    const commodity = /<(?:cmdty:)?id>([^<]*)<\/(?:cmdty:)?id>/.exec(body.slice(body.indexOf(`<${n.commodity}`) >>> 0))?.[1];
    const parentBody = body.indexOf(`<${n.parent}`) >= 0 ? body.slice(body.indexOf(`<${n.parent}`)) : "";
    const parent = v2 ? field(body, n.parent) : parentBody ? field(parentBody, "guid") : undefined;
    accounts.set(id, {
      name: field(body, "act:name") ?? field(body, "name") ?? id,
      parent,
      commodity: commodity ?? "",
      root: field(body, n.type) === "ROOT",
    });
  }
  const fullName = (id: string) => accountPath(accounts, id);
  const transactions: BookTransaction[] = [];
  for (const { body, at } of blocks(text, n.transaction, Math.max(firstTransaction, 0))) {
    const line = lines.lineAt(at);
    const posted = body.slice(body.indexOf(`<${n.date}`));
    const date = /(\d{4}-\d{2}-\d{2})/.exec(field(posted, v2 ? "ts:date" : "s") ?? "")?.[1];
    if (!date || body.indexOf(`<${n.date}`) < 0) throw new BookUnreadable(line, "a transaction has no date posted");
    const postings: Posting[] = [];
    const memos: string[] = [];
    const splitLines = new LineCounter(body);
    for (const split of blocks(body, n.split)) {
      const splitLine = line + splitLines.lineAt(split.at) - 1;
      const accountId = v2
        ? field(split.body, n.splitAccount)
        : field(split.body.slice(split.body.indexOf(`<${n.quantity}`)), n.splitAccount);
      const account = accountId ? accounts.get(accountId) : undefined;
      if (!accountId || !account) throw new BookUnreadable(splitLine, "a split names no known account");
      postings.push({
        account: fullName(accountId),
        amount: fraction(field(split.body, n.quantity), splitLine),
        commodity: account.commodity,
      });
      const memo = field(split.body, n.memo);
      if (memo) memos.push(memo);
    }
    const num = field(body, n.num);
    transactions.push({
      date,
      payee: field(body, n.description) ?? "",
      narration: memos.join("; "),
      postings,
      tags: [],
      meta: num ? { number: num } : {},
      file,
      line,
    });
    onTransaction();
  }
  return { transactions, otherEntries: 0 };
}
