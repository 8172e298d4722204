// beancount's text format, the part that books transactions: `YYYY-MM-DD * "payee" "narration"
// #tag ^link`, its metadata and postings (`Account  -12.50 USD {cost} @ price`), pushtag and
// poptag. Other directives (open, balance, price, ...) are passed over. One pass, line by line;
// a posting whose amount is left out takes what balances the others (their weights: cost or
// price times units). Strict: a transaction line it cannot read refuses the file, with its line.
import {
  BookUnreadable,
  boundedLine,
  endTransaction,
  type OnTransaction,
  type OpenTransaction,
  type ParsedBook,
  plainDecimal,
} from "./format";
import { type BookTransaction, multiplyDecimals, negateDecimal, type Posting } from "./sums";

const HEADER = /^(\d{4})-(\d{2})-(\d{2})\s+(?:\*|!|txn|[A-Z#&?%PSTCURM])(?:\s+(.*))?$/;
const ACCOUNT = /^([!*]\s+)?([A-Z][\p{L}\p{N}-]*(?::[\p{Lu}\p{N}][\p{L}\p{N}-]*)+)(?:\s+(.*))?$/u;
/** A number (its parts cannot overlap: "[\d,]*\.?\d+" backtracked for minutes over a long run of digits). */
const NUMBER = String.raw`[-+]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)`;
const AMOUNT = new RegExp(String.raw`^(${NUMBER})\s+([A-Z][A-Z0-9'._-]{0,22}[A-Z0-9]|[A-Z])(?:\s+(.*))?$`);
const COST = new RegExp(String.raw`^\{\s*(${NUMBER})\s+([A-Z][A-Z0-9'._-]*)[^}]*\}`);
const PRICE = new RegExp(String.raw`@(@?)\s*(${NUMBER})\s+([A-Z][A-Z0-9'._-]*)`);
const META = /^([a-z][a-zA-Z0-9_-]*):\s*(.*)$/;
const STRING = /"((?:[^"\\]|\\.)*)"/g;

/** A posting's amount and, for the balance of an elided one, its weight ("16 VHT {53.60 USD}" weighs 857.60 USD). */
function readPosting(rest: string, lineNo: number): { amount?: Posting; weight?: Posting } {
  const text = rest.replace(/\s;.*$/, "").trim();
  if (!text) return {};
  const m = AMOUNT.exec(text);
  const amount = m ? plainDecimal(m[1]!) : undefined;
  if (!m || amount === undefined) throw new BookUnreadable(lineNo, "a posting's amount is not a number and a commodity");
  const commodity = m[2]!;
  const after = (m[3] ?? "").trim();
  const cost = COST.exec(after);
  const price = PRICE.exec(after);
  let weight: Posting = { account: "", amount, commodity };
  if (cost) weight = { account: "", amount: multiplyDecimals(amount, plainDecimal(cost[1]!)!), commodity: cost[2]! };
  else if (price) {
    const each = plainDecimal(price[2]!)!;
    const total = price[1] ? (amount.startsWith("-") ? negateDecimal(each) : each) : multiplyDecimals(amount, each);
    weight = { account: "", amount: total, commodity: price[3]! };
  }
  return { amount: { account: "", amount, commodity }, weight };
}

export function parseBeancount(text: string, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const lines = text.split(/\r?\n/);
  const pushed = new Set<string>();
  const transactions: BookTransaction[] = [];
  let current: OpenTransaction | undefined;

  const close = () => {
    if (!current) return;
    endTransaction(current, transactions, onTransaction);
    current = undefined;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = boundedLine(lines, i);
    const lineNo = i + 1;
    if (/^\s/.test(line) && line.trim()) {
      if (!current) continue;
      const body = line.trim();
      if (body.startsWith(";")) continue;
      const meta = META.exec(body);
      if (meta) {
        current.meta[meta[1]!] = meta[2]!.replace(/^"(.*)"$/, "$1");
        continue;
      }
      const posting = ACCOUNT.exec(body);
      if (!posting) throw new BookUnreadable(lineNo, "a line of a transaction is neither a posting nor metadata");
      const account = posting[2]!;
      const { amount, weight } = readPosting(posting[3] ?? "", lineNo);
      if (amount && weight) {
        current.postings.push({ ...amount, account });
        current.weights.push(weight);
      } else current.elided.push(account);
      continue;
    }
    close();
    if (!line.trim() || line.startsWith(";") || line.startsWith("*")) continue;
    const tag = /^(push|pop)tag\s+#(\S+)/.exec(line);
    if (tag) {
      if (tag[1] === "push") pushed.add(tag[2]!);
      else pushed.delete(tag[2]!);
      continue;
    }
    const header = HEADER.exec(line);
    if (!header) continue;
    const [, y, mo, d, rest = ""] = header;
    const head = rest.replace(/\s;.*$/, "");
    const strings = [...head.matchAll(STRING)].map((s) => s[1]!.replace(/\\(.)/g, "$1"));
    if (strings.length > 2) throw new BookUnreadable(lineNo, "a transaction has more than a payee and a narration");
    const words = head.replace(STRING, " ");
    const tags = [...pushed, ...[...words.matchAll(/(?:^|\s)#([\w/.-]+)/g)].map((t) => t[1]!)];
    const links = [...words.matchAll(/(?:^|\s)\^([\w/.-]+)/g)].map((t) => t[1]!);
    current = {
      date: `${y}-${mo}-${d}`,
      payee: strings.length === 2 ? strings[0]! : "",
      narration: strings.length === 2 ? strings[1]! : (strings[0] ?? ""),
      postings: [],
      tags,
      meta: links.length ? { links: links.join(" ") } : {},
      file,
      line: lineNo,
      weights: [],
      elided: [],
    };
  }
  close();
  return { transactions, otherEntries: 0 };
}
