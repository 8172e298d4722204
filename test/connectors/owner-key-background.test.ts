// Background work on a shared keys room re-checks its owner's key (D33, D25): two nodes, each
// with its own embedded database and its own memory, the users' data keys and the connectors'
// rows in one PostgreSQL. Owed work is resumed by a node that never met the user (it reads their
// key first: without it, opening the connector's config failed and nothing was resumed); a
// deletion on node A stops node B's indexing of the user's connector at its next batch or sync,
// writing nothing after, though B still held the key in memory.

import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type postgres from "postgres";
import { IndexedFolderConnector, OWNER_RECHECK_MS } from "../../src/connectors/indexed-source";
import { EmbeddedIndex, indexKeysFor, indexOwesWork } from "../../src/connectors/local-index";
import { ConnectorRegistry } from "../../src/connectors/registry";
import { PostgresConnectorRecords } from "../../src/connectors/rows-postgres";
import type { SourceRecord } from "../../src/connectors/types";
import { UserKeys } from "../../src/crypto/user-keys";
import { PostgresUserKeyRecords } from "../../src/crypto/user-keys-postgres";
import { MIGRATIONS } from "../../src/migrations";
import { embeddedChunks } from "../../src/retrieval/chunk";
import { tempDir, testApp } from "../helpers";
import { migratedDatabase } from "../support/migrated";
import { type SharedDatabase, sharedDatabase } from "../support/shared-database";
import { vectorsWithoutModel } from "../support/vectors-without-model";
import { soon } from "../support/wait";

setDefaultTimeout(60_000);

let db: SharedDatabase;
let t: Awaited<ReturnType<typeof testApp>>;
let roots: string;
/** Every node's master key (copied to each, as the README says). */
const masterKey = randomBytes(32);
/** Background embedding passes once this resolves (a test holds a batch there). */
const model = { hold: Promise.resolve(), entered: 0 };
const nodes: ConnectorRegistry[] = [];

interface Node {
  keys: UserKeys;
  connectors: ConnectorRegistry;
  db: Database;
}

/** A node: its own embedded database and memory, the keys and connectors rooms on the shared PostgreSQL through `sql`. */
function node(sql: postgres.Sql): Node {
  const keys = new UserKeys(new PostgresUserKeyRecords(sql), masterKey);
  const own = migratedDatabase(MIGRATIONS);
  const embeddings = t.services.embeddings;
  const connectors = new ConnectorRegistry({
    db: own,
    keys,
    config: t.config,
    log: t.log,
    embeddings,
    chunker: (record) => embeddedChunks(record, embeddings.tokenizer),
    records: new PostgresConnectorRecords(sql),
  });
  nodes.push(connectors);
  return { keys, connectors, db: own };
}

/** A folder of `n` short notes under the user's root. */
function notes(user: string, n: number): string {
  const folder = join(roots, user, "notes");
  mkdirSync(folder, { recursive: true });
  for (let i = 0; i < n; i++) writeFileSync(join(folder, `note-${i}.txt`), `Note ${i}: the boiler in flat ${i} is serviced in May.`);
  return folder;
}

const count = (on: Database, sql: string, owner: string) => on.query<{ n: number }, [string]>(sql).get(owner)!.n;
const embedded = (on: Database, owner: string) =>
  count(on, "SELECT count(*) AS n FROM connector_chunks WHERE owner = ? AND embedded = 1", owner);
const docs = (on: Database, owner: string) => count(on, "SELECT count(*) AS n FROM connector_docs WHERE owner = ?", owner);

beforeAll(async () => {
  db = await sharedDatabase();
  roots = tempDir("corpus-owner-key-");
  t = await testApp({ CORPUS_CONNECTOR_ROOTS: join(roots, "{user}") });
  // No model: a constant vector per text (what is written when, not meaning).
  vectorsWithoutModel(t.services.embeddings, async () => {
    model.entered++;
    await model.hold;
  });
});

afterAll(async () => {
  await Promise.all(nodes.map((c) => c.close()));
  await t?.services.close();
  await db?.drop();
});

