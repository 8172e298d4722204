// Amounts named in a question ("over 1,000 EUR", "under $50") as a soft signal: a record that
// holds an amount meeting the condition ranks a little higher, one that holds only amounts
// failing it a little lower. Amounts are read from the text and from numeric metadata.
import type { SourceRecord } from "../connectors/types";
import { billedIn } from "./countries";
import type { QueryPlan } from "./plan";

/** Larger than a hint: a question such as "invoices over 1000" says little else. */
export const AMOUNT_BOOST = 0.15;

/**
 * Numbers written as amounts: with cents (1,250.00 / 1.250,00 / 12.50) or beside a currency
 * (€ 2.321 / 1939 INR / Rs. 1939); never bare digits, which are account, phone and order numbers.
 */
export function amountsIn(record: SourceRecord): number[] {
  const out: number[] = [];
  // A table row's numeric columns other than its keys (a file's numbers are its size and pages).
  if (record.metadata.table !== undefined)
    for (const [k, v] of Object.entries(record.metadata)) if (typeof v === "number" && Number.isFinite(v) && !/id$/i.test(k)) out.push(v);
  // Not parts of dates or times (2026-03-12, 03/12, 10:30).
  const text = `${record.title} ${record.content}`;
  for (const m of text.matchAll(/(?<![\w.,\-/:])(\d{1,3}(?:[.,\s]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\w\-/:])/g)) {
    const cents = /[.,]\d{2}$/.test(m[1]!);
    const before = text.slice(Math.max(0, m.index! - 6), m.index!);
    const after = text.slice(m.index! + m[0].length, m.index! + m[0].length + 5);
    if (!cents && !CURRENCY_BEFORE.test(before) && !CURRENCY_AFTER.test(after)) continue;
    const n = amountValue(m[1]!);
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

/**
 * A number as written in an amount, in either convention (1,234.56 / 1.234,56 / 1 234,56 /
 * 1.000): the last separator followed by one or two digits is the decimal mark, the others
 * group thousands (a lone dot before three digits too, unless `dotGroupsThousands` is false).
 * NaN when it is no number.
 */
export function amountValue(written: string, { dotGroupsThousands = true } = {}): number {
  const s = written.replace(/\s/g, "");
  // One dot and three digits ("3.459") is read as a decimal where the convention says so.
  if (!dotGroupsThousands && /^\d+\.\d{3}$/.test(s)) return Number(s);
  const dec = /[.,](\d{1,2})$/.exec(s);
  const whole = dec ? s.slice(0, s.length - dec[0].length) : s;
  return Number(whole.replace(/[.,]/g, "") + (dec ? `.${dec[1]}` : ""));
}

const CURRENCY_BEFORE = /([€$£₹]|\b(eur|usd|gbp|pln|inr|rs\.?|rm|chf|zł))\s*$/i;
// After a number only codes and the euro sign ("4.904,94 €"): "$" after a number starts the next amount.
const CURRENCY_AFTER = /^\s*(€|(eur|usd|gbp|pln|inr|rm|chf|zł)\b)/i;

/** A record billed in the currency of a country the question names ("from Poland": PLN) is likely from there. */
export const COUNTRY_CURRENCY_BOOST = 0.1;

/** The amount conditions' signal, and the currency of the countries named. */
export function amountSignal(plan: QueryPlan, record: SourceRecord): number {
  return conditionSignal(plan, record) + currencySignal(plan, record);
}

function currencySignal(plan: QueryPlan, record: SourceRecord): number {
  if (plan.countries.length === 0 || record.metadata.table !== undefined) return 0;
  const text = `${record.title} ${record.content}`;
  return plan.countries.some((c) => billedIn(text, c)) ? COUNTRY_CURRENCY_BOOST : 0;
}

/** +AMOUNT_BOOST, 0 or -AMOUNT_BOOST for a record against the question's amount conditions. */
function conditionSignal(plan: QueryPlan, record: SourceRecord): number {
  const conditions = plan.amounts.filter((a) => a.comparison);
  if (conditions.length === 0) return 0;
  const found = amountsIn(record);
  if (found.length === 0) return 0;
  const meets = conditions.every((c) => found.some((n) => (c.comparison === "over" ? n > c.value : n < c.value)));
  return meets ? AMOUNT_BOOST : -AMOUNT_BOOST;
}
