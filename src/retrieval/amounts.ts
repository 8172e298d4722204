// Amounts named in a question ("over 1,000 EUR", "under $50") as a soft signal: a record that
// holds an amount meeting the condition ranks a little higher, one that holds only amounts
// failing it a little lower. Amounts are read from the text and from numeric metadata.
import type { SourceRecord } from "../connectors/types";
import type { QueryPlan } from "./plan";

export const AMOUNT_BOOST = 0.05;

/** Numbers written as amounts: 1,250.00 / 1.250,00 / 1250 / 12.5 */
export function amountsIn(record: SourceRecord): number[] {
  const out: number[] = [];
  for (const v of Object.values(record.metadata)) if (typeof v === "number" && Number.isFinite(v)) out.push(v);
  // Not parts of dates or times (2026-03-12, 03/12, 10:30).
  for (const m of `${record.title} ${record.content}`.matchAll(/(?<![\w.,\-/:])(\d{1,3}(?:[.,\s]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?)(?![\w\-/:])/g)) {
    let s = m[1]!.replace(/\s/g, "");
    // The last separator followed by one or two digits is the decimal mark.
    const dec = /[.,](\d{1,2})$/.exec(s);
    const whole = dec ? s.slice(0, s.length - dec[0].length) : s;
    s = whole.replace(/[.,]/g, "") + (dec ? `.${dec[1]}` : "");
    const n = Number(s);
    if (Number.isFinite(n)) out.push(n);
  }
  return out;
}

/** +AMOUNT_BOOST, 0 or -AMOUNT_BOOST for a record against the question's amount conditions. */
export function amountSignal(plan: QueryPlan, record: SourceRecord): number {
  const conditions = plan.amounts.filter((a) => a.comparison);
  if (conditions.length === 0) return 0;
  const found = amountsIn(record);
  if (found.length === 0) return 0;
  const meets = conditions.every((c) => found.some((n) => (c.comparison === "over" ? n > c.value : n < c.value)));
  return meets ? AMOUNT_BOOST : -AMOUNT_BOOST;
}
