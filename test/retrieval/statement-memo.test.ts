// Choosing the chunk a document is cited by reads each chunk's statements once per version of the
// chunk (issue 36: ~45% of the serving thread's CPU per question was reading them again on every
// question), per user (D25), and cites the same chunk as reading them afresh; shape C's answer
// reads its sources so too, and answers as reading them afresh.
import { expect, test } from "bun:test";
import type { SourceRecord } from "../../src/connectors/types";
import { type AnswerSource, chunkFitFor, extractiveAnswer } from "../../src/retrieval/answer";
import { answerSourceOf } from "../../src/retrieval/answer-source";
import { cite } from "../../src/retrieval/cite";
import { planQuery } from "../../src/retrieval/plan";
import { recordKey } from "../../src/retrieval/record-memo";
import { ChunkStatements, SOURCES_KEPT_CHARS, STATEMENTS_KEPT_CHARS } from "../../src/retrieval/statement-memo";
import type { RankedChunk } from "../../src/retrieval/types";

const invoice = (id: string): SourceRecord => ({
  id,
  title: `${id}.pdf`,
  content: "",
  source_url: `file:///invoices/${id}.pdf`,
  date: null,
  type: "file",
  path: `${id}.pdf`,
  metadata: {},
});
const chunksOf = (id: string) => [
  `${id} Invoice Number 12345\nInvoice Date: August 3, 2014\nTotal for this invoice $4.11\nBill to: Acme Corp, 12 Main Street`,
  `All services are sold by ${id}, Inc.\nThis is not a VAT invoice.\nPhone: +1 206 555 0100\nPlease see the Account Activity page.`,
  `${id} support\nContact us at support@example.com\nWe ship within 7 days of the order.`,
];
const records = ["aws", "orlen", "coolblue"];

/** The chunk each record is cited by for `question`, as `owner`, with the statements remembered in `memo` or read afresh. */
function cited(question: string, memo?: ChunkStatements, owner = "alice", chunks = chunksOf): number[] {
  const kept = records.map(
    (id) => ({ owner, connectorId: "invoices", record: invoice(id), chunkIndex: 1, chunks: chunks(id) }) as unknown as RankedChunk,
  );
  cite(kept, planQuery(question).terms, () => [], chunkFitFor(planQuery(question), memo));
  return kept.map((c) => c.chunkIndex);
}

test("a second question on the same records reads no chunk again, and cites what reading afresh cites", () => {
  const memo = new ChunkStatements();
  const first = "How much did we pay for the invoice?";
  expect(cited(first, memo)).toEqual(cited(first));
  expect(memo.reads).toBe(records.length * 3);
  for (const question of ["When was the invoice issued?", "Within how many days do they ship?", "What is the invoice number?"]) {
    expect(cited(question, memo)).toEqual(cited(question));
    expect(memo.reads).toBe(records.length * 3);
  }
  // A question asking a contact reads the chunks as such once (its statements differ), then no more.
  expect(cited("What is the phone number of aws?", memo)).toEqual(cited("What is the phone number of aws?"));
  expect(memo.reads).toBe(records.length * 3 * 2);
  expect(cited("What is the phone number of orlen?", memo)).toEqual(cited("What is the phone number of orlen?"));
  expect(memo.reads).toBe(records.length * 3 * 2);
});

test("a chunk changed is read again, alone; another user's same records are read for them (D25)", () => {
  const memo = new ChunkStatements();
  const question = "How much did we pay for the invoice?";
  cited(question, memo);
  const changed = (id: string) => chunksOf(id).map((c, i) => (id === "aws" && i === 0 ? c.replace("$4.11", "$9.99") : c));
  expect(cited(question, memo, "alice", changed)).toEqual(cited(question, undefined, "alice", changed));
  expect(memo.reads).toBe(records.length * 3 + 1);
  cited(question, memo, "bob");
  expect(memo.reads).toBe(records.length * 3 * 2 + 1);
});

