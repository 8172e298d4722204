// One suite, two stores: the same cases against the embedded store (sqlite-vec, the
// local index's table) and the shared one (PostgreSQL with pgvector's HNSW index, a real server
// on loopback). Vectors are keyed by a real rotation (D25), as every store holds them.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { ARCHIVE_VECTORS } from "../../src/archive/rows";
import { archiveMigrations } from "../../src/archive/store";
import { indexMigrations } from "../../src/connectors/local-index";
import { type KeyedVector, VectorRotation } from "../../src/crypto/rotation";
import { EMBEDDING_DIM } from "../../src/embedding/embedder";
import { openDatabase } from "../../src/store/database";
import { openSharedDatabase } from "../../src/store/shared";
import {
  DEFAULT_EF_SEARCH,
  openedWithHnswSession,
  PostgresVectorStore,
  VECTORS_TABLE,
  VectorStoreUnavailable,
  vectorMigrations,
} from "../../src/vectors/postgres";
import { SqliteVectorStore } from "../../src/vectors/sqlite";
import { MAX_KNN, type VectorStore } from "../../src/vectors/store";
import { tempDir } from "../helpers";
import { type VectorDatabase, vectorDatabase } from "../support/pg-vectors";

const rotation = VectorRotation.fromKey(randomBytes(32), EMBEDDING_DIM);

/** A seeded unit vector (xorshift, Box-Muller-free: uniform in [-1, 1) then normalised). */
function unit(seed: number): Float32Array {
  let s = seed * 2654435761 + 1;
  const v = new Float32Array(EMBEDDING_DIM);
  let norm = 0;
  for (let i = 0; i < EMBEDDING_DIM; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    v[i] = ((s >>> 0) / 2 ** 32) * 2 - 1;
    norm += v[i]! * v[i]!;
  }
  for (let i = 0; i < EMBEDDING_DIM; i++) v[i]! /= Math.sqrt(norm);
  return v;
}

/** `base` moved towards `towards` by `t`, normalised: near `base` for a small t. */
function near(base: Float32Array, towards: Float32Array, t: number): Float32Array {
  const v = base.map((x, i) => x + t * towards[i]!);
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);
const keyed = (v: Float32Array): KeyedVector => rotation.apply(v);
/** Vectors under `ids`; in a store of times, each at second `id` (its time as the archive keeps one). */
const vectors = (ids: number[], of: (id: number) => Float32Array, keeps?: Keeps) =>
  ids.map((id) => ({ id, vector: keyed(of(id)), ...(keeps?.times ? { at: id } : {}) }));
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

interface Subject {
  store: VectorStore;
  /** Rows of `owner` as the database holds them, counted without the store. */
  rawRows(owner: string): Promise<number>;
}

/** What a store's table keeps: the one connector of a table partitioned by owner alone (the archive's), and whether it keeps times. */
interface Keeps {
  connector?: string;
  times: boolean;
}

