// OFX bank and card statements, SGML 1.x (`<TAG>value` with end tags left out) and XML 2.x
// alike: one linear pass over the tags. Each `<STMTTRN>` is a transaction (TRNTYPE, DTPOSTED,
// TRNAMT, FITID, NAME or PAYEE, MEMO, CHECKNUM) of the account its statement names (ACCTID,
// with the institution's ORG), in its CURRENCY or the statement's CURDEF. OFX books one side:
// the account's posting alone. Investment statements' trades are not read.
import { BookUnreadable, LineCounter, type OnTransaction, type ParsedBook, plainDecimal } from "./format";
import type { BookTransaction } from "./sums";

const TAG = /<(\/?)([A-Za-z0-9.]+)(?:\s[^<>]*)?>([^<]*)/g;

const entities = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Math.min(Number(n), 0x10ffff)))
    .replace(/&amp;/g, "&");

export function parseOfx(text: string, file: string, onTransaction: OnTransaction = () => {}): ParsedBook {
  const at = text.search(/<OFX>/i);
  if (at < 0) throw new BookUnreadable(1, "no <OFX> element");
  const lines = new LineCounter(text);
  const transactions: BookTransaction[] = [];
  let org = "";
  let accountId = "";
  let currency = "";
  let inTransaction: { fields: Record<string, string>; line: number } | undefined;
  TAG.lastIndex = at;
  for (let m = TAG.exec(text); m; m = TAG.exec(text)) {
    const closing = m[1] === "/";
    const name = m[2]!.toUpperCase();
    const value = entities(m[3]!.trim());
    if (name === "STMTTRN") {
      if (!closing) {
        if (inTransaction) throw new BookUnreadable(lines.lineAt(m.index), "a transaction opens inside another");
        inTransaction = { fields: {}, line: lines.lineAt(m.index) };
        continue;
      }
      if (!inTransaction) throw new BookUnreadable(lines.lineAt(m.index), "a transaction closes that never opened");
      const { fields, line } = inTransaction;
      inTransaction = undefined;
      const date = /^(\d{4})(\d{2})(\d{2})/.exec(fields.DTPOSTED ?? "");
      if (!date) throw new BookUnreadable(line, "a transaction has no DTPOSTED date");
      const amount = plainDecimal(fields.TRNAMT ?? "", /,\d+$/.test(fields.TRNAMT ?? "") && !(fields.TRNAMT ?? "").includes("."));
      if (amount === undefined) throw new BookUnreadable(line, "a transaction's TRNAMT is not a number");
      const meta: Record<string, string> = {};
      for (const [field, key] of [
        ["TRNTYPE", "type"],
        ["FITID", "fitid"],
        ["CHECKNUM", "number"],
        ["REFNUM", "reference"],
      ] as const)
        if (fields[field]) meta[key] = fields[field]!;
      transactions.push({
        date: `${date[1]}-${date[2]}-${date[3]}`,
        payee: fields.NAME || fields.PAYEE || "",
        narration: fields.MEMO ?? "",
        postings: [{ account: [org, accountId].filter(Boolean).join(":") || "OFX", amount, commodity: fields.CURSYM || currency }],
        tags: [],
        meta,
        file,
        line,
      });
      onTransaction();
      continue;
    }
    if (closing || !value) continue;
    if (inTransaction) {
      // CURRENCY's own CURSYM names the transaction's currency; the first NAME is the payee's.
      inTransaction.fields[name] ??= value;
    } else if (name === "ORG") org = value;
    else if (name === "ACCTID") accountId = value;
    else if (name === "CURDEF") currency = value;
  }
  if (inTransaction) throw new BookUnreadable(inTransaction.line, "a transaction is cut off");
  return { transactions, otherEntries: 0 };
}
