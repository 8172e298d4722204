// What a question is told of a connector still indexing (issue 14): while its files are read,
// how many of how many; once read, how many chunks have their vectors.
import { expect, test } from "bun:test";
import type { ActiveConnector } from "../../src/connectors/registry";
import type { Connector, IndexProgress } from "../../src/connectors/types";
import { planQuery } from "../../src/retrieval/plan";
import { type Scoring, scoreCandidates } from "../../src/retrieval/score";
import type { Question } from "../../src/retrieval/types";

function notesFor(progress: IndexProgress): string[] {
  const connector = { progress: () => progress } as unknown as Connector;
  const a: ActiveConnector = { id: "mail", kind: "maildir", label: "Mail", owner: "user", datesAreFileTimes: false, connector };
  const q = {
    options: { user: "alice", question: "pipeline", perConnector: 10 },
    plan: planQuery("pipeline"),
    terms: ["pipeline"],
  } as unknown as Question;
  return scoreCandidates(q, [a], [{ status: "fulfilled", value: { a, hits: [] } }], {} as Scoring).notes;
}

test("while files are read: the files read of those to read", () => {
  expect(notesFor({ total: 40, embedded: 0, reading: { done: 412, total: 1702 } })).toEqual([
    "mail: indexing, 412 of 1702 files read; answering from what is read",
  ]);
});

test("once read, while chunks embed: the chunks embedded; once embedded, nothing", () => {
  expect(notesFor({ total: 10_053, embedded: 233 })).toEqual([
    "mail: embedding, 233 of 10053 chunks embedded; answering from what is ready",
  ]);
  expect(notesFor({ total: 10_053, embedded: 10_053 })).toEqual([]);
});