function suite(name: string, keeps: Keeps, open: () => Promise<Subject & { close(): Promise<void> }>) {
  const mail = keeps.connector ?? "mail";
  describe(name, () => {
    let subject: Subject & { close(): Promise<void> };
    beforeAll(async () => {
      subject = await open();
    });
    afterAll(() => subject.close());

    test("nearest first, by the cosine of the vectors as the model made them, and none past k", async () => {
      const { store } = subject;
      await store.put("ann", mail, vectors(range(1, 200), unit, keeps));
      const query = unit(10_000);
      const exact = range(1, 200)
        .map((id) => ({ id, similarity: cosine(unit(id), query) }))
        .sort((a, b) => b.similarity - a.similarity);
      const found = await store.knn("ann", keyed(query), 10);
      expect(found.map((n) => n.id)).toEqual(exact.slice(0, 10).map((e) => e.id));
      found.forEach((n, i) => {
        expect(n.connector).toBe(mail);
        expect(n.similarity).toBeCloseTo(exact[i]!.similarity, 4);
      });
    });

    test("a second owner's vectors are never returned, however near and however many", async () => {
      const { store } = subject;
      const query = unit(20_000);
      // Bob's 600 are all nearer the query than any of Beth's 300. PostgreSQL reads a table this small
      // whole (EXPLAIN: a sequential scan); scripts/bench/knn.ts measures the HNSW index's recall.
      await store.put(
        "bob",
        mail,
        vectors(range(1001, 600), (id) => near(query, unit(30_000 + id), 0.3), keeps),
      );
      await store.put(
        "beth",
        mail,
        vectors(range(5001, 300), (id) => near(query, unit(40_000 + id), 3), keeps),
      );
      const isBeths = (n: { id: number }) => n.id >= 5001 && n.id < 5301;
      const ten = await store.knn("beth", keyed(query), 10);
      expect(ten.length).toBe(10);
      expect(ten.every(isBeths)).toBe(true);
      const more = await store.knn("beth", keyed(query), 200);
      expect(more.length).toBe(200);
      expect(more.every(isBeths)).toBe(true);
      expect(await store.knn("nobody", keyed(query), 10)).toEqual([]);
    });

    if (keeps.connector === undefined)
      test("narrowed to connectors and to ids; an id of one connector is not another's", async () => {
        const { store } = subject;
        await store.put("cat", "mail", vectors(range(6001, 20), unit));
        await store.put("cat", "files", vectors(range(6101, 20), unit));
        const query = keyed(unit(50_000));
        expect(new Set((await store.knn("cat", query, 40)).map((n) => n.connector))).toEqual(new Set(["mail", "files"]));
        const files = await store.knn("cat", query, 40, { connectors: ["files"] });
        expect(files.length).toBe(20);
        expect(files.every((n) => n.connector === "files")).toBe(true);
        const some = await store.knn("cat", query, 40, { connectors: ["mail"], ids: [6003, 6007, 6011, 6103] });
        expect(some.map((n) => n.id).sort((a, b) => a - b)).toEqual([6003, 6007, 6011]);
        expect(await store.knn("cat", query, 10, { connectors: [] })).toEqual([]);
        expect(await store.knn("cat", query, 10, { ids: [] })).toEqual([]);

        // Removed from the connector named only.
        await store.remove("cat", "files", [6103, 6003]);
        expect((await store.knn("cat", query, 40, { ids: [6103, 6003] })).map((n) => n.id)).toEqual([6003]);
        // Put again under the same id: replaced, not doubled. An id another connector or owner holds is refused, not taken.
        await store.put("cat", "mail", [{ id: 6007, vector: query }]);
        const [nearest] = await store.knn("cat", query, 1);
        expect(nearest).toMatchObject({ id: 6007, connector: "mail" });
        expect(nearest!.similarity).toBeCloseTo(1, 5);
        expect(async () => await store.put("cat", "files", [{ id: 6008, vector: query }])).toThrow();
        expect(async () => await store.put("bob", "mail", [{ id: 6009, vector: query }])).toThrow();
        const kept = await store.knn("cat", query, 40, { ids: [6008, 6009] });
        expect(kept.map((n) => n.connector)).toEqual(["mail", "mail"]);
        expect(kept.every((n) => n.similarity < 0.5)).toBe(true);
        expect(await store.count("cat")).toBe(39);
        expect(await store.dropConnector("cat", "mail")).toBe(20);
        expect(await store.count("cat")).toBe(19);
      });

    if (keeps.connector === undefined)
      test("an owner's drop leaves no row of theirs, and every other owner's, a name beginning with theirs too", async () => {
        const { store, rawRows } = subject;
        await store.put("dan", "mail", vectors(range(7001, 30), unit));
        await store.put("dan", "files", vectors(range(7101, 30), unit));
        await store.put("dan/mail", "x", vectors(range(7201, 5), unit));
        await store.put("danny", "mail", vectors(range(7301, 5), unit));
        expect(await rawRows("dan")).toBe(60);
        expect(await store.dropOwner("dan")).toBe(60);
        expect(await rawRows("dan")).toBe(0);
        expect(await store.count("dan")).toBe(0);
        expect(await store.knn("dan", keyed(unit(1)), 10)).toEqual([]);
        expect(await rawRows("dan/mail")).toBe(5);
        expect(await rawRows("danny")).toBe(5);
      });

    test("a k out of bounds is refused before the store is asked", async () => {
      for (const k of [0, -1, 1.5, MAX_KNN + 1]) expect(() => subject.store.knn("ann", keyed(unit(1)), k)).toThrow(RangeError);
    });

    if (keeps.times)
      test("within times: only vectors stored from `from` and before `to`, the nearest of those, never another owner's", async () => {
        const { store } = subject;
        const query = unit(60_000);
        const away = unit(61_000);
        // Fay's vectors at seconds 8001..8100, on the arc from the query away from it, the nearer the query the later; Gus's nearest of all, at the same seconds.
        await store.put(
          "fay",
          mail,
          vectors(range(8001, 100), (id) => near(query, away, (8101 - id) * 0.05), keeps),
        );
        await store.put(
          "gus",
          mail,
          vectors(range(9001, 100), (id) => near(query, unit(62_000 + id), 0.01), keeps).map((v) => ({ ...v, at: v.id - 1000 })),
        );
        const within = await store.knn("fay", keyed(query), 10, { from: 8020, to: 8050 });
        // The latest before `to` are the nearest: 8049 down to 8040.
        expect(within.map((n) => n.id)).toEqual(range(8040, 10).reverse());
        expect((await store.knn("fay", keyed(query), 100, { from: 8095 })).map((n) => n.id)).toEqual(range(8095, 6).reverse());
        expect((await store.knn("fay", keyed(query), 100, { to: 8003 })).map((n) => n.id)).toEqual([8002, 8001]);
        expect(await store.knn("fay", keyed(query), 10, { from: 8050, to: 8050 })).toEqual([]);
        expect(await store.count("gus")).toBe(100);
      });
    else
      test("a search within times is refused by a store that keeps none", async () => {
        expect(() => subject.store.knn("ann", keyed(unit(1)), 10, { from: 1 })).toThrow(RangeError);
        expect(() => subject.store.put("ann", mail, [{ id: 1, vector: keyed(unit(1)), at: 1 }])).toThrow(RangeError);
      });

    // Last: it empties the store.
    test("every vector of every owner dropped at once (another model made them)", async () => {
      const { store, rawRows } = subject;
      const before = (await store.count("ann")) + (await store.count("beth"));
      expect(before).toBeGreaterThan(0);
      expect(await store.dropAll()).toBeGreaterThanOrEqual(before);
      for (const owner of ["ann", "bob", "beth"]) {
        expect(await rawRows(owner)).toBe(0);
        expect(await store.knn(owner, keyed(unit(1)), 10)).toEqual([]);
      }
    });
  });
}