test("what the memo holds stays under STATEMENTS_KEPT_CHARS", () => {
  const memo = new ChunkStatements();
  const line = "word ".repeat(1_400);
  for (let i = 0; i < 400; i++) memo.of(`alice\u0000c\u0000r${i}\u00000`, `${line}${i}`, false);
  expect(memo.reads).toBe(400);
  expect(memo.chars).toBeGreaterThan(STATEMENTS_KEPT_CHARS / 2);
  expect(memo.chars).toBeLessThanOrEqual(STATEMENTS_KEPT_CHARS);
});

/** Shape C's sources: an invoice, a receipt and a mail, each of its record's key (recordKey) for `owner`. */
const answerSources = (owner = "alice", total = "$4.11"): AnswerSource[] => [
  {
    text: `Invoice Number 12345\nInvoice Date: August 3, 2014\nTotal for this invoice ${total}\nBill to: Acme Corp, 12 Main Street\nPhone: +1 206 555 0100`,
    type: "file",
    head: "aws.pdf\n\nInvoice Number 12345",
    score: 0.9,
    key: recordKey(owner, "invoices", "aws"),
  },
  {
    text: "ORLEN STACJA 4411\nPaliwo 40,00 PLN\nRAZEM PLN 163,43\nData: 2023-05-02",
    type: "file",
    head: "orlen.jpg\n\nORLEN STACJA 4411",
    score: 0.7,
    key: recordKey(owner, "receipts", "orlen"),
  },
  {
    text: "Steve,\nThe new dates for the meeting are:\nMarch 12 and 13 at the Houston office.\nThanks,\nSally",
    type: "email",
    head: "Meeting dates\nsally@example.com",
    score: 0.5,
    key: recordKey(owner, "mail", "m1"),
  },
];
const answerQuestions = [
  "How much did we pay for the invoice?",
  "When was the invoice issued?",
  "When is the meeting?",
  "What did we pay at Orlen?",
  "Who wrote about the meeting?",
];

test("shape C's answer reads each source once per version, and answers as reading afresh", () => {
  const memo = new ChunkStatements();
  for (const question of answerQuestions) {
    const plan = planQuery(question);
    expect(extractiveAnswer(plan, answerSources(), memo)).toBe(extractiveAnswer(plan, answerSources()));
    expect(memo.sourceReads).toBe(3);
  }
  // A contact asked reads them as such once, then no more.
  for (const question of ["What is the phone number of aws?", "What is the phone number on the invoice?"]) {
    expect(extractiveAnswer(planQuery(question), answerSources(), memo)).toBe(extractiveAnswer(planQuery(question), answerSources()));
    expect(memo.sourceReads).toBe(6);
  }
  expect(memo.reads).toBe(0);
});

test("a source changed (its text, head or type) is read again, alone; another user's are read for them (D25)", () => {
  const memo = new ChunkStatements();
  const plan = planQuery("How much did we pay for the invoice?");
  extractiveAnswer(plan, answerSources(), memo);
  const changed = answerSources("alice", "$9.99");
  expect(extractiveAnswer(plan, changed, memo)).toBe(extractiveAnswer(plan, answerSources("alice", "$9.99")));
  expect(extractiveAnswer(plan, changed, memo)).toContain("$9.99");
  expect(memo.sourceReads).toBe(4);
  const retitled = answerSources("alice", "$9.99").map((s, i) => (i === 1 ? { ...s, head: "another.jpg" } : s));
  extractiveAnswer(plan, retitled, memo);
  expect(memo.sourceReads).toBe(5);
  const retyped = retitled.map((s, i) => (i === 2 ? { ...s, type: "file" as const } : s));
  extractiveAnswer(plan, retyped, memo);
  expect(memo.sourceReads).toBe(6);
  extractiveAnswer(plan, answerSources("bob"), memo);
  expect(memo.sourceReads).toBe(9);
});

test("what the memo holds of shape C's sources stays under what it may keep", () => {
  // SOURCES_KEPT_CHARS is 16 M: filling it twice would read 4,600 sources; a quarter of it bounds the same way.
  const kept = SOURCES_KEPT_CHARS / 4;
  const memo = new ChunkStatements(kept);
  const line = "word ".repeat(1_400);
  for (let i = 0; i < 100; i++) memo.ofSource(recordKey("alice", "c", `r${i}`), { text: `${line}${i}`, type: "file" }, false);
  expect(memo.sourceReads).toBe(100);
  expect(memo.chars).toBeGreaterThan(kept / 2);
  expect(memo.chars).toBeLessThanOrEqual(kept);
});

