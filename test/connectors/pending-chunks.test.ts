// Issue 14: the chunks a connector still owes a vector are cut from their record on the request
// thread. A long record (up to 64 chunks) used to be cut again for every batch of 16 it spanned,
// a third of that thread's time while the Enron maildir embedded; a batch now always takes the
// rest of its last record, so each record is cut once per embedding run. Since issue 35 (D31) a
// chunk's text is stored with it, as the reading worker cut it: only chunks stored before are cut.
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, forgetChunkVectors, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { linesRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const record = linesRecord;

test("a batch of pending chunks never splits a record: in order, none cut again, and the next batch goes on from there", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const cuts = new Map<string, number>();
  const index = new EmbeddedIndex(db, "alice/docs", indexKeysFor(keys, "alice", "docs", true), (r) => {
    cuts.set(r.id, (cuts.get(r.id) ?? 0) + 1);
    return r.content.split("\n");
  });
  await index.put({ source: "a.txt", size: 1, mtime: 1 }, [record("short", 3), record("long", 40)]);
  await index.put({ source: "b.txt", size: 1, mtime: 1 }, [record("after", 5)]);
  cuts.clear();

  const first = index.pendingChunks(16);
  // 3 of "short", then all 40 of "long" (not 13 of them): 43 chunks, each record cut once.
  expect(first.map((c) => c.text)).toEqual([
    ...Array.from({ length: 3 }, (_, i) => `short part ${i}`),
    ...Array.from({ length: 40 }, (_, i) => `long part ${i}`),
  ]);
  // Cut when they were stored, and remembered (index-chunks-once.test.ts): not cut again here.
  expect(Object.fromEntries(cuts)).toEqual({});

  index.setVectors(
    first,
    first.map(() => new Float32Array(EMBEDDING_DIM).fill(0.05)),
  );
  cuts.clear();
  const second = index.pendingChunks(16);
  expect(second.map((c) => c.text)).toEqual(Array.from({ length: 5 }, (_, i) => `after part ${i}`));
  expect(Object.fromEntries(cuts)).toEqual({});
  expect(index.progress()).toEqual({ total: 48, embedded: 43 });
});

test("a batch that ends exactly at a record's end takes nothing of the next", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const index = new EmbeddedIndex(db, "alice/docs", indexKeysFor(keys, "alice", "docs", true), (r) => r.content.split("\n"));
  await index.put({ source: "a.txt", size: 1, mtime: 1 }, [record("one", 4), record("two", 4)]);
  expect(index.pendingChunks(4).map((c) => c.text)).toEqual(Array.from({ length: 4 }, (_, i) => `one part ${i}`));
});

test("chunks keep their texts: embedded again after a model change without cutting; stored before their texts were (connectors-011), cut once a record", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  let cuts = 0;
  const index = new EmbeddedIndex(db, "alice/docs", indexKeysFor(keys, "alice", "docs", true), (r) => {
    cuts++;
    return r.content.split("\n");
  });
  await index.put({ source: "a.txt", size: 1, mtime: 1 }, [record("one", 3), record("two", 2)]);
  const texts = [...Array.from({ length: 3 }, (_, i) => `one part ${i}`), ...Array.from({ length: 2 }, (_, i) => `two part ${i}`)];
  const first = index.pendingChunks(16);
  index.setVectors(
    first,
    first.map(() => new Float32Array(EMBEDDING_DIM).fill(0.05)),
  );
  // Another model made the vectors (embedding/service.ts adoptModel): all owed again, read from their texts.
  cuts = 0;
  forgetChunkVectors(db);
  expect(index.pendingChunks(16).map((c) => c.text)).toEqual(texts);
  expect(cuts).toBe(0);
  // As a data folder from before chunks kept their texts: each record cut once, its chunks in order.
  db.exec("UPDATE connector_chunks SET text = NULL");
  expect(index.pendingChunks(16).map((c) => c.text)).toEqual(texts);
  expect(cuts).toBe(2);
});
