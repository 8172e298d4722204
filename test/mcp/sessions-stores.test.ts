// One suite, two stores (D33): MCP sessions kept in the node's memory (the embedded store) and
// in the shared PostgreSQL (a real server on loopback), with an injected clock. Then, PostgreSQL
// alone: a session opened on node A is used and ended on node B, and then unknown on A; the cap
// on every node's sessions together; what PostgreSQL holds has no session id a client could present.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MAX_SESSIONS_PER_USER, type McpSessionStore, McpSessions, SESSION_TTL_MS } from "../../src/mcp/sessions";
import { MCP_SESSIONS_TABLE, PostgresMcpSessions } from "../../src/mcp/sessions-postgres";
import { erasedInDeletion, type SharedDatabase, sharedDatabase, storeSuite } from "../support/shared-database";

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0);

interface Store {
  /** The store, on `clock`. */
  sessions(clock: { t: number }): McpSessionStore;
  close(): Promise<void>;
}

function suite(name: string, open: () => Promise<Store>) {
  storeSuite(name, open, (store) => {
    test("a session is its user's: another user neither uses nor closes it; closed, it is unknown", async () => {
      const clock = { t: T0 };
      const sessions = store().sessions(clock);
      const id = (await sessions.open("alice", "2025-06-18"))!;
      expect(id).toBeString();
      expect(await sessions.use(id, "alice")).toEqual({ version: "2025-06-18", user: "alice", at: T0 });
      expect(await sessions.use(id, "bob")).toBeUndefined();
      expect(await sessions.close(id, "bob")).toBe(false);
      expect(await sessions.close(id, "alice")).toBe(true);
      expect(await sessions.use(id, "alice")).toBeUndefined();
      expect(await sessions.close(id, "alice")).toBe(false);
      expect(await sessions.use("made-up", "alice")).toBeUndefined();
    });

    test("a session lives a day from its last use; the sweep removes those nobody came back to", async () => {
      const clock = { t: T0 };
      const sessions = store().sessions(clock);
      const kept = (await sessions.open("cid", "2025-06-18"))!;
      const left = (await sessions.open("cid", "2025-06-18"))!;
      clock.t += SESSION_TTL_MS / 2;
      expect(await sessions.use(kept, "cid")).toMatchObject({ at: clock.t });
      clock.t += SESSION_TTL_MS / 2 + 1;
      expect(await sessions.sweep()).toBeGreaterThanOrEqual(1);
      expect(await sessions.use(left, "cid")).toBeUndefined();
      expect(await sessions.use(kept, "cid")).toBeDefined();
      clock.t += SESSION_TTL_MS + 1;
      expect(await sessions.use(kept, "cid")).toBeUndefined();
    });

    test("a user holds at most MAX_SESSIONS_PER_USER: the first opened goes first; other users keep theirs", async () => {
      const clock = { t: T0 };
      const sessions = store().sessions(clock);
      const bobs = (await sessions.open("bob", "1.0"))!;
      const ids: string[] = [];
      for (let i = 0; i < MAX_SESSIONS_PER_USER + 5; i++) ids.push((await sessions.open("mallory", "1.0"))!);
      expect(await sessions.rowsOf("mallory")).toBe(MAX_SESSIONS_PER_USER);
      for (const gone of ids.slice(0, 5)) expect(await sessions.use(gone, "mallory")).toBeUndefined();
      expect(await sessions.use(ids[5]!, "mallory")).toBeDefined();
      expect(await sessions.use(ids.at(-1)!, "mallory")).toBeDefined();
      expect(await sessions.use(bobs, "bob")).toBeDefined();
    });

    test("a user's sessions counted and forgotten (their data deleted), no other's", async () => {
      const clock = { t: T0 };
      const sessions = store().sessions(clock);
      const dee = [(await sessions.open("dee", "1.0"))!, (await sessions.open("dee", "1.0"))!];
      const eve = (await sessions.open("eve", "1.0"))!;
      expect(await sessions.rowsOf("dee")).toBe(2);
      expect(await sessions.forget("dee")).toBe(2);
      expect(await sessions.rowsOf("dee")).toBe(0);
      for (const id of dee) expect(await sessions.use(id, "dee")).toBeUndefined();
      expect(await sessions.use(eve, "eve")).toBeDefined();
      expect(await sessions.rowsOf("eve")).toBe(1);
    });
  });
}

suite("embedded (memory)", async () => {
  // One store for the suite, as one node has; the injected clock is read through a holder.
  const holder = { clock: { t: T0 } };
  const sessions = new McpSessions(
    () => holder.clock.t,
    () => () => {},
  );
  return {
    sessions: (clock) => {
      holder.clock = clock;
      return sessions;
    },
    close: async () => {},
  };
});

suite("shared (PostgreSQL)", async () => {
  const shared = await sharedDatabase();
  return { sessions: (clock) => new PostgresMcpSessions(shared.client(), () => clock.t), close: () => shared.drop() };
});

describe("PostgreSQL alone: two nodes on one database", () => {
  let db: SharedDatabase;
  beforeAll(async () => {
    db = await sharedDatabase();
  });
  afterAll(() => db.drop());

  test("a session opened on A is used on B; ended on B, A no longer knows it", async () => {
    const [a, b] = [new PostgresMcpSessions(db.client()), new PostgresMcpSessions(db.client())];
    const id = (await a.open("alice", "2025-06-18"))!;
    expect(await b.use(id, "alice")).toMatchObject({ version: "2025-06-18", user: "alice" });
    expect(await b.use(id, "bob")).toBeUndefined();
    expect(await b.close(id, "alice")).toBe(true);
    expect(await a.use(id, "alice")).toBeUndefined();
  });

  test("every node's sessions together are capped: past it no new one opens, unless expired ones make room", async () => {
    const clock = { t: T0 };
    const [a, b] = [new PostgresMcpSessions(db.client(), () => clock.t, 10), new PostgresMcpSessions(db.client(), () => clock.t, 10)];
    await db.sql`DELETE FROM ${db.sql(MCP_SESSIONS_TABLE)}`;
    for (let i = 0; i < 10; i++) expect(await (i % 2 ? a : b).open(`u${i}`, "1.0")).toBeString();
    expect(await a.open("late", "1.0")).toBeUndefined();
    expect(await b.open("late", "1.0")).toBeUndefined();
    clock.t += SESSION_TTL_MS + 1;
    expect(await b.open("late", "1.0")).toBeString();
    expect(await a.rowsOf("late")).toBe(1);
  });

  test("PostgreSQL holds the session id hashed only", async () => {
    const a = new PostgresMcpSessions(db.client());
    const id = (await a.open("frank", "2025-06-18"))!;
    const dump = JSON.stringify(await db.database.admin.unsafe(`SELECT * FROM ${MCP_SESSIONS_TABLE}`));
    expect(dump).toContain("frank");
    expect(dump).not.toContain(id);
  });

  test("a user's sessions erased inside the deletion's transaction: rolled back, kept; committed, gone", async () => {
    const a = new PostgresMcpSessions(db.client());
    await a.open("gus", "1.0");
    await erasedInDeletion(
      db.sql,
      {
        erase: async (tx) => expect(await a.within(tx).forget("gus")).toBe(1),
        rowsIn: async (tx) => a.within(tx).rowsOf("gus"),
        rows: async () => a.rowsOf("gus"),
      },
      1,
    );
  });
});
