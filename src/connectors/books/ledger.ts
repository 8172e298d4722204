// Ledger and hledger journals: `2004/05/14 * (code) Payee  ; note`, postings `Account  $1,000.00`
// (two spaces or a tab end the account; the commodity before or after the number; `@ price`,
// `@@ total`), notes with `:tags:` and `Key: Value`, `apply tag`/`end apply tag`, `Y`/`year`, `comment … end comment`.
// A posting left without an amount takes what balances the others, per commodity. Automated
// (`=`) and periodic (`~`) transactions are rules, not transactions: passed over (so are their
// generated postings; the README says so). `include` is not followed. One pass, line by line.
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

const HEADER = /^(\d{4}[/.-])?(\d{1,2})[/.-](\d{1,2})(?:=\S+)?(?:\s+([*!]))?(?:\s+\(([^)]*)\))?(?:\s+(.*))?$/;
/** A commodity: a quoted name, or letters and symbols without digits, spaces or signs. */
const COMMODITY = String.raw`"[^"]+"|[^\s\d.,;@+\-*/()=<>{}\[\]"]+`;
const AMOUNT = new RegExp(
  String.raw`^(?:(${COMMODITY})\s*([-+]?[\d.,]+)|([-+]?)(${COMMODITY})\s*([\d.,]+)|([-+]?[\d.,]+)(?:\s*(${COMMODITY}))?)$`,
  "u",
);

interface Amount {
  amount: string;
  commodity: string;
}

function readAmount(text: string, lineNo: number): Amount {
  const m = AMOUNT.exec(text.trim());
  if (!m) throw new BookUnreadable(lineNo, "a posting's amount is not a number with a commodity");
  const [, c1, n1, sign2, c2, n2, n3, c3] = m;
  const number = n1 ?? (n2 !== undefined ? `${sign2}${n2}` : n3!);
  const amount = plainDecimal(number);
  if (amount === undefined) throw new BookUnreadable(lineNo, "a posting's amount is not a number");
  return { amount, commodity: (c1 ?? c2 ?? c3 ?? "").replace(/^"(.*)"$/, "$1") };
}

/** Tags (`:a:b:`) and `Key: Value` pairs of a note. */
function readNote(note: string, tags: string[], meta: Record<string, string>): void {
  const tagged = /(?:^|\s):((?:[^\s:]+:)+)(?=\s|$)/.exec(note);
  if (tagged) tags.push(...tagged[1]!.split(":").filter(Boolean));
  const pair = /^\s*([^\s:]+):\s+(.+)$/.exec(note);
  if (pair && !tagged) meta[pair[1]!] = pair[2]!.trim();
}

export function parseLedger(text: string, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const lines = text.split(/\r?\n/);
  const applied: string[][] = [];
  let year = new Date().getUTCFullYear();
  const transactions: BookTransaction[] = [];
  let current: OpenTransaction | undefined;
  let inRule = false;
  /** Inside `comment … end comment` (or `test … end test`): nothing is read until its end. */
  let inComment: string | undefined;

  const close = () => {
    inRule = false;
    if (!current) return;
    endTransaction(current, transactions, onTransaction);
    current = undefined;
  };

  for (let i = 0; i < lines.length; i++) {
    const line = boundedLine(lines, i);
    const lineNo = i + 1;
    if (inComment) {
      if (line.trim() === `end ${inComment}`) inComment = undefined;
      continue;
    }
    if (/^[ \t]/.test(line) && line.trim()) {
      if (!current) continue;
      const body = line.trim();
      if (body.startsWith(";")) {
        readNote(body.slice(1), current.tags, current.meta);
        continue;
      }
      const [posting = "", note] = splitNote(body);
      if (note !== undefined) readNote(note, current.tags, current.meta);
      const cut = /\t| {2,}/.exec(posting);
      let account = (cut ? posting.slice(0, cut.index) : posting).replace(/^[*!]\s*/, "").trim();
      const virtual = /^[([](.*)[)\]]$/.exec(account);
      if (virtual) account = virtual[1]!;
      const rest = cut ? posting.slice(cut.index).trim() : "";
      if (!rest) {
        current.elided.push(account);
        continue;
      }
      const at = /\s*(@@?)\s*(.+)$/.exec(rest);
      const held = readAmount(at ? rest.slice(0, at.index) : rest, lineNo);
      current.postings.push({ account, ...held });
      let weight: Posting = { account, ...held };
      if (at) {
        const price = readAmount(at[2]!.replace(/^[({]|[)}]$/g, ""), lineNo);
        const total =
          at[1] === "@@"
            ? held.amount.startsWith("-")
              ? negateDecimal(price.amount)
              : price.amount
            : multiplyDecimals(held.amount, price.amount);
        weight = { account, amount: total, commodity: price.commodity };
      }
      current.weights.push(weight);
      continue;
    }
    if (inRule && /^[ \t]/.test(line)) continue;
    close();
    const trimmed = line.trim();
    if (!trimmed || /^[;#%|*]/.test(trimmed)) continue;
    if (/^[=~]/.test(line)) {
      inRule = true;
      continue;
    }
    const block = /^(comment|test)$/.exec(trimmed);
    if (block) {
      inComment = block[1];
      continue;
    }
    const directive = /^(?:apply\s+tag|tag)\s+(.+)$/.exec(trimmed);
    if (directive) {
      applied.push(directive[1]!.split(/[:\s]+/).filter(Boolean));
      continue;
    }
    if (/^end(\s+apply)?(\s+tag)?$/.test(trimmed) || trimmed === "pop") {
      applied.pop();
      continue;
    }
    const y = /^(?:Y|year)\s*(\d{4})$/.exec(trimmed);
    if (y) {
      year = Number(y[1]);
      continue;
    }
    if (!/^\d/.test(line)) continue;
    const header = HEADER.exec(line);
    if (!header) throw new BookUnreadable(lineNo, "a transaction's first line is not a date and a payee");
    const [, yy, mm, dd, , code, rest = ""] = header;
    const [payee = "", note] = splitNote(rest);
    const tags = applied.flat();
    const meta: Record<string, string> = code ? { code } : {};
    if (note !== undefined) readNote(note, tags, meta);
    current = {
      date: `${yy ? yy.slice(0, 4) : year}-${mm!.padStart(2, "0")}-${dd!.padStart(2, "0")}`,
      payee: payee.trim(),
      narration: "",
      postings: [],
      tags,
      meta,
      file,
      line: lineNo,
      weights: [],
      elided: [],
    };
  }
  close();
  return { transactions, otherEntries: 0 };
}

/** A line and its note: what follows `;` (a `;` inside a quoted commodity is not one). */
function splitNote(text: string): [string, string | undefined] {
  const at = text.search(/;/);
  return at < 0 ? [text, undefined] : [text.slice(0, at).trimEnd(), text.slice(at + 1)];
}
