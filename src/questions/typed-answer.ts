// Shape C's answer (D9, D34), made once for both wires: its text as POST /v1/query returns it,
// and the same answer as data for the corpus_answer tool, so that an assistant receives a number
// with its evidence instead of prose to parse (issue 40). The data is read from what made the
// text: a books answer's sums, period and transactions (connectors/books/answer.ts), or the
// extractive answer's statements, each with the value of the kind asked (an amount and its
// currency, a date, a count) and the source its marker cites. How sure it is comes from the
// answer's own features, each given with the product (CONFIDENCE below), never a constant.
import { type Static, Type } from "@sinclair/typebox";
import type { CitedRanked } from "../archive/answer";
import { type BooksFacts, saidPeriod } from "../connectors/books/answer";
import { documentPageUrl } from "../documents/open";
import { ID_PREFIX } from "../ids";
import { amountsWithCurrency, meetsAmountConditions } from "../retrieval/amounts";
import { extractiveAnswer, kindFit } from "../retrieval/answer";
import { answerSourceOf } from "../retrieval/answer-source";
import { words, wordsRemembered } from "../retrieval/bm25";
import { documentDates } from "../retrieval/document-dates";
import { datedAsAsked } from "../retrieval/evidence";
import { recordKey } from "../retrieval/record-memo";
import type { ChunkStatements } from "../retrieval/statement-memo";
import type { QueryOutcome } from "../retrieval/types";
import { type QuestionStageTimes, timed } from "./stages";

/** The sources an answer cites at most: shape C's five (D9), corpus_answer's the same. */
export const ANSWER_SOURCES = 5;

/**
 * Shape C's answer text: a books sum when the question was one (D34), else the extractive answer
 * of the chosen chunks, what is read of each remembered in `remembered` (the query service's).
 */
export function answerText(
  outcome: QueryOutcome,
  chosen: CitedRanked[],
  stages?: QuestionStageTimes,
  remembered?: ChunkStatements,
): string {
  // A books answer cites its transactions as the first results: only while they are kept (a tool's kinds may drop them).
  const cited = outcome.answerFacts?.cited ?? 0;
  const citesKept = chosen.length >= cited && chosen.slice(0, cited).every((x, i) => x.c === outcome.chunks[i]);
  if (outcome.answer !== undefined && citesKept) return outcome.answer;
  return timed(stages, "answer", () =>
    wordsRemembered(() =>
      extractiveAnswer(
        outcome.plan,
        chosen.map(({ c }) =>
          answerSourceOf(
            c,
            meetsAmountConditions(outcome.plan, c.record),
            datedAsAsked(outcome.plan, c.record, recordKey(c.owner, c.connectorId, c.record.id)) === false,
          ),
        ),
        remembered,
      ),
    ),
  );
}

const Nullable = <T extends Parameters<typeof Type.Union>[0][number]>(t: T) => Type.Union([t, Type.Null()]);

const Amount = Type.Object({
  value: Type.String({ description: "an exact decimal, as written in the source or summed (books)" }),
  unit: Nullable(Type.String({ description: "its currency or commodity (ISO code where the source says one)" })),
});

/** What an answer is: a books sum (D34), one or more statements of the sources (D9), or none found. */
export const ANSWER_KINDS = ["total", "balance", "largest", "smallest", "statement", "none"] as const;