suite("sqlite-vec (embedded)", { times: false }, async () => {
  const db = openDatabase(tempDir(), indexMigrations);
  return {
    store: new SqliteVectorStore(db),
    // Every partition read, split as the local index names them (owner/connector).
    rawRows: async (owner) =>
      db
        .query<{ owner: string }, []>("SELECT owner FROM connector_vec")
        .all()
        .filter((r) => r.owner.slice(0, r.owner.lastIndexOf("/")) === owner).length,
    close: async () => db.close(),
  };
});

suite("sqlite-vec (embedded, the archive's table: by user, with times)", {
  connector: ARCHIVE_VECTORS.connector,
  times: true,
}, async () => {
  const db = openDatabase(tempDir(), archiveMigrations);
  return {
    store: new SqliteVectorStore(db, ARCHIVE_VECTORS),
    rawRows: async (owner) => db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM archive_vec WHERE user_id = ?").get(owner)!.n,
    close: async () => db.close(),
  };
});

let database: VectorDatabase;
suite("pgvector HNSW (PostgreSQL)", { times: true }, async () => {
  database = await vectorDatabase();
  const store = await PostgresVectorStore.open(database.url);
  return {
    store,
    rawRows: async (owner) =>
      Number((await database.admin`SELECT count(*) AS n FROM ${database.admin(VECTORS_TABLE)} WHERE owner = ${owner}`)[0]!.n),
    close: async () => {
      await store.close();
      await database.drop();
    },
  };
});

