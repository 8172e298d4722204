// The search worker's candidates checked against the rows shown now (rank.ts stillShown), on the
// serving thread for every question: by their row numbers, never by a scan of the owner's rows
// (issue 36: the Enron mail's 10,053 for ~80 candidates).
import { expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, indexKeysFor, indexMigrations } from "../../src/connectors/local-index";
import type { IndexContext } from "../../src/connectors/local-index/context";
import { openRecords } from "../../src/connectors/local-index/documents";
import { stillShown } from "../../src/connectors/local-index/rank";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { migratedDatabase } from "../support/migrated";

const record = (id: string): SourceRecord => ({
  id,
  title: id,
  content: `${id} text`,
  source_url: "",
  date: null,
  type: "file",
  path: id,
  metadata: {},
});

test("the worker's candidates still shown: by row number, a removed record's left out, another index's never taken", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const indexKeys = indexKeysFor(keys, "alice", "docs", true);
  const docs = new EmbeddedIndex(db, "alice/docs", indexKeys, (r) => [r.content]);
  const other = new EmbeddedIndex(db, "bob/mail", indexKeysFor(keys, "bob", "mail", true), (r) => [r.content]);
  await docs.put(
    { source: "a.txt", size: 1, mtime: 1 },
    Array.from({ length: 200 }, (_, i) => record(`a${i}`)),
  );
  await docs.put({ source: "b.txt", size: 1, mtime: 1 }, [record("b0")]);
  await other.put({ source: "m", size: 1, mtime: 1 }, [record("m0")]);
  const rowOf = (owner: string, source: string) =>
    db
      .query<{ doc: number }, [string, string]>("SELECT doc FROM connector_docs WHERE owner = ? AND source = ? ORDER BY doc")
      .all(owner, source)
      .map((r) => r.doc);
  const [a0, a1] = rowOf("alice/docs", docs.sourceKey("a.txt"));
  const [b0] = rowOf("alice/docs", docs.sourceKey("b.txt"));
  const [m0] = rowOf("bob/mail", other.sourceKey("m"));
  const read = {
    found: new Map([a0!, a1!, b0!, m0!].map((doc) => [doc, { lexical: 1 }])),
    sealed: new Map([a0!, a1!, b0!, m0!].map((doc) => [doc, new Uint8Array([doc])])),
  };
  // Removed after the worker read it.
  await docs.removeSource(docs.sourceKey("b.txt"));

  const ctx: IndexContext = { db, owner: "alice/docs", keys: indexKeys, chunker: () => [] };
  const asked: string[] = [];
  const query = db.query.bind(db);
  db.query = ((sql: string) => {
    asked.push(sql);
    return query(sql);
  }) as typeof db.query;
  const shown = stillShown(ctx, read);
  db.query = query;
  expect([...shown.found.keys()].sort((x, y) => x - y)).toEqual([a0!, a1!]);
  expect([...shown.sealed.keys()].sort((x, y) => x - y)).toEqual([a0!, a1!]);

  // Its statement finds the rows by their numbers: the owner's index (200 rows here) is not scanned.
  const lookup = asked.find((sql) => sql.includes("json_each"))!;
  const plan = db
    .query<{ detail: string }, Array<string | number>>(`EXPLAIN QUERY PLAN ${lookup}`)
    .all("[]", "alice/docs", 0, "", 0)
    .map((r) => r.detail);
  expect(plan.some((d) => /SEARCH d USING INTEGER PRIMARY KEY/.test(d))).toBe(true);
  expect(plan.some((d) => /connector_docs_source|SCAN d\b/.test(d))).toBe(false);
});

test("attack: a record removed after the worker read it is not shown after a later put (a row number is never given again)", async () => {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const indexKeys = indexKeysFor(keys, "alice", "docs", true);
  const docs = new EmbeddedIndex(db, "alice/docs", indexKeys, (r) => [r.content]);
  await docs.put({ source: "kept.txt", size: 1, mtime: 1 }, [record("kept")]);
  await docs.put({ source: "secret.txt", size: 1, mtime: 1 }, [record("secret")]);
  const rowsRead = () =>
    new Map(
      db
        .query<{ doc: number; record: Uint8Array }, [string]>("SELECT doc, record FROM connector_docs WHERE owner = ?")
        .all("alice/docs")
        .map((r) => [r.doc, r.record]),
    );
  // What the search worker read: both records, the newest row the secret's.
  const sealed = rowsRead();
  const read = { found: new Map([...sealed.keys()].map((doc) => [doc, { lexical: 1 }])), sealed };
  // Meanwhile the secret is removed and another file is put (its row the next free number).
  await docs.removeSource(docs.sourceKey("secret.txt"));
  await docs.put({ source: "new.txt", size: 1, mtime: 1 }, [record("new")]);

  const ctx: IndexContext = { db, owner: "alice/docs", keys: indexKeys, chunker: () => [] };
  const shown = stillShown(ctx, read);
  const titles = [...openRecords(ctx, shown.sealed).values()].map((r) => r.title);
  expect(titles).not.toContain("secret");
  expect(titles).toContain("kept");
});
