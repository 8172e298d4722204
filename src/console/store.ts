// The operator console's sessions (D35): apart from the OAuth pages' (their cookie is Path=/
// and lives 12 hours), short-lived, each kept as the sha256 of its id with the CSRF token of its
// forms. A session names an account; whether that account is an operator is asked again at each
// request (Accounts.isOperator), so a removed or demoted operator's session is nothing at once.
import type { Database } from "bun:sqlite";
import { secret } from "../oauth/context";
import { sha256 } from "../oauth/store";
import type { Migration } from "../store/migrations";

export const consoleMigrations: Migration[] = [
  {
    id: "console-001-sessions",
    up(db) {
      db.exec(`CREATE TABLE console_sessions (
        session_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        csrf TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      )`);
      db.exec("CREATE INDEX console_sessions_user ON console_sessions (user_id)");
      db.exec("CREATE INDEX console_sessions_expiry ON console_sessions (expires_at)");
    },
  },
];

/** A console session lasts this long from its sign-in, however busy (short-lived, D35). */
export const CONSOLE_SESSION_SECONDS = 30 * 60;
/** Live sessions one operator may hold; a new sign-in beyond ends the oldest (nothing grows unbounded). */
export const MAX_SESSIONS_PER_OPERATOR = 8;

export interface ConsoleSession {
  user: string;
  csrf: string;
}

export class ConsoleSessions {
  constructor(
    private readonly db: Database,
    private readonly now: () => number = Date.now,
  ) {}

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** A new session of `user`; the expired ones go, and the oldest of `user` beyond the cap. */
  create(user: string): { id: string; csrf: string } {
    const id = secret();
    const csrf = secret();
    const at = this.seconds();
    this.db.transaction(() => {
      this.db.query("DELETE FROM console_sessions WHERE expires_at < ?").run(at);
      this.db
        .query(
          `DELETE FROM console_sessions WHERE session_hash IN (
             SELECT session_hash FROM console_sessions WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT -1 OFFSET ?)`,
        )
        .run(user, MAX_SESSIONS_PER_OPERATOR - 1);
      this.db
        .query("INSERT INTO console_sessions (session_hash, user_id, csrf, created_at, expires_at) VALUES (?, ?, ?, ?, ?)")
        .run(sha256(id), user, csrf, at, at + CONSOLE_SESSION_SECONDS);
    })();
    return { id, csrf };
  }

  /** The live session of a cookie's id, or undefined. */
  get(id: string | undefined): ConsoleSession | undefined {
    if (!id) return undefined;
    const row = this.db
      .query<{ user_id: string; csrf: string; expires_at: number }, [string]>(
        "SELECT user_id, csrf, expires_at FROM console_sessions WHERE session_hash = ?",
      )
      .get(sha256(id));
    if (!row || row.expires_at < this.seconds()) return undefined;
    return { user: row.user_id, csrf: row.csrf };
  }

  end(id: string): void {
    this.db.query("DELETE FROM console_sessions WHERE session_hash = ?").run(sha256(id));
  }

  /** Ends every console session of `user` (a password changed, an account removed, their data deleted). */
  forgetUser(user: string): number {
    return this.db.query("DELETE FROM console_sessions WHERE user_id = ?").run(user).changes;
  }

  /** Rows of `user`, expired or not (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM console_sessions WHERE user_id = ?").get(user)!.n;
  }

  /** Live sessions of `user` (tests, and the cap). */
  countOf(user: string): number {
    return this.db
      .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM console_sessions WHERE user_id = ? AND expires_at >= ?")
      .get(user, this.seconds())!.n;
  }
}