export const TypedAnswer = Type.Object({
  question: Type.String(),
  answer: Type.String({ description: "the answer as POST /v1/query's shape C says it; [n] cites sources[n-1]" }),
  kind: Type.Union(
    ANSWER_KINDS.map((k) => Type.Literal(k)),
    {
      description:
        "total, balance, largest or smallest: summed over accounting books; statement: sentences of the sources; none: nothing answers",
    },
  ),
  value: Nullable(Type.String({ description: "the value asked: a sum, an amount, a date (YYYY-MM-DD) or a count" })),
  unit: Nullable(Type.String({ description: "the value's currency, commodity or unit" })),
  values: Type.Array(Amount, { description: "every commodity's sum (books: never mixed), or the amounts the statements give" }),
  period: Nullable(
    Type.Object({
      from: Nullable(Type.String({ description: "first day, YYYY-MM-DD" })),
      to: Nullable(Type.String({ description: "last day, YYYY-MM-DD (a balance: its day)" })),
      said: Type.String({ description: "as the answer says it" }),
    }),
  ),
  confidence: Type.Number({
    minimum: 0,
    maximum: 1,
    description: "how sure the answer is: the product of confidence_factors, each from 0 to 1",
  }),
  confidence_factors: Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 1 }), {
    description:
      "books: named (share of the question's naming words the book's accounts and payees hold), covers (1 when the book's dates cover the period, else 0.5), found (1 when transactions were summed, else 0.5); statements: kind (how much the best statement holds the kind of fact asked), rank (its source's ranking score over the first's, halved and raised by a half), words (the share of the question's words it holds, likewise)",
  }),
  statements: Type.Array(
    Type.Object({
      text: Type.String(),
      value: Nullable(Type.String()),
      unit: Nullable(Type.String()),
      source: Type.Integer({ minimum: 1, description: "n of the source it cites" }),
    }),
  ),
  transactions: Nullable(
    Type.Object({
      count: Type.Integer({ minimum: 0, description: "transactions summed" }),
      cited: Type.Array(Type.Integer({ minimum: 1 }), { description: "n of the sources citing the first few of them" }),
      listed: Type.Array(Type.Object({ date: Type.String(), amounts: Type.Array(Amount) }), {
        description: "largest or smallest: the transactions listed, in order",
      }),
    }),
  ),
  sources: Type.Array(
    Type.Object({
      n: Type.Integer({ minimum: 1 }),
      id: Type.String({ description: "the cited chunk's id, for fetch" }),
      url: Type.String({ description: "the citation's page (/d/<id>), opened only for its signed-in owner" }),
      sha256: Type.String({ description: "sha256 (hex) of the cited chunk's text, kept in the archive" }),
      title: Type.String(),
      connector: Type.String(),
      source_url: Type.String(),
    }),
  ),
  notes: Type.Array(Type.String()),
});
export type TypedAnswer = Static<typeof TypedAnswer>;

/** What the extractive answer says when nothing answers (retrieval/answer.ts). */
const NOTHING_ANSWERS = /^No connected source answers this question\.$/;

/** A statement of an extractive answer and the marker after it: "… text. [2]". */
const STATEMENT = /(.+?)\s\[(\d+)\](?=\s|$)/gsu;

/** Kinds of fact whose statement's value is read out of it. */
const VALUED = new Set(["amount", "date", "count"]);

const round = (n: number) => Math.round(n * 1000) / 1000;
const moneyText = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** The value of the kind asked in a statement: an amount with its currency, a day, a count. */
function statedValue(asks: string, text: string, source: CitedRanked | undefined): { value: string | null; unit: string | null } {
  if (!VALUED.has(asks)) return { value: null, unit: null };
  if (asks === "date") {
    const [first] = documentDates(text);
    return { value: first === undefined ? null : new Date(first).toISOString().slice(0, 10), unit: null };
  }
  if (asks === "count") {
    const n = /(?<![\d.,])\d{1,9}(?![\d.,]\d)/.exec(text);
    return { value: n ? n[0] : null, unit: null };
  }
  const record = source?.c.record;
  const amounts = amountsWithCurrency({
    id: "",
    title: "",
    content: text,
    source_url: "",
    date: null,
    type: record?.type ?? "file",
    path: "",
    metadata: {},
  });
  const amount = amounts.find((a) => a.total) ?? amounts.find((a) => a.currency) ?? amounts[0];
  if (!amount) return { value: null, unit: null };
  // Without a currency of its own, the one the record writes that amount in.
  const currency =
    amount.currency ?? (record ? amountsWithCurrency(record).find((a) => a.value === amount.value && a.currency)?.currency : undefined);
  return { value: moneyText(amount.value), unit: currency ?? null };
}

const sourcesOf = (chosen: CitedRanked[], publicUrl: string): TypedAnswer["sources"] =>
  chosen.map(({ c, chunkId, sha256 }, i) => ({
    n: i + 1,
    id: `${ID_PREFIX.chunk}${chunkId}`,
    url: documentPageUrl(publicUrl, `${ID_PREFIX.chunk}${chunkId}`),
    sha256,
    title: c.record.title,
    connector: c.connectorId,
    source_url: c.record.source_url,
  }));

