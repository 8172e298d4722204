// "What is asked" (D32), the first section of answers.ts: how well the plan's reading (asked.ts
// askedOf, the language tables' rows) names the kind of answer each question's label says
// (amount, date, place, person, item, count, list, yes/no, open), per language and kind, with
// its confusions. No server and no model: the reading is the tables'.
import { ASKED_KINDS, askedOf } from "../../src/retrieval/asked";
import type { AnswerQuestion } from "./answers-labels";

const ratio = (a: number, n: number) => (n === 0 ? "   -" : (a / n).toFixed(2));

/** Prints the section. */
export function askedSection(questions: AnswerQuestion[], split: string): void {
  const groups = new Map<string, [number, number]>();
  const confused = new Map<string, number>();
  for (const q of questions) {
    const said = askedOf(q.question).asks;
    for (const g of ["all", q.language, q.kind]) {
      const t = groups.get(g) ?? groups.set(g, [0, 0]).get(g)!;
      t[0] += said === q.kind ? 1 : 0;
      t[1]++;
    }
    if (said !== q.kind) confused.set(`${q.kind}>${said}`, (confused.get(`${q.kind}>${said}`) ?? 0) + 1);
  }
  const languages = [...new Set(questions.map((q) => q.language))].sort();
  const columns = ["all", ...languages, ...ASKED_KINDS];
  console.log(`what is asked (${split}): ${questions.length} questions; share of kinds read right`);
  console.log(`  ${columns.map((g) => g.padStart(6)).join(" ")}`);
  console.log(`  ${columns.map((g) => ratio(...(groups.get(g) ?? [0, 0])).padStart(6)).join(" ")}`);
  const pairs = [...confused].sort((a, b) => b[1] - a[1]).map(([pair, n]) => `${pair} ${n}`);
  console.log(`  confusions (labelled>read: count): ${pairs.join(", ") || "none"}`);
}
