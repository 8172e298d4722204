// Attack: a quoted phrase beside a general word ('emails about "price caps"'). A source that
// matches substrings (SQL, IMAP) returns every record holding any needle, the phrase or the
// word; its records are then ranked by BM25 over the planned *terms* only, and a phrase's words
// are not terms. So the record that holds the phrase asked for scores 0 on words, and every
// record that merely says "emails" ranks above it: with a few per connector, it is not shown.
import { expect, test } from "bun:test";
import type { ActiveConnector } from "../../src/connectors/registry";
import type { Connector, SourceRecord } from "../../src/connectors/types";
import { fuse } from "../../src/retrieval/fuse";
import { planQuery } from "../../src/retrieval/plan";
import { type Scoring, scoreCandidates } from "../../src/retrieval/score";
import type { Question } from "../../src/retrieval/types";
import { mailRecord } from "../support/mail-record";

const mail = mailRecord;

test("the record holding the quoted phrase ranks above records holding only the other word", () => {
  const question = 'emails about "price caps"';
  const plan = planQuery(question);
  expect(plan.phrases).toEqual(["price caps"]);
  // As IMAP's SEARCH (OR TEXT "price caps" TEXT "emails") returns them, records first seen.
  const hits = [
    mail("1", "Weekly note", "Too many emails this week, please read the emails below."),
    mail("2", "Inbox", "Your emails have been archived."),
    mail("3", "FERC order", "FERC set price caps on wholesale power in California."),
    mail("4", "Re: lunch", "Thanks for the emails about lunch."),
  ];
  const connector = {} as Connector;
  const a: ActiveConnector = { id: "imap", kind: "imap", label: "Mail", owner: "user", datesAreFileTimes: false, connector };
  const q = {
    options: { user: "alice", question, perConnector: 3 },
    plan,
    terms: plan.terms,
    vector: new Float32Array(384),
  } as unknown as Question;
  const scoring = {
    // Seen for the first time: no vectors yet (the first question of a record from IMAP or SQL).
    embeddings: { cachedFor: (_: string, __: string, texts: string[]) => texts.map(() => undefined), embed: async () => [] },
    chunksOf: (_o: string, _c: string, r: SourceRecord) => [r.content],
  } as unknown as Scoring;
  const { pool } = scoreCandidates(q, [a], [{ status: "fulfilled", value: { a, hits: hits.map((record) => ({ record })) } }], scoring);
  const ranked = fuse(pool, plan).map((c) => c.record.id);
  expect(ranked[0]).toBe("3");
});
