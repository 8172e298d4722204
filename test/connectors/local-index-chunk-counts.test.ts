// An index's progress (its chunks, and those with a vector) is read from counts its writes keep
// (migration connectors-010), not counted again by every question (issue 36): whatever writes the
// chunks, the counts equal a fresh count, and reading them reads no chunk.
import type { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { dropIndex, EmbeddedIndex, forgetChunkVectors, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { linesRecord } from "../support/local-index";
import { migratedDatabase } from "../support/migrated";

const record = linesRecord;

const counted = (db: Database, owner: string) =>
  db
    .query<{ total: number; embedded: number | null }, [string]>(
      "SELECT count(*) AS total, sum(embedded) AS embedded FROM connector_chunks WHERE owner = ?",
    )
    .get(owner)!;
const expectCounted = (db: Database, index: EmbeddedIndex) => {
  const c = counted(db, index.owner);
  expect(index.progress()).toEqual({ total: c.total, embedded: c.embedded ?? 0 });
};
const vectors = (n: number) => Array.from({ length: n }, () => new Float32Array(EMBEDDING_DIM).fill(0.05));

function twoIndexes() {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const split = (r: SourceRecord) => r.content.split("\n");
  return {
    db,
    docs: new EmbeddedIndex(db, "alice/docs", indexKeysFor(keys, "alice", "docs", true), split),
    mail: new EmbeddedIndex(db, "bob/mail", indexKeysFor(keys, "bob", "mail", true), split),
  };
}

test("progress equals a fresh count through puts, vectors, replacements, removals, a model change and a dropped index", async () => {
  const { db, docs, mail } = twoIndexes();
  expect(docs.progress()).toEqual({ total: 0, embedded: 0 });
  await docs.put({ source: "a.txt", size: 1, mtime: 1 }, [record("a1", 3), record("a2", 7)]);
  await docs.put({ source: "b.txt", size: 1, mtime: 1 }, [record("b1", 5)]);
  await mail.put({ source: "m", size: 1, mtime: 1 }, [record("m1", 4)]);
  expect(docs.progress()).toEqual({ total: 15, embedded: 0 });
  expectCounted(db, mail);

  const owed = docs.pendingChunks(8);
  docs.setVectors(owed, vectors(owed.length));
  expect(docs.progress()).toEqual({ total: 15, embedded: owed.length });
  expectCounted(db, docs);

  // A source written again: its old chunks (some embedded) go, its new ones are owed.
  await docs.put({ source: "a.txt", size: 2, mtime: 2 }, [record("a1", 2)]);
  expectCounted(db, docs);
  expect(docs.progress().total).toBe(7);
  await docs.removeSource(docs.sourceKey("b.txt"));
  expectCounted(db, docs);
  expect(docs.progress()).toEqual({ total: 2, embedded: 0 });

  const rest = mail.pendingChunks(100);
  mail.setVectors(rest, vectors(rest.length));
  expect(mail.progress()).toEqual({ total: 4, embedded: 4 });
  forgetChunkVectors(db);
  expect(mail.progress()).toEqual({ total: 4, embedded: 0 });
  expectCounted(db, docs);

  dropIndex(db, "bob/mail");
  expect(mail.progress()).toEqual({ total: 0, embedded: 0 });
  expectCounted(db, docs);
});

test("an index's counts go with its last chunk: nothing of a removed index or deleted user is left in them (D13)", async () => {
  const { db, docs, mail } = twoIndexes();
  await docs.put({ source: "a.txt", size: 1, mtime: 1 }, [record("a1", 3)]);
  await mail.put({ source: "m", size: 1, mtime: 1 }, [record("m1", 2)]);
  await docs.removeSource(docs.sourceKey("a.txt"));
  dropIndex(db, "bob/mail");
  expect(db.query("SELECT owner FROM connector_chunk_counts").all()).toEqual([]);
});

test("reading progress reads no chunk row: one row of counts, however many chunks the index holds", async () => {
  const { db, docs } = twoIndexes();
  await docs.put({ source: "a.txt", size: 1, mtime: 1 }, [record("a1", 300)]);
  const asked: string[] = [];
  const query = db.query.bind(db);
  db.query = ((sql: string) => {
    asked.push(sql);
    return query(sql);
  }) as typeof db.query;
  expect(docs.progress()).toEqual({ total: 300, embedded: 0 });
  db.query = query;
  expect(asked.length).toBe(1);
  expect(asked.filter((sql) => /\bconnector_chunks\b/.test(sql))).toEqual([]);
});

test("an index written before the counts existed is counted once when the folder is upgraded", () => {
  const dir = tempDir();
  const upTo009 = indexMigrations.findIndex((m) => m.id === "connectors-009-chunk-numbers-once") + 1;
  const before = openDatabase(dir, [...cryptoMigrations, ...indexMigrations.slice(0, upTo009)]);
  const insert = before.query("INSERT INTO connector_chunks (doc, owner, ord, embedded) VALUES (?, ?, ?, ?)");
  for (let i = 0; i < 12; i++) insert.run(i, "alice/docs", 0, i % 3 === 0 ? 1 : 0);
  insert.run(99, "bob/mail", 0, 1);
  before.close();
  const after = openDatabase(dir, [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(after, randomBytes(32));
  const docs = new EmbeddedIndex(after, "alice/docs", indexKeysFor(keys, "alice", "docs", true));
  const mail = new EmbeddedIndex(after, "bob/mail", indexKeysFor(keys, "bob", "mail", true));
  expect(docs.progress()).toEqual({ total: 12, embedded: 4 });
  expect(mail.progress()).toEqual({ total: 1, embedded: 1 });
});
