// Conversations of shape C (D9): the turns of a user's conversation, sealed with the user's
// data key, so a follow-up is retrieved with the earlier questions as context. The sealed rows
// are kept behind one interface (ConversationRecords, D33): the embedded database (below) or the
// shared PostgreSQL (store-postgres.ts); sealing and opening happen here, on the node, for both.
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import { DecryptError } from "../crypto/aead";
import type { UserKeys } from "../crypto/user-keys";
import { ID_PREFIX, newId } from "../ids";
import type { Migration } from "../store/migrations";
import { type Awaitable, inTransaction } from "../store/shared";

export const conversationMigrations: Migration[] = [
  {
    id: "conversations-001",
    up(db) {
      db.exec("CREATE TABLE conversations (id TEXT PRIMARY KEY, user_id TEXT NOT NULL, created_at INTEGER NOT NULL)");
      db.exec("CREATE INDEX conversations_user ON conversations (user_id)");
      db.exec(`CREATE TABLE conversation_turns (
        conversation_id TEXT NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        turn INTEGER NOT NULL,
        user_id TEXT NOT NULL,
        body BLOB NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (conversation_id, turn)
      )`);
    },
  },
];

export interface Turn {
  question: string;
  answer: string;
}

const turnAad = (id: string, turn: number) => `conversation/${id}/turn/${turn}`;

/** A turn as kept: its number and its sealed body. */
export interface SealedTurn {
  turn: number;
  body: Uint8Array;
}

/** Where the sealed turns are kept (D33): at once from the embedded database, later from PostgreSQL. */
export interface ConversationRecords {
  /** Who the conversation `id` belongs to, if it exists. */
  owner(id: string): Awaitable<string | undefined>;
  /** Its turns in order. */
  turns(id: string): Awaitable<SealedTurn[]>;
  /**
   * Appends the next turn of conversation `id` (made first when `create`), its body sealed by
   * `seal` for the number it gets; appends to one conversation are serialised (on every node).
   */
  append(user: string, id: string, create: boolean, seal: (turn: number) => Uint8Array, at: number): Awaitable<void>;
  /** The rows kept of `user`. */
  rowsOf(user: string): Awaitable<number>;
  /** Erases `user`'s conversations; how many. */
  deleteUser(user: string): Awaitable<number>;
}

/** The embedded store: tables of the data folder's SQLite database. */
export class SqliteConversationRecords implements ConversationRecords {
  constructor(private readonly db: Database) {}

  owner(id: string): string | undefined {
    return this.db.query<{ user_id: string }, [string]>("SELECT user_id FROM conversations WHERE id = ?").get(id)?.user_id;
  }

  turns(id: string): SealedTurn[] {
    return this.db.query<SealedTurn, [string]>("SELECT turn, body FROM conversation_turns WHERE conversation_id = ? ORDER BY turn").all(id);
  }

  append(user: string, id: string, create: boolean, seal: (turn: number) => Uint8Array, at: number): void {
    this.db.transaction(() => {
      if (create) this.db.query("INSERT INTO conversations (id, user_id, created_at) VALUES (?, ?, ?)").run(id, user, at);
      const next = this.db
        .query<{ n: number }, [string]>("SELECT count(*) AS n FROM conversation_turns WHERE conversation_id = ?")
        .get(id)!.n;
      this.db
        .query("INSERT INTO conversation_turns (conversation_id, turn, user_id, body, created_at) VALUES (?, ?, ?, ?, ?)")
        .run(id, next, user, seal(next), at);
    })();
  }

  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT count(*) FROM conversations WHERE user_id = ?1) + (SELECT count(*) FROM conversation_turns WHERE user_id = ?1) AS n",
      )
      .get(user)!.n;
  }

  deleteUser(user: string): number {
    this.db.query("DELETE FROM conversation_turns WHERE user_id = ?").run(user);
    return this.db.query("DELETE FROM conversations WHERE user_id = ?").run(user).changes;
  }
}

export class Conversations {
  constructor(
    private readonly records: ConversationRecords,
    private readonly keys: UserKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** The user's conversation, or undefined when it is not theirs or does not exist. */
  async turns(user: string, id: string): Promise<Turn[] | undefined> {
    const owner = await this.records.owner(id);
    if (owner !== user) return undefined;
    return (await this.records.turns(id)).map((r) => JSON.parse(this.openTurn(user, id, r.turn, r.body)) as Turn);
  }

  /** Each turn is bound to its conversation and number; the first version bound only the former. */
  private openTurn(user: string, id: string, turn: number, sealed: Uint8Array): string {
    try {
      return this.keys.openFor(user, sealed, turnAad(id, turn)).toString("utf8");
    } catch (error) {
      if (!(error instanceof DecryptError)) throw error;
      return this.keys.openFor(user, sealed, `conversation/${id}`).toString("utf8");
    }
  }

  /** Appends a turn; creates the conversation when `id` is undefined. Returns its id. */
  async append(user: string, id: string | undefined, turn: Turn): Promise<string> {
    const conversation = id ?? newId(ID_PREFIX.conversation);
    const body = JSON.stringify(turn);
    await this.records.append(user, conversation, !id, (n) => this.keys.sealFor(user, body, turnAad(conversation, n)), this.now());
    return conversation;
  }

  /** The rows this room keeps of `user` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): Awaitable<number> {
    return this.records.rowsOf(user);
  }

  /** Erases `user`'s conversations: at once from the embedded store (inside the deletion's SQLite transaction), later from the shared one. */
  deleteUser(user: string): Awaitable<number> {
    return this.records.deleteUser(user);
  }

  /** The erase and count of a user's deletion inside its PostgreSQL transaction (D33); refused for the embedded store. */
  within(tx: postgres.TransactionSql): Pick<Conversations, "rowsOf" | "deleteUser"> {
    const records = inTransaction(this.records, tx, "conversations");
    return { rowsOf: (user) => records.rowsOf(user), deleteUser: (user) => records.deleteUser(user) };
  }
}
