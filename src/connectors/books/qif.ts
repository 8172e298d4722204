// QIF (Quicken Interchange Format): `!Type:Bank` (Cash, CCard, Invst, Oth A, Oth L) sections of
// records ending in `^`, each a transaction: D date, T/U amount, P payee, M memo, L category or
// [transfer account], S/$/E splits, N check number or action, Y security, Q quantity, I price.
// Lists (`!Account`, `!Type:Cat`, `Class`, `Memorized`, `Security`) are counted, not booked.
// Dates are month first (`01/26/95`, `1/ 5'98`: an apostrophe marks 2000 and later); a day
// past 12 in first place is read day first. The account booked is the one `!Account` named
// last, else the file's name. Amounts have no commodity in QIF: "" (the README says so).
import { basename, extname } from "node:path";
import { BookUnreadable, boundedLine, type OnTransaction, type ParsedBook, plainDecimal } from "./format";
import { type BookTransaction, negateDecimal, type Posting } from "./sums";

const BOOKED = /^!Type:(Bank|Cash|CCard|Invst|Oth A|Oth L)\s*$/i;

function qifDate(text: string, lineNo: number): string {
  // Text after the year is left: one bank's exporter glues the payee to it ("03/25/099Share Withdrawal").
  const m = /^\s*(\d{1,2})\s*[/.-]\s*(\d{1,2})\s*(['/.-])\s*(\d{2,4})(?!\d)/.exec(text);
  if (!m) throw new BookUnreadable(lineNo, "a date is not month/day/year");
  let [month, day] = [Number(m[1]), Number(m[2])];
  if (month > 12 && day <= 12) [month, day] = [day, month];
  let year = Number(m[4]);
  if (m[4]!.length === 2) year += m[3] === "'" || year < 50 ? 2000 : 1900;
  // Three digits count years since 1900, as C's struct tm does ("099" is 1999).
  else if (m[4]!.length === 3) year += 1900;
  if (month < 1 || month > 12 || day < 1 || day > 31) throw new BookUnreadable(lineNo, "a date is out of range");
  return `${year}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`;
}

const account = (category: string) => category.replace(/^\[(.*)\]$/, "$1").trim();

export function parseQif(text: string, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const lines = text.split(/\r?\n|\r/);
  const transactions: BookTransaction[] = [];
  let otherEntries = 0;
  let booked = false;
  let inAccountList = false;
  let own = basename(file, extname(file));
  let fields: { code: string; value: string; line: number }[] = [];

  const record = () => {
    const start = fields[0]?.line ?? 0;
    const get = (code: string) => fields.find((f) => f.code === code)?.value;
    if (inAccountList) {
      own = get("N")?.trim() || own;
      otherEntries++;
    } else if (!booked || fields.length === 0) otherEntries++;
    else {
      const dateField = fields.find((f) => f.code === "D");
      if (!dateField) throw new BookUnreadable(start, "a transaction has no date");
      const total = get("T") ?? get("U");
      const amount = total === undefined ? "0" : plainDecimal(total);
      if (amount === undefined) throw new BookUnreadable(start, "a transaction's amount is not a number");
      const postings: Posting[] = [{ account: own, amount, commodity: "" }];
      const splits = fields.filter((f) => f.code === "S");
      const splitAmounts = fields.filter((f) => f.code === "$");
      if (splits.length) {
        for (const [k, s] of splits.entries()) {
          const value = splitAmounts[k] ? plainDecimal(splitAmounts[k]!.value) : undefined;
          if (value === undefined) throw new BookUnreadable(s.line, "a split has no amount");
          postings.push({ account: account(s.value), amount: negateDecimal(value), commodity: "" });
        }
      } else if (get("L")) postings.push({ account: account(get("L")!), amount: negateDecimal(amount), commodity: "" });
      const meta: Record<string, string> = {};
      for (const [code, name] of [
        ["N", "number"],
        ["C", "cleared"],
        ["Y", "security"],
        ["Q", "quantity"],
        ["I", "price"],
      ] as const)
        if (get(code)?.trim()) meta[name] = get(code)!.trim();
      const memos = fields.filter((f) => f.code === "M" || f.code === "E").map((f) => f.value.trim());
      transactions.push({
        date: qifDate(dateField.value, dateField.line),
        payee: (get("P") ?? "").trim(),
        narration: memos.filter(Boolean).join("; "),
        postings,
        tags: [],
        meta,
        file,
        line: start,
      });
      onTransaction();
    }
    fields = [];
  };

  for (let i = 0; i < lines.length; i++) {
    const line = boundedLine(lines, i);
    if (!line.trim()) continue;
    if (line.startsWith("!")) {
      if (fields.length) throw new BookUnreadable(i + 1, "a section starts inside a record");
      const header = line.trim();
      inAccountList = /^!Account$/i.test(header);
      if (inAccountList || /^!(Type|Account)/i.test(header)) booked = BOOKED.test(header);
      continue;
    }
    if (line.startsWith("^")) {
      record();
      continue;
    }
    fields.push({ code: line[0]!, value: line.slice(1), line: i + 1 });
  }
  if (fields.some((f) => f.value.trim())) throw new BookUnreadable(fields[0]!.line, "the last record has no closing ^");
  return { transactions, otherEntries };
}