describe("PostgreSQL alone", () => {
  test("holds the keyed vector, never the one the model made", async () => {
    const db = await vectorDatabase();
    const store = await PostgresVectorStore.open(db.url);
    try {
      const plain = unit(7);
      await store.put("eve", "mail", [{ id: 1, vector: keyed(plain) }]);
      const [row] = await db.admin<{ v: string }[]>`SELECT embedding::text AS v FROM ${db.admin(VECTORS_TABLE)}`;
      const held = Float32Array.from(JSON.parse(row!.v) as number[]);
      expect([...held]).toEqual([...keyed(plain)]);
      // Far from the plaintext: a rotation moves a vector as far as a random one is.
      expect(Math.abs(cosine(held, plain))).toBeLessThan(0.3);
    } finally {
      await store.close();
      await db.drop();
    }
  });

  test("over the shared database's connections a search is one statement (no transaction), searching as a store's own do; over others, a transaction that sets them", async () => {
    const db = await vectorDatabase();
    const shared = await openSharedDatabase(db.url, vectorMigrations(VECTORS_TABLE));
    const other = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      await PostgresVectorStore.over(shared, VECTORS_TABLE).put("eve", "mail", [{ id: 1, vector: keyed(unit(1)) }]);
      // The transactions a search begins.
      const counting = (sql: postgres.Sql, sent: { transactions: number }) =>
        new Proxy(sql, {
          get: (target, key) => {
            if (key === "begin") sent.transactions++;
            return Reflect.get(target, key);
          },
        });
      const onShared = { transactions: 0 };
      const tuned = counting(shared, onShared);
      // Registered as the shared database's pool is (openSharedDatabase): the proxy stands for it.
      openedWithHnswSession(tuned);
      expect((await PostgresVectorStore.over(tuned, VECTORS_TABLE).knn("eve", keyed(unit(1)), 1)).map((n) => n.id)).toEqual([1]);
      expect(onShared.transactions).toBe(0);
      const [session] = await shared<{ scan: string; ef: string }[]>`
        SELECT current_setting('hnsw.iterative_scan') AS scan, current_setting('hnsw.ef_search') AS ef`;
      expect(session).toEqual({ scan: "relaxed_order", ef: String(DEFAULT_EF_SEARCH) });
      const onOther = { transactions: 0 };
      expect(
        (await PostgresVectorStore.over(counting(other, onOther), VECTORS_TABLE).knn("eve", keyed(unit(1)), 1)).map((n) => n.id),
      ).toEqual([1]);
      expect(onOther.transactions).toBe(1);
    } finally {
      await other.end();
      await shared.end();
      await db.drop();
    }
  });

  test("a database without the vector extension is refused with what to do, and made nothing", async () => {
    const db = await vectorDatabase();
    try {
      await db.admin`DROP EXTENSION vector`;
      expect(PostgresVectorStore.open(db.url)).rejects.toThrow(VectorStoreUnavailable);
      expect(PostgresVectorStore.open(db.url)).rejects.toThrow("CREATE EXTENSION vector");
      const tables = await db.admin`SELECT 1 FROM pg_tables WHERE tablename = ${VECTORS_TABLE}`;
      expect(tables.length).toBe(0);
    } finally {
      await db.drop();
    }
  });
});
