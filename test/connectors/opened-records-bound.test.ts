// The opened-records memo (opened-records.test.ts) holds at most its bound: a record's metadata
// counts in it, and records holding more than the bound together are not all kept. Integration:
// 3 to 13 M characters of recipients sealed and opened, a size-bound proof (out of the unit
// suite, issue 35).
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { RetrievalRequest } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { countingOpens, mailRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const mail = (id: string, content: string) => mailRecord(id, "2020-03-01T10:00:00.000Z", content, { from: "a@example.com" });

/** An index of `n` mails of few words, each addressed to `toChars` characters of recipients, whose keys count the records opened. */
async function widelyAddressed(n: number, toChars: number) {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const { keys, opened } = countingOpens(indexKeysFor(new UserKeys(db, randomBytes(32)), "alice", "mail", true));
  const index = new EmbeddedIndex(db, "alice/mail", keys);
  const to = "x@example.com, ".repeat(Math.ceil(toChars / 15)).slice(0, toChars);
  for (let i = 0; i < n; i++)
    await index.put({ source: `w${i}`, size: 1, mtime: 1 }, [
      { ...mail(`w${i}`, `lighthouse ledger ${i}`), metadata: { from: "a@example.com", to } },
    ]);
  return { index, opened };
}

const lighthouse: RetrievalRequest = { terms: ["lighthouse"], phrases: [], limit: 20 };

test("attack: a record's metadata counts in the opened-records bound (one over a quarter of it is not kept)", async () => {
  // A mail's To header is as long as its sender makes it: 3.2 M characters, over a quarter of the bound.
  const { index, opened } = await widelyAddressed(1, 3_200_000);
  expect(index.rankHere(lighthouse)).toHaveLength(1);
  const once = opened();
  expect(index.rankHere(lighthouse)).toHaveLength(1);
  expect(opened()).toBe(once + 1);
});

test("attack: records whose metadata holds more than the bound are not all kept", async () => {
  // 13 mails of 1 M characters of recipients each: 13 M, over the 12 M the memo keeps.
  const { index, opened } = await widelyAddressed(13, 1_000_000);
  expect(index.rankHere(lighthouse)).toHaveLength(13);
  const once = opened();
  expect(index.rankHere(lighthouse)).toHaveLength(13);
  expect(opened()).toBeGreaterThan(once);
});
