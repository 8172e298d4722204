// One suite, two stores (D33): the archive (D12) over the embedded database (SQLite with
// sqlite-vec) and over the shared PostgreSQL (pgvector, a real server on loopback): an answer
// written before it is sent and found by similarity within its question's time, vectors owed and
// resumed (D29), documents kept once per version (D36), a user's erase and count (D13). Then,
// PostgreSQL alone: a question archived through node A is found through node B; the erase inside
// a given transaction (the deletion's, D33) is undone with it; and a dump of the database spells
// no word of the answers, nor holds a vector as the model made it (D25).
import type { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { SqliteArchiveRows } from "../../src/archive/rows";
import { PostgresArchiveRows } from "../../src/archive/rows-postgres";
import { Archive, type ArchiveInput } from "../../src/archive/store";
import { UserKeys } from "../../src/crypto/user-keys";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { openDatabase } from "../../src/store/database";
import { ARCHIVE_VECTORS_TABLE, PostgresVectorStore } from "../../src/vectors/postgres";
import { tempDir } from "../helpers";
import { archivedChunk } from "../support/archived-chunk";
import { type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";
import { vectorsWithoutModel } from "../support/vectors-without-model";
import { until } from "../support/wait";

setDefaultTimeout(60_000);

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);
const DAY = 86_400_000;

/** A unit vector along axis `i` (with a little of axis i + 1, so that near ones are told apart). */
function unit(i: number, lean = 0): Float32Array {
  const v = new Float32Array(EMBEDDING_DIM);
  v[i] = Math.sqrt(1 - lean * lean);
  v[i + 1] = lean;
  return v;
}

/** A node's parts that are not the archive's room: its SQLite (users' data keys, the embedding cache), kept per process today. */
interface Node {
  db: Database;
  keys: UserKeys;
  embeddings: EmbeddingService;
}

function node(): Node {
  const dir = tempDir("corpus-archive-stores-");
  const db = openDatabase(dir, MIGRATIONS);
  const keys = new UserKeys(db, randomBytes(32));
  // No model: a background vector is a constant one (what is embedded and when, not meaning).
  const embeddings = new EmbeddingService(db, keys, dir, { threads: 1 });
  return { db, keys, embeddings };
}

interface Store {
  /** The archive of this store, its clock `clock.t`. */
  archive(clock: { t: number }): Archive;
  close(): Promise<void>;
}

const withDocument = (id: string, text: string, docId: string, recordKey: string): Omit<ArchiveInput, "owner"> => {
  const c = archivedChunk(id, "Lease", text);
  return {
    ...c,
    chunk: { ...c.chunk, doc_id: docId, sha256: "00" },
    document: {
      doc_id: docId,
      connector: "docs",
      connector_label: "Docs",
      title: "Lease",
      text,
      source_url: "file:///lease",
      type: "file",
      kind: "document",
      path: "lease.txt",
      date: null,
      metadata: {},
    },
    recordKey,
  };
};

function suite(name: string, open: (n: Node) => Promise<Store>) {
  const n = node();
  afterAll(async () => {
    await n.embeddings.close();
    n.db.close();
  });
  storeSuite(
    name,
    () => open(n),
    (store) => {
      test("an answer is found by similarity, within its question's time only (D12)", async () => {
        const clock = { t: T0 };
        const archive = store().archive(clock);
        await archive.prepareRotation("alice", true);
        await archive.store("alice", "qry_t1", "when does the lease end", [archivedChunk("c1", "Lease", "ends in May")], [unit(3)]);
        clock.t = T0 + 10 * DAY;
        await archive.store("alice", "qry_t2", "who signed the lease", [archivedChunk("c2", "Lease", "signed by Ines")], [unit(3, 0.2)]);
        const all = await archive.search("alice", unit(3), { limit: 5 });
        expect(all.map((m) => m.query_id)).toEqual(["qry_t1", "qry_t2"]);
        expect(all[0]).toMatchObject({ question: "when does the lease end", similarity: 1, queried_at: new Date(T0).toISOString() });
        expect(all[0]!.chunk.content).toBe("ends in May");
        const later = await archive.search("alice", unit(3), { from: new Date(T0 + DAY), limit: 5 });
        expect(later.map((m) => m.query_id)).toEqual(["qry_t2"]);
        const earlier = await archive.search("alice", unit(3), { to: new Date(T0 + DAY), limit: 5 });
        expect(earlier.map((m) => m.query_id)).toEqual(["qry_t1"]);
        // Never another user's, and nothing for a user without a key.
        await archive.prepareRotation("bob", true);
        expect(await archive.search("bob", unit(3), { limit: 5 })).toEqual([]);
        expect(await archive.search("nobody", unit(3), { limit: 5 })).toEqual([]);
      });

      test("a chunk without its vector is owed, stored in the background, and found (D29)", async () => {
        const archive = store().archive({ t: T0 });
        // The model held until the chunk is seen owed: the answer was sent without its vector.
        const { promise: held, resolve: release } = Promise.withResolvers<void>();
        const model = vectorsWithoutModel(n.embeddings, () => held);
        try {
          await archive.prepareRotation("carol", true);
          const before = await archive.pending();
          await archive.store(
            "carol",
            "qry_owed",
            "what did the audit find",
            [archivedChunk("c1", "Audit", "pallets on day four")],
            [undefined],
          );
          expect(await archive.pending()).toBe(before + 1);
          release();
          await archive.settled();
          expect(await archive.pending()).toBe(before);
          const found = await archive.search("carol", new Float32Array(EMBEDDING_DIM).fill(0.05), { limit: 3 });
          expect(found.map((m) => [m.query_id, m.similarity])).toEqual([["qry_owed", 1]]);
        } finally {
          model.restore();
        }
      });

      test("an answer's chunks keep their own vectors, those given and those owed alike", async () => {
        const archive = store().archive({ t: T0 });
        const model = vectorsWithoutModel(n.embeddings);
        try {
          await archive.prepareRotation("jill", true);
          const chunks = ["first", "second", "third"].map((text, i) => archivedChunk(`c${i}`, "Order", text));
          await archive.store("jill", "qry_order", "in which order", chunks, [unit(21), undefined, unit(23)]);
          await archive.settled();
          const top = async (v: Float32Array) => (await archive.search("jill", v, { limit: 1 }))[0]?.chunk.content;
          expect(await top(unit(21))).toBe("first");
          expect(await top(new Float32Array(EMBEDDING_DIM).fill(0.05))).toBe("second");
          expect(await top(unit(23))).toBe("third");
        } finally {
          model.restore();
        }
      });

      test("vectors that could not be stored stay owed; resumed, they are stored once", async () => {
        const archive = store().archive({ t: T0 });
        let fail = true;
        const failures: unknown[] = [];
        archive.onPendingFailed = (error) => failures.push(error);
        const model = vectorsWithoutModel(n.embeddings, async () => {
          if (fail) throw new Error("the disk is full");
        });
        try {
          await archive.prepareRotation("dave", true);
          const before = await archive.pending();
          await archive.store("dave", "qry_crash", "where is the key", [archivedChunk("c1", "Key", "under the mat")], [undefined]);
          await archive.settled();
          expect(failures).toHaveLength(1);
          expect(await archive.pending()).toBe(before + 1);
          fail = false;
          expect(await archive.resumePending()).toBeGreaterThanOrEqual(1);
          expect(await archive.pending()).toBe(0);
          const found = await archive.search("dave", new Float32Array(EMBEDDING_DIM).fill(0.05), { limit: 3 });
          expect(found.map((m) => m.query_id)).toEqual(["qry_crash"]);
        } finally {
          model.restore();
        }
      });

      test("a cited document is kept once per version, the newest few of a record; a chunk found again by its id (D36)", async () => {
        const archive = store().archive({ t: T0 });
        await archive.prepareRotation("erin", true);
        for (let i = 0; i < 10; i++)
          await archive.store(
            "erin",
            `qry_doc${i}`,
            "the lease",
            [withDocument(`c${i}`, `version ${i}`, `doc_v${i}`, "rec_lease")],
            [unit(5)],
          );
        await archive.store("erin", "qry_doc_again", "the lease", [withDocument("c9b", "version 9", "doc_v9", "rec_lease")], [unit(5)]);
        expect((await archive.document("erin", "doc_v9"))?.text).toBe("version 9");
        expect(await archive.document("erin", "doc_v0")).toBeUndefined();
        expect(await archive.document("frank", "doc_v9")).toBeUndefined();
        expect((await archive.citedChunk("erin", "c0"))?.chunk.content).toBe("version 0");
        expect(await archive.citedChunk("frank", "c0")).toBeUndefined();
        // 11 questions, 11 chunks, 8 documents kept.
        expect(await archive.rowsOf("erin")).toBe(11 + 11 + 8 + 0);
      });

      test("a user's erase leaves none of their rows or vectors, and every other user's (D13)", async () => {
        const archive = store().archive({ t: T0 });
        for (const user of ["gina", "hugo"]) {
          await archive.prepareRotation(user, true);
          await archive.store(
            user,
            `qry_${user}`,
            "the invoice",
            [withDocument(`c_${user}`, "net 30", `doc_${user}`, "rec_inv")],
            [unit(7)],
          );
        }
        const hugo = await archive.rowsOf("hugo");
        expect(await archive.rowsOf("gina")).toBeGreaterThan(0);
        expect(await archive.deleteUser("gina")).toEqual({ queries: 1, chunks: 1 });
        expect(await archive.rowsOf("gina")).toBe(0);
        expect(await archive.search("gina", unit(7), { limit: 5 })).toEqual([]);
        expect(await archive.rowsOf("hugo")).toBe(hugo);
        expect((await archive.search("hugo", unit(7), { limit: 5 })).map((m) => m.query_id)).toEqual(["qry_hugo"]);
      });

      test("attack: a vector owed to a user deleted while it was computed is not stored after (D13, D25)", async () => {
        const archive = store().archive({ t: T0 });
        const { promise: held, resolve: release } = Promise.withResolvers<void>();
        const model = vectorsWithoutModel(n.embeddings, () => held);
        try {
          await archive.prepareRotation("ivan", true);
          await archive.store("ivan", "qry_ivan", "the alarm code", [archivedChunk("c1", "Alarm", "4711")], [undefined]);
          // Erased while the vector is computed; the key stays (only the archive's room is erased here).
          await archive.deleteUser("ivan");
          release();
          await archive.settled();
          expect(await archive.rowsOf("ivan")).toBe(0);
          // No vector of theirs either, even one no row points to.
          const keyed = n.keys.rotation("ivan", "archive", EMBEDDING_DIM, false).apply(new Float32Array(EMBEDDING_DIM).fill(0.05));
          expect(await archive.rows.nearest("ivan", keyed, 5, {})).toEqual([]);
        } finally {
          model.restore();
        }
      });
    },
  );
}

suite("embedded (SQLite)", async (n) => ({
  archive: (clock) => new Archive(new SqliteArchiveRows(n.db), n.keys, n.embeddings, () => clock.t),
  close: async () => {},
}));

let shared: SharedDatabase;
suite("shared (PostgreSQL)", async (n) => {
  shared = await sharedDatabase();
  return {
    archive: (clock) => new Archive(new PostgresArchiveRows(shared.sql), n.keys, n.embeddings, () => clock.t),
    close: () => shared.drop(),
  };
});

describe("PostgreSQL: nodes on one database", () => {
  const n = node();
  let db: SharedDatabase;
  let a: Archive;
  let b: Archive;
  beforeAll(async () => {
    db = await sharedDatabase();
    a = new Archive(new PostgresArchiveRows(db.sql), n.keys, n.embeddings, () => T0);
    b = new Archive(new PostgresArchiveRows(db.client()), n.keys, n.embeddings, () => T0);
  });
  afterAll(async () => {
    await db.drop();
    await n.embeddings.close();
    n.db.close();
  });

  test("a question archived through node A is found through node B, within its time", async () => {
    await a.prepareRotation("alice", true);
    await a.store("alice", "qry_on_a", "what is the tax id", [archivedChunk("c1", "Invoice", "tax id DE123")], [unit(11)]);
    const found = await b.search("alice", unit(11), { from: new Date(T0 - DAY), to: new Date(T0 + DAY), limit: 5 });
    expect(found.map((m) => [m.query_id, m.question, m.chunk.content])).toEqual([["qry_on_a", "what is the tax id", "tax id DE123"]]);
    expect(await b.search("alice", unit(11), { from: new Date(T0 + DAY), limit: 5 })).toEqual([]);
  });

  test("the erase and the count run inside a given transaction: undone with it, done with it", async () => {
    await a.prepareRotation("bea", true);
    await a.store("bea", "qry_bea", "the door code", [withDocument("c1", "1234", "doc_bea", "rec_door")], [unit(13)]);
    const rows = new PostgresArchiveRows(db.sql);
    const before = await rows.rowsOf("bea");
    expect(before).toBe(3); // question, chunk, document
    const undone = new Error("the deletion failed in another room");
    const inside = await db.sql
      .begin(async (tx) => {
        expect(await rows.within(tx).forget("bea")).toEqual({ queries: 1, chunks: 1 });
        expect(await rows.within(tx).rowsOf("bea")).toBe(0);
        throw undone;
      })
      .catch((error: unknown) => error);
    expect(inside).toBe(undone);
    expect(await new PostgresArchiveRows(db.client()).rowsOf("bea")).toBe(before);
    await db.sql.begin((tx) => rows.within(tx).forget("bea"));
    expect(await new PostgresArchiveRows(db.client()).rowsOf("bea")).toBe(0);
    expect(await PostgresVectorStore.over(db.client(), ARCHIVE_VECTORS_TABLE).count("bea")).toBe(0);
    expect(await b.search("bea", unit(13), { limit: 5 })).toEqual([]);
  });

  test("attack: a vector owed, stored while a deletion of its user is under way on another node, is not left after it (D13)", async () => {
    const rows = new PostgresArchiveRows(db.sql);
    const [id] = await rows.write({
      user: "dan",
      queryId: "qry_dan",
      at: T0 / 1000,
      question: Buffer.from("sealed question"),
      chunks: [{ chunkId: "c1", body: Buffer.from("sealed chunk") }],
      documents: [],
    });
    const vector = n.keys.rotation("dan", "archive", EMBEDDING_DIM).apply(unit(19));
    let erased = false;
    let finish: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      finish = resolve;
    });
    // Node A's deletion has erased the user's rows, not committed yet; node B's owed vector comes meanwhile.
    const deletion = db.sql.begin(async (tx) => {
      await rows.within(tx).forget("dan");
      erased = true;
      await held;
    });
    await until("the deletion erased", () => (erased ? true : undefined), 10_000, 2);
    const storing = new PostgresArchiveRows(db.client()).storeOwed("dan", [{ id: id!, queryId: "qry_dan", vector }]);
    await until(
      "the owed vector waits on the deletion",
      async () => ((await db.database.admin`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock'`).length ? true : undefined),
      10_000,
      5,
    );
    finish();
    await deletion;
    // Was 1 stored: the row read before the deletion committed, its vector written after, under no row.
    expect(await storing).toBe(0);
    expect(await PostgresVectorStore.over(db.client(), ARCHIVE_VECTORS_TABLE).count("dan")).toBe(0);
  });

  test("a dump of the database spells no word of an answer, and holds no vector as the model made it (D25)", async () => {
    const words = ["zorblaxian", "quixotrumph", "flumbergast"];
    const vector = unit(17, 0.3);
    await a.prepareRotation("cleo", true);
    await a.store(
      "cleo",
      "qry_cleo",
      `where is the ${words[0]}`,
      [withDocument("c1", `the ${words[1]} is in the ${words[2]}`, "doc_cleo", "rec_cleo")],
      [vector],
    );
    const dump = spawnSync("pg_dump", ["--data-only", "--no-owner", db.database.url], { encoding: "utf8", maxBuffer: 64 << 20 });
    expect(dump.status).toBe(0);
    expect(dump.stdout).toContain(ARCHIVE_VECTORS_TABLE);
    expect(dump.stdout).toContain("qry_cleo");
    // Sealed values are dumped as bytea hex: neither the word nor its hex is there.
    for (const w of words) {
      expect(dump.stdout).not.toContain(w);
      expect(dump.stdout).not.toContain(Buffer.from(w).toString("hex"));
    }
    // The stored vector is the rotated one: far from the model's, and the rotation gives the model's back.
    const [row] = await db.database.admin<
      { embedding: string }[]
    >`SELECT embedding::text FROM ${db.database.admin(ARCHIVE_VECTORS_TABLE)} WHERE owner = 'cleo'`;
    const stored = Float32Array.from(JSON.parse(row!.embedding) as number[]);
    const cosine = stored.reduce((s, x, i) => s + x * vector[i]!, 0);
    expect(Math.abs(cosine)).toBeLessThan(0.5);
    const back = n.keys.rotation("cleo", "archive", EMBEDDING_DIM, false).invert(stored as never);
    expect(back.reduce((s, x, i) => s + x * vector[i]!, 0)).toBeGreaterThan(0.999);
  });
});