describe("background work reads its owner's key again on a shared keys room", () => {
  test("owed work is resumed by a node that never met the user", async () => {
    const user = `resumed-${randomBytes(3).toString("hex")}`;
    const a = node(db.sql);
    await a.keys.ready(user, { create: true });
    await a.connectors.add(user, { id: "notes", kind: "files", config: { path: notes(user, 3) } } as never);
    await a.connectors.close();

    // Node B starts: its index of the connector owes its first scan; B holds nothing of the user.
    const b = node(db.client());
    expect(await b.connectors.resumeOwed()).toBe(1);
    const key = `${user}/notes`;
    await soon("B indexed and embedded the connector", () => !indexOwesWork(b.db, key));
    expect(docs(b.db, key)).toBe(3);
    expect(embedded(b.db, key)).toBe(3);
    expect(t.logs.records().some((r) => r.message === "owed connector work not resumed")).toBe(false);
  });

  test("a deletion on A stops B's embedding at its next batch and B's next sync, writing nothing after", async () => {
    const user = `deleted-${randomBytes(3).toString("hex")}`;
    const a = node(db.sql);
    const b = node(db.client());
    await a.keys.ready(user, { create: true });
    // The user's request lands on B: their key is in B's memory, and B indexes their connector.
    await b.keys.ready(user);
    const { promise: held, resolve: release } = Promise.withResolvers<void>();
    model.hold = held;
    model.entered = 0;
    const folder = notes(user, 40);
    try {
      await b.connectors.add(user, { id: "notes", kind: "files", config: { path: folder } } as never);
      const connector = (await b.connectors.active(user))[0]!.connector as IndexedFolderConnector;
      await connector.sync();
      const key = `${user}/notes`;
      expect(docs(b.db, key)).toBe(40);
      // B's first batch (of three) is with the model when A deletes the user.
      await soon("B's first batch embedding", () => model.entered === 1);
      await a.keys.destroy(user);
      await a.connectors.records.deleteUser(user);
      release();
      await connector.embedPending();
      expect(embedded(b.db, key)).toBe(0);
      expect(model.entered).toBe(1);

      // B's next sync (a rescan) reads nothing of the user's, though a file was added.
      writeFileSync(join(folder, "late.txt"), "A late note about the boiler.");
      await connector.sync();
      expect(docs(b.db, key)).toBe(40);
      // Nothing is wrong with the folder: no error is shown for it.
      expect((await connector.health()).status).not.toBe("error");
    } finally {
      release();
      model.hold = Promise.resolve();
    }
  });

  test("a sync reads the key again between files at most every OWNER_RECHECK_MS of its clock, and stops at the first read after a deletion", async () => {
    const user = `between-${randomBytes(3).toString("hex")}`;
    const a = node(db.sql);
    const b = node(db.client());
    await a.keys.ready(user, { create: true });
    await b.keys.ready(user);
    const files = ["one", "two", "three", "four"];
    const reads: string[] = [];
    const { promise: twoHeld, resolve: releaseTwo } = Promise.withResolvers<void>();
    const source = {
      scan: () => files.map((f) => ({ source: f, size: 10, mtime: 1 })),
      read: async (e: { source: string }) => {
        reads.push(e.source);
        if (e.source === "two") await twoHeld;
        const record: SourceRecord = {
          id: e.source,
          title: e.source,
          content: `Note ${e.source} about the boiler.`,
          source_url: `file:///${e.source}`,
          date: null,
          type: "file",
          path: e.source,
          metadata: {},
        };
        return [record];
      },
    };
    let now = 0;
    let checks = 0;
    const key = `${user}/notes`;
    const index = new EmbeddedIndex(b.db, key, indexKeysFor(b.keys, user, "notes", false), (r) => [r.content]);
    const connector = new IndexedFolderConnector("files", tempDir("corpus-owner-key-folder-"), index, source, {
      now: () => now,
      ownerCheck: () => {
        checks++;
        return b.keys.recheck(user);
      },
    });
    try {
      await soon("the second file being read", () => reads.length === 2);
      // One read of the key for the sync's start and the files so far: not one a file.
      expect(checks).toBe(1);
      expect(docs(b.db, key)).toBe(1);
      // A deletes the user while B reads the second file; B's clock passes the period.
      await a.keys.destroy(user);
      now += OWNER_RECHECK_MS;
      releaseTwo();
      await connector.sync();
      // The file in hand is written (its check came before the deletion); the next is never read.
      expect(reads).toEqual(["one", "two"]);
      expect(checks).toBe(2);
      expect(docs(b.db, key)).toBe(2);
      expect((await connector.health()).status).not.toBe("error");
    } finally {
      releaseTwo();
      await connector.close();
    }
  });
});