test("a long record's windows around its cited chunks are each read once, not one evicting the other", () => {
  const memo = new ChunkStatements();
  const paragraphs = Array.from({ length: 40 }, (_, i) => `Paragraph ${i}: the shipment number ${1000 + i} left the warehouse on time.`);
  const content = paragraphs.join("\n").padEnd(30_000, " filler");
  const ranked = (chunk: string) =>
    ({
      owner: "alice",
      connectorId: "mail",
      record: { ...invoice("long"), type: "email", content, metadata: { from: "sally@example.com" } },
      chunkIndex: 0,
      text: chunk,
      score: 1,
    }) as unknown as RankedChunk;
  const first = answerSourceOf(ranked(paragraphs[0]!), true);
  const last = answerSourceOf(ranked(" filler filler filler filler filler filler"), true);
  expect(first.text).not.toBe(last.text);
  const plan = planQuery("When did the shipment leave the warehouse?");
  for (let i = 0; i < 3; i++)
    for (const source of [first, last]) expect(extractiveAnswer(plan, [source], memo)).toBe(extractiveAnswer(plan, [source]));
  expect(memo.sourceReads).toBe(2);
});

/** How many times `work` splits one of `texts` into lines. */
function linesSplit(texts: string[], work: () => void): number {
  const split = String.prototype.split;
  const wanted = new Set(texts);
  let count = 0;
  String.prototype.split = function (this: string, ...args: Parameters<typeof split>) {
    if ((args[0] as unknown) === "\n" && wanted.has(String(this))) count++;
    return split.apply(this, args);
  } as typeof split;
  try {
    work();
  } finally {
    String.prototype.split = split;
  }
  return count;
}

test("a remembered source or chunk is not split into lines again to tell whether it reads as a row's cells", () => {
  const memo = new ChunkStatements();
  const plan = planQuery("How much did we pay for the invoice?");
  const texts = answerSources().map((s) => s.text);
  expect(linesSplit(texts, () => extractiveAnswer(plan, answerSources(), memo))).toBeGreaterThan(0);
  expect(linesSplit(texts, () => extractiveAnswer(plan, answerSources(), memo))).toBe(0);
  const chunks = records.flatMap(chunksOf);
  cited("When was the invoice issued?", memo);
  expect(linesSplit(chunks, () => cited("When was the invoice issued?", memo))).toBe(0);
  // A row's cells are still its lines, remembered or read afresh.
  const row: AnswerSource = {
    text: "Name: Acme Corp\nCity: Oslo\nTotal: 12.00",
    type: "file",
    score: 1,
    key: recordKey("alice", "t", "r1"),
  };
  const asked = planQuery("What is the total of Acme Corp?");
  expect(extractiveAnswer(asked, [row], memo)).toBe(extractiveAnswer(asked, [row]));
  expect(extractiveAnswer(asked, [row], memo)).toContain("12.00");
});

test("a remembered reading's statements and sentences are read-only; its lists are plain arrays, which optimised loops read to their end without leaving their code", () => {
  const memo = new ChunkStatements();
  const reading = memo.of("invoices\u0000aws#1", chunksOf("aws")[0]!, false);
  expect(reading.statements.length).toBeGreaterThan(1);
  expect(reading.statements.every((s) => Object.isFrozen(s))).toBe(true);
  expect(reading.sentences.flat().every((s) => Object.isFrozen(s))).toBe(true);
  expect(Object.isFrozen(reading)).toBe(true);
  // A frozen array is stored apart in JavaScriptCore: each loop over one left its optimised code at its end.
  expect(Object.isFrozen(reading.statements)).toBe(false);
  expect(reading.sentences.some((ss) => Object.isFrozen(ss)) || Object.isFrozen(reading.sentences)).toBe(false);
});
