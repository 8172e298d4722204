// The answer evaluation's labels (scripts/eval/answers-labels.json), typed once for answers.ts
// and for the test that keeps the file honest (test/scripts/eval/answers-labels.test.ts).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Asks } from "../../src/retrieval/asked";

export interface AnswerQuestion {
  id: string;
  split: "train" | "test";
  source: "mail" | "invoices" | "receipts" | "shop" | "books";
  kind: Asks;
  language: string;
  question: string;
  /** A JS regex, case-insensitive: what the answer must hold. */
  fact: string;
  /** "mail:<file id>", "invoices:<name>", "receipts:<id>", "shop:<Table>/<id>" or "books:<file>#L<line>": the records the fact is in. */
  record: string[];
  /**
   * Books: what computes the fact, the tools themselves (D34): a bean-query query over
   * example.beancount, a ledger command over sample.dat, or the sum of the records' amounts
   * (QIF, OFX: neither tool reads them). `reading`: the fact is the query's sums negated, as
   * income earned or a debt owed is said (the journal books both negative); `apart`: the query
   * selects account, number and currency, one sum per account, said "<account>: <sum>" apart (a
   * name that names several accounts alike).
   */
  oracle?: { "bean-query": string; reading?: "earned" | "owed"; apart?: true } | { ledger: string[] } | { sum: "qif" | "ofx" };
  note?: string;
}

export interface AnswerIntent {
  id: string;
  split: "train" | "test";
  language: string;
  question: string;
  /** The question compares an amount of money ("orders over 100 via PayPal"), not a count. */
  amountCondition: boolean;
  /** Its answer is an amount of money ("How much VAT…"), not a rate, a count or an explanation. */
  asksAmount: boolean;
  note?: string;
}

export interface AnswerLabels {
  note: string;
  questions: AnswerQuestion[];
  intents: AnswerIntent[];
}

export const loadAnswerLabels = (): AnswerLabels => JSON.parse(readFileSync(join(import.meta.dir, "answers-labels.json"), "utf8"));

/** A fact as answers are scored by it: case-insensitive, Unicode (Polish and accented letters fold too). */
export const factPattern = (fact: string) => new RegExp(fact, "iu");

/** A paraphrased question of scripts/eval/answers-kinds.json: what is asked, worded as the tables may not know it (D32). */
export interface KindQuestion {
  id: string;
  split: "train" | "test";
  kind: Asks;
  language: string;
  question: string;
}

export const loadKindQuestions = (): KindQuestion[] =>
  (JSON.parse(readFileSync(join(import.meta.dir, "answers-kinds.json"), "utf8")) as { questions: KindQuestion[] }).questions;
