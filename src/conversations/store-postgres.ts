// Conversations' sealed turns in the shared PostgreSQL (D33), so that a follow-up sent to
// another node finds the earlier turns. Appending is one transaction that locks the
// conversation's row before counting its turns: two turns appended at once (on two nodes) get
// two numbers, never the same one. PostgreSQL holds what the embedded store holds at rest
// (conversations, conversation_turns): ids, the user id, times, and each turn sealed with the
// user's data key (bound to its conversation and number); the key stays with the nodes.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically, type SharedQueries } from "../store/shared";
import type { ConversationRecords, SealedTurn } from "./store";

export const CONVERSATION_TABLES = { conversations: "corpus_conversations", turns: "corpus_conversation_turns" } as const;
const T = CONVERSATION_TABLES;

export const conversationPgMigrations: PgMigration[] = [
  {
    id: "conversations-pg-001",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${T.conversations} (id text PRIMARY KEY, user_id text NOT NULL, created_at bigint NOT NULL)`);
      await tx.unsafe(`CREATE INDEX ${T.conversations}_user ON ${T.conversations} (user_id)`);
      await tx.unsafe(`CREATE TABLE ${T.turns} (
        conversation_id text NOT NULL REFERENCES ${T.conversations} (id) ON DELETE CASCADE,
        turn integer NOT NULL,
        user_id text NOT NULL,
        body bytea NOT NULL,
        created_at bigint NOT NULL,
        PRIMARY KEY (conversation_id, turn)
      )`);
      await tx.unsafe(`CREATE INDEX ${T.turns}_user ON ${T.turns} (user_id)`);
    },
  },
];

export class PostgresConversationRecords implements ConversationRecords {
  constructor(private readonly sql: SharedQueries) {}

  /** The same store inside `tx` (a deletion's: users/deletion.ts): what it erases commits or rolls back with the rest. */
  within(tx: postgres.TransactionSql): PostgresConversationRecords {
    return new PostgresConversationRecords(tx);
  }

  async owner(id: string): Promise<string | undefined> {
    const [row] = await this.sql<{ user_id: string }[]>`SELECT user_id FROM ${this.sql(T.conversations)} WHERE id = ${id}`;
    return row?.user_id;
  }

  async turns(id: string): Promise<SealedTurn[]> {
    const rows = await this.sql<{ turn: number; body: Uint8Array }[]>`
      SELECT turn, body FROM ${this.sql(T.turns)} WHERE conversation_id = ${id} ORDER BY turn`;
    return rows.map((r) => ({ turn: r.turn, body: new Uint8Array(r.body) }));
  }

  async append(user: string, id: string, create: boolean, seal: (turn: number) => Uint8Array, at: number): Promise<void> {
    await atomically(this.sql, async (tx) => {
      if (create) await tx`INSERT INTO ${tx(T.conversations)} (id, user_id, created_at) VALUES (${id}, ${user}, ${at})`;
      // The conversation's row locked: another append to it waits until this one has committed.
      else await tx`SELECT 1 FROM ${tx(T.conversations)} WHERE id = ${id} FOR UPDATE`;
      const [row] = await tx<{ n: number }[]>`SELECT count(*)::integer AS n FROM ${tx(T.turns)} WHERE conversation_id = ${id}`;
      const next = row!.n;
      await tx`INSERT INTO ${tx(T.turns)} (conversation_id, turn, user_id, body, created_at)
        VALUES (${id}, ${next}, ${user}, ${Buffer.from(seal(next))}, ${at})`;
    });
  }

  async rowsOf(user: string): Promise<number> {
    const sql = this.sql;
    const [row] = await sql<{ n: number }[]>`SELECT
      (SELECT count(*) FROM ${sql(T.conversations)} WHERE user_id = ${user})::integer
      + (SELECT count(*) FROM ${sql(T.turns)} WHERE user_id = ${user})::integer AS n`;
    return row!.n;
  }

  async deleteUser(user: string): Promise<number> {
    const sql = this.sql;
    // One statement: the turns, then their conversations (the cascade would take the turns too).
    const [row] = await sql<{ n: number }[]>`
      WITH t AS (DELETE FROM ${sql(T.turns)} WHERE user_id = ${user}),
        c AS (DELETE FROM ${sql(T.conversations)} WHERE user_id = ${user} RETURNING 1)
      SELECT count(*)::integer AS n FROM c`;
    return row!.n;
  }
}
