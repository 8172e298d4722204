// One suite, two stores (D33): conversations of shape C (D9) kept by the embedded database and by
// the shared PostgreSQL (a real server on loopback), through the one Conversations that seals
// each turn with the user's data key. Then, PostgreSQL alone: a conversation begun on node A is
// continued on B and read on A; turns appended to one conversation on two nodes at once get a
// number each, none twice; and what PostgreSQL holds of a turn is sealed.
import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { type ConversationRecords, Conversations, conversationMigrations, SqliteConversationRecords } from "../../src/conversations/store";
import { CONVERSATION_TABLES, PostgresConversationRecords } from "../../src/conversations/store-postgres";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { migrate } from "../../src/store/migrations";
import { erasedInDeletion, type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

/** The users' data keys (a room not yet shared): one for every node of a test. */
function userKeys(): UserKeys {
  const db = new Database(":memory:");
  migrate(db, cryptoMigrations);
  return new UserKeys(db, randomBytes(32));
}

interface Store {
  conversations: Conversations;
  close(): Promise<void>;
}

function suite(name: string, open: (keys: UserKeys) => Promise<Store>) {
  const keys = userKeys();
  storeSuite(
    name,
    () => open(keys),
    (store) => {
      const c = () => store().conversations;

      test("a conversation begun, then followed up: its turns in order, for its user only", async () => {
        const id = await c().append("ann", undefined, { question: "fuel in May?", answer: "42 EUR" });
        expect(id).toStartWith("conv_");
        expect(await c().append("ann", id, { question: "and June?", answer: "17 EUR" })).toBe(id);
        expect(await c().turns("ann", id)).toEqual([
          { question: "fuel in May?", answer: "42 EUR" },
          { question: "and June?", answer: "17 EUR" },
        ]);
        // Another user's, or a made-up id: as unknown.
        expect(await c().turns("bob", id)).toBeUndefined();
        expect(await c().turns("ann", "conv_00000000000000000000000000000000")).toBeUndefined();
      });

      test("a user's conversations counted and erased (their data deleted), no other's", async () => {
        const first = await c().append("cal", undefined, { question: "q1", answer: "a1" });
        await c().append("cal", first, { question: "q2", answer: "a2" });
        await c().append("cal", undefined, { question: "q3", answer: "a3" });
        const other = await c().append("cid", undefined, { question: "q", answer: "a" });
        // Two conversations and three turns.
        expect(await c().rowsOf("cal")).toBe(5);
        expect(await c().deleteUser("cal")).toBe(2);
        expect(await c().rowsOf("cal")).toBe(0);
        expect(await c().turns("cal", first)).toBeUndefined();
        expect(await c().turns("cid", other)).toEqual([{ question: "q", answer: "a" }]);
        expect(await c().rowsOf("cid")).toBe(2);
      });
    },
  );
}

suite("embedded (SQLite)", async (keys) => {
  const db = new Database(":memory:");
  migrate(db, conversationMigrations);
  return { conversations: new Conversations(new SqliteConversationRecords(db), keys), close: async () => db.close() };
});

suite("shared (PostgreSQL)", async (keys) => {
  const shared = await sharedDatabase();
  return { conversations: new Conversations(new PostgresConversationRecords(shared.client()), keys), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  const keys = userKeys();
  let a: Conversations;
  let b: Conversations;
  const node = (records: ConversationRecords = new PostgresConversationRecords(db.client())) => new Conversations(records, keys);
  beforeAll(async () => {
    db = await sharedDatabase();
    a = node();
    b = node();
  });
  afterAll(() => db.drop());

  test("begun on A, continued on B, read on A", async () => {
    const id = await a.append("dee", undefined, { question: "who paid?", answer: "Jonas" });
    await b.append("dee", id, { question: "when?", answer: "Tuesday" });
    expect(await a.turns("dee", id)).toEqual([
      { question: "who paid?", answer: "Jonas" },
      { question: "when?", answer: "Tuesday" },
    ]);
  });

  test("turns appended to one conversation on both nodes at once: each gets a number of its own, every one opens", async () => {
    const id = await a.append("eve", undefined, { question: "q0", answer: "a0" });
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).append("eve", id, { question: `q${i + 1}`, answer: `a${i + 1}` })),
    );
    const turns = (await b.turns("eve", id))!;
    expect(turns.length).toBe(13);
    expect(new Set(turns.map((t) => t.question)).size).toBe(13);
  });

  test("PostgreSQL holds each turn sealed: no question or answer readable", async () => {
    await a.append("fay", undefined, { question: "secret question 5678", answer: "secret answer 9012" });
    const rows = await db.database.admin.unsafe(`SELECT * FROM ${CONVERSATION_TABLES.turns} WHERE user_id = 'fay'`);
    const dump = JSON.stringify(rows.map((r) => ({ ...r, body: Buffer.from(r.body as Uint8Array).toString("latin1") })));
    expect(dump).toContain("fay");
    for (const plain of ["secret question", "5678", "secret answer", "9012"]) expect(dump).not.toContain(plain);
  });

  test("a user erased inside the deletion's transaction: rolled back, nothing is lost; committed, nothing is left", async () => {
    const records = new PostgresConversationRecords(db.client());
    const c = node(records);
    await c.append("gus", undefined, { question: "q", answer: "a" });
    await erasedInDeletion(
      db.sql,
      {
        erase: async (tx) => expect(await c.within(tx).deleteUser("gus")).toBe(1),
        rowsIn: async (tx) => c.within(tx).rowsOf("gus"),
        rows: async () => c.rowsOf("gus"),
      },
      2,
    );
  });
});