function booksTyped(
  facts: BooksFacts,
  base: Omit<
    TypedAnswer,
    "kind" | "value" | "unit" | "values" | "period" | "confidence" | "confidence_factors" | "statements" | "transactions"
  >,
): TypedAnswer {
  const values = facts.totals.map((t) => ({ value: t.amount, unit: t.commodity || null }));
  const listed = facts.listed.map((l) => ({
    date: l.date,
    amounts: l.amounts.map((a) => ({ value: a.amount, unit: a.commodity || null })),
  }));
  // The largest (smallest) asks for a transaction: its amount is the value; the others ask the sum.
  const first = facts.transactions === 0 ? undefined : (listed[0]?.amounts[0] ?? values[0]);
  const factors = {
    named: round(facts.asked ? facts.named / facts.asked : 0),
    covers: facts.covers ? 1 : 0.5,
    found: facts.transactions > 0 ? 1 : 0.5,
  };
  return {
    ...base,
    kind: facts.sum,
    value: first?.value ?? null,
    unit: first?.unit ?? null,
    values,
    period: { from: facts.period.from ?? null, to: facts.period.to ?? null, said: facts.period.said },
    confidence: round(factors.named * factors.covers * factors.found),
    confidence_factors: factors,
    statements: [],
    transactions: {
      count: facts.transactions,
      cited: Array.from({ length: Math.min(facts.cited, base.sources.length) }, (_, i) => i + 1),
      listed,
    },
  };
}

/**
 * Shape C's answer `text` (answerText) for `question` as data: for a books sum its facts; else
 * its statements, each read for the value of the kind the question asks, scored by how much the
 * best one holds that kind (retrieval/answer.ts kindFit), how its source ranked against the first
 * and how many of the question's words it holds.
 */
export function typedAnswer(question: string, text: string, outcome: QueryOutcome, chosen: CitedRanked[], publicUrl: string): TypedAnswer {
  const base = { question, answer: text, sources: sourcesOf(chosen, publicUrl), notes: outcome.notes };
  if (outcome.answer !== undefined && outcome.answerFacts && text === outcome.answer) return booksTyped(outcome.answerFacts, base);
  const plan = outcome.plan;
  // The time the question asks about (its end exclusive in the plan: the last day is the one before).
  const day = (d: Date | undefined) => d?.toISOString().slice(0, 10);
  const period =
    plan.dateFrom || plan.dateTo
      ? {
          from: day(plan.dateFrom) ?? null,
          to: day(plan.dateTo && new Date(plan.dateTo.getTime() - 1)) ?? null,
          said: saidPeriod({ from: day(plan.dateFrom), to: day(plan.dateTo) }),
        }
      : null;
  const statements = NOTHING_ANSWERS.test(text.trim())
    ? []
    : [...text.matchAll(STATEMENT)].flatMap((m) => {
        const source = Number(m[2]);
        if (!(source >= 1 && source <= chosen.length)) return [];
        const said = m[1]!.trim();
        return [{ text: said, ...statedValue(plan.asks, said, chosen[source - 1]), source }];
      });
  const none = statements.length === 0;
  const want = new Set(plan.terms.flatMap(words));
  const best = Math.max(0, ...chosen.map(({ c }) => c.score));
  // Each statement's factors; the answer is as sure as its surest statement.
  const scored = statements.map((s) => {
    const held = new Set(words(s.text));
    const share = want.size ? [...want].filter((w) => held.has(w)).length / want.size : 0;
    const rank = best > 0 ? Math.max(0, chosen[s.source - 1]!.c.score) / best : 0;
    return {
      kind: round(VALUED.has(plan.asks) || ["place", "person", "item"].includes(plan.asks) ? kindFit(plan, s.text) : 1),
      rank: round(0.5 + 0.5 * rank),
      words: round(0.5 + 0.5 * share),
    };
  });
  const product = (f: { kind: number; rank: number; words: number }) => f.kind * f.rank * f.words;
  const surest = scored.reduce<(typeof scored)[number] | undefined>((a, f) => (!a || product(f) > product(a) ? f : a), undefined);
  const valued = statements.filter((s) => s.value !== null);
  return {
    ...base,
    kind: none ? "none" : "statement",
    value: valued[0]?.value ?? null,
    unit: valued[0]?.unit ?? null,
    values: plan.asks === "amount" ? valued.map((s) => ({ value: s.value!, unit: s.unit })) : [],
    period,
    confidence: surest ? round(product(surest)) : 0,
    confidence_factors: surest ?? { kind: 0, rank: 0, words: 0 },
    statements,
    transactions: null,
  };
}
