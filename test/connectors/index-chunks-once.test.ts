// A record's chunks are cut once per version of its text, not once to count them when it is
// stored and again when they are embedded: both on the serving thread (D31, the largest part of
// its turns left while a folder is indexed in the hostile-sources bench). Counted.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { mailRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

test("attack: a record stored then embedded is cut into chunks once; written anew, once more; another index's record of the same id is its own", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const cut: string[] = [];
  const chunker = (r: SourceRecord) => {
    cut.push(r.id);
    return r.content.split(". ");
  };
  const index = new EmbeddedIndex(db, "alice/mail", indexKeysFor(keys, "alice", "mail", true), chunker);
  for (let i = 0; i < 3; i++)
    await index.put({ source: `m${i}`, size: 1, mtime: 1 }, [mailRecord(`m${i}`, "2020-03-01T10:00:00.000Z", `harbour ${i}. audit ${i}`)]);
  const pending = index.pendingChunks(100);
  expect(pending.map((c) => c.text)).toEqual(["harbour 0", "audit 0", "harbour 1", "audit 1", "harbour 2", "audit 2"]);
  // Was 6: each record cut when stored, and again for its chunks' texts.
  expect(cut).toEqual(["m0", "m1", "m2"]);
  await index.put({ source: "m1", size: 2, mtime: 2 }, [mailRecord("m1", "2020-03-01T10:00:00.000Z", "harbour 1. revised. audit 1")]);
  expect(index.pendingChunks(100).filter((c) => c.text.includes("revised"))).toHaveLength(1);
  expect(cut).toEqual(["m0", "m1", "m2", "m1"]);
  // Another connector's record with the same id and text is cut for its own index.
  const other = new EmbeddedIndex(db, "bob/mail", indexKeysFor(keys, "bob", "mail", true), chunker);
  await other.put({ source: "m0", size: 1, mtime: 1 }, [mailRecord("m0", "2020-03-01T10:00:00.000Z", "harbour 0. audit 0")]);
  expect(cut.at(-1)).toBe("m0");
  expect(cut).toHaveLength(5);
  db.close();
});
