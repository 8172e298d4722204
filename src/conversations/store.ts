// Conversations of shape C (D9): the turns of a user's conversation, sealed with the user's
// data key, so a follow-up is retrieved with the earlier questions as context.
import type { Database } from "bun:sqlite";
import { DecryptError } from "../crypto/aead";
import type { UserKeys } from "../crypto/user-keys";
import { ID_PREFIX, newId } from "../ids";
import type { Migration } from "../store/migrations";

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

export class Conversations {
  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    private readonly now: () => number = Date.now,
  ) {}

  /** The user's conversation, or undefined when it is not theirs or does not exist. */
  turns(user: string, id: string): Turn[] | undefined {
    const owner = this.db.query<{ user_id: string }, [string]>("SELECT user_id FROM conversations WHERE id = ?").get(id);
    if (!owner || owner.user_id !== user) return undefined;
    return this.db
      .query<{ turn: number; body: Uint8Array }, [string]>(
        "SELECT turn, body FROM conversation_turns WHERE conversation_id = ? ORDER BY turn",
      )
      .all(id)
      .map((r) => JSON.parse(this.openTurn(user, id, r.turn, r.body)) as Turn);
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
  append(user: string, id: string | undefined, turn: Turn): string {
    const conversation = id ?? newId(ID_PREFIX.conversation);
    this.db.transaction(() => {
      if (!id) this.db.query("INSERT INTO conversations (id, user_id, created_at) VALUES (?, ?, ?)").run(conversation, user, this.now());
      const next = this.db
        .query<{ n: number }, [string]>("SELECT count(*) AS n FROM conversation_turns WHERE conversation_id = ?")
        .get(conversation)!.n;
      this.db
        .query("INSERT INTO conversation_turns (conversation_id, turn, user_id, body, created_at) VALUES (?, ?, ?, ?, ?)")
        .run(conversation, next, user, this.keys.sealFor(user, JSON.stringify(turn), turnAad(conversation, next)), this.now());
    })();
    return conversation;
  }

  /** The rows this room keeps of `user` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
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
