// Issue 15: a date range narrows a local index's ranking in SQL. Dates used to be applied after
// the best rows of all dates were read and opened, so the records in range that a date-narrowed
// question asks for were lost behind better matches of other years.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { mailRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const mail = (id: string, date: string, content: string) => mailRecord(id, date, content);

/** A unit vector along the first axis, turned towards the second by `turn` (0: the question's own). */
function vector(turn: number): Float32Array {
  const v = new Float32Array(EMBEDDING_DIM);
  v[0] = Math.cos(turn);
  v[1] = Math.sin(turn);
  return v;
}

async function indexOf200OtherYearsAnd2InRange() {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const index = new EmbeddedIndex(db, "alice/mail", indexKeysFor(keys, "alice", "mail", true), () => ["one chunk"]);
  // 200 mails of 2020 that match the words and the meaning better than the two of June 2001.
  for (let i = 0; i < 200; i++)
    await index.put({ source: `2020-${i}`, size: 1, mtime: 1 }, [
      mail(`late-${i}`, "2020-03-01T10:00:00.000Z", "harbour audit harbour audit"),
    ]);
  const filler = "the quarterly figures were discussed at length by the whole team ".repeat(20);
  await index.put({ source: "2001-a", size: 1, mtime: 1 }, [mail("june-a", "2001-06-12T10:00:00.000Z", `${filler} harbour audit`)]);
  await index.put({ source: "2001-b", size: 1, mtime: 1 }, [mail("june-b", "2001-06-20T10:00:00.000Z", `${filler} audit of the harbour`)]);
  const pending = index.pendingChunks(1000);
  index.setVectors(
    pending,
    pending.map((_, i) => vector(i < 200 ? 0 : 0.6)),
  );
  return index;
}

const june2001 = { dateFrom: new Date("2001-06-01T00:00:00Z"), dateTo: new Date("2001-07-01T00:00:00Z") };

test("a date range is a condition of the word search and of the nearest-neighbour search: the records in range are found", async () => {
  const index = await indexOf200OtherYearsAnd2InRange();
  const hits = index.rankHere({ terms: ["harbour", "audit"], phrases: [], limit: 5, vector: vector(0), ...june2001 });
  expect(hits.map((h) => h.record.id).sort()).toEqual(["june-a", "june-b"]);
  for (const h of hits) {
    expect(h.lexical).toBeGreaterThan(0);
    expect(h.dense).toBeCloseTo(Math.cos(0.6), 4);
  }
  // By meaning alone (no word of theirs asked), the same two.
  const byMeaning = index.rankHere({ terms: ["zebra"], phrases: [], limit: 5, vector: vector(0), ...june2001 });
  expect(byMeaning.map((h) => h.record.id).sort()).toEqual(["june-a", "june-b"]);
});

test("without a range the better matches of other years come first, each with both scores", async () => {
  const index = await indexOf200OtherYearsAnd2InRange();
  const hits = index.rankHere({ terms: ["harbour", "audit"], phrases: [], limit: 5, vector: vector(0) });
  expect(hits.length).toBeGreaterThanOrEqual(10);
  expect(hits.every((h) => h.record.id.startsWith("late-"))).toBe(true);
  for (const h of hits) expect(h.dense).toBeCloseTo(1, 4);
  expect(hits.filter((h) => h.lexical !== undefined).length).toBe(10);
});

test("another owner's records in the same tables are never found, with or without dates, by words or by meaning", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const indexOf = (user: string) => new EmbeddedIndex(db, `${user}/mail`, indexKeysFor(keys, user, "mail", true), () => ["one chunk"]);
  const alice = indexOf("alice");
  const bob = indexOf("bob");
  // Alice's mails match better than Bob's on every count, and there are more of them.
  for (let i = 0; i < 50; i++)
    await alice.put({ source: `a-${i}`, size: 1, mtime: 1 }, [
      mail(`alice-${i}`, "2001-06-12T10:00:00.000Z", "harbour audit harbour audit"),
    ]);
  await bob.put({ source: "b", size: 1, mtime: 1 }, [
    mail("bob-1", "2001-06-15T10:00:00.000Z", `${"minutes of the meeting ".repeat(30)} harbour audit`),
  ]);
  for (const [index, turn] of [
    [alice, 0],
    [bob, 0.6],
  ] as const) {
    const pending = index.pendingChunks(1000);
    index.setVectors(
      pending,
      pending.map(() => vector(turn)),
    );
  }
  for (const dates of [{}, june2001]) {
    for (const terms of [["harbour", "audit"], ["zebra"]]) {
      const hits = bob.rankHere({ terms, phrases: [], limit: 5, vector: vector(0), ...dates });
      expect(hits.map((h) => h.record.id)).toEqual(["bob-1"]);
    }
    expect(bob.search({ terms: ["harbour"], phrases: [], limit: 5, ...dates }).map((r) => r.id)).toEqual(["bob-1"]);
  }
});
