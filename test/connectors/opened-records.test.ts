// A local index's records are opened (AES-GCM, then JSON) once per version of their row, not for
// every question they are a candidate of (9-11% of a question's serving-thread time, measured),
// and the copy shared between questions cannot be changed by one of them.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { RetrievalRequest } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { countingOpens, mailRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const mail = (id: string, content: string) => mailRecord(id, "2020-03-01T10:00:00.000Z", content, { from: "a@example.com" });

/** An index of 30 mails whose keys count the records opened. */
async function countedIndex() {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const { keys, opened } = countingOpens(indexKeysFor(new UserKeys(db, randomBytes(32)), "alice", "mail", true));
  const index = new EmbeddedIndex(db, "alice/mail", keys);
  for (let i = 0; i < 30; i++)
    await index.put({ source: `m${i}`, size: 1, mtime: 1 }, [mail(`m${i}`, `harbour audit ${"report ".repeat(i % 7)} ${i}`)]);
  return { index, opened };
}

const asked: RetrievalRequest = { terms: ["harbour", "report"], phrases: [], limit: 10 };

test("each record is opened once per version of its row; a record written again is opened anew", async () => {
  const { index, opened } = await countedIndex();
  const first = index.rankHere(asked);
  expect(first.length).toBeGreaterThan(10);
  const once = opened();
  expect(once).toBe(first.length);
  const again = index.rankHere(asked);
  expect(again.map((h) => h.record.id)).toEqual(first.map((h) => h.record.id));
  expect(opened()).toBe(once);
  // Its file changed: the new version at once, opened.
  const top = again[0]!.record.id;
  await index.put({ source: top, size: 2, mtime: 2 }, [mail(top, "harbour report harbour report, revised")]);
  const revised = index.rankHere(asked).find((h) => h.record.id === top);
  expect(revised?.record.content).toBe("harbour report harbour report, revised");
  expect(opened()).toBe(once + 1);
});

test("attack: a record shared between questions cannot be changed by one of them", async () => {
  const { index } = await countedIndex();
  const [hit] = index.rankHere(asked);
  expect(() => {
    (hit!.record as { content: string }).content = "changed";
  }).toThrow();
  expect(() => {
    hit!.record.metadata.from = "changed";
  }).toThrow();
  expect(index.rankHere(asked)[0]!.record.content).toBe(hit!.record.content);
});

test("another index's row of the same number, or another database's, is not given from the memo", async () => {
  const a = await countedIndex();
  const b = await countedIndex();
  const fromA = a.index.rankHere(asked);
  const fromB = b.index.rankHere(asked);
  // Same rows, same numbers, other keys: each opened from its own database.
  expect(b.opened()).toBe(fromB.length);
  expect(fromB.map((h) => h.record.id).sort()).toEqual(fromA.map((h) => h.record.id).sort());
});

// The memo's bound, against 3 to 13 M characters of recipients: opened-records-bound.test.ts (integration).

test("a record's row is known unchanged by its sealing's nonce and tag, not by hashing all of it: a 1 MB record is checked as cheaply as a small one", async () => {
  const { index, opened } = await countedIndex();
  await index.put({ source: "big", size: 1, mtime: 1 }, [mail("big", `harbour report ${"cargo manifest line ".repeat(55_000)}`)]);
  const manifest: RetrievalRequest = { terms: ["harbour", "manifest"], phrases: [], limit: 40 };
  const first = index.rankHere(manifest);
  expect(first.some((h) => h.record.id === "big")).toBe(true);
  const once = opened();
  const hashed: number[] = [];
  const wyhash = Bun.hash.wyhash;
  Bun.hash.wyhash = ((...args: Parameters<typeof wyhash>) => {
    const [data] = args;
    hashed.push(typeof data === "string" ? data.length : data.byteLength);
    return wyhash(...args);
  }) as typeof wyhash;
  try {
    index.rankHere(manifest);
  } finally {
    Bun.hash.wyhash = wyhash;
  }
  expect(opened()).toBe(once);
  expect(hashed.length).toBe(first.length);
  expect(Math.max(...hashed)).toBeLessThan(64);
});
