// MCP sessions in the shared PostgreSQL (D33): a session opened at `initialize` on one node is
// used, or ended, on any other (the Mcp-Session-Id of a request the load balancer sends
// elsewhere is not unknown there). Using a session is one statement: its last use moved where it
// is the user's and not expired. The caps of the embedded store hold: a user's oldest session
// goes past MAX_SESSIONS_PER_USER; past MAX_SESSIONS (all nodes together) no new one is opened
// unless expired ones make room (counted, then inserted: nodes opening at once may pass the cap
// by as many as open together, never without bound). Expired sessions are deleted by the sweep.
// PostgreSQL holds: the session id as a SHA-256 hash only (nothing a client could present), the
// user id, the protocol version and the last use; the embedded store holds them in memory.
import { createHash } from "node:crypto";
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { MAX_SESSIONS, MAX_SESSIONS_PER_USER, type McpSessionStore, SESSION_TTL_MS, type Session } from "./sessions";

export const MCP_SESSIONS_TABLE = "corpus_mcp_sessions";

export const mcpSessionPgMigrations: PgMigration[] = [
  {
    id: "mcp-pg-001-sessions",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${MCP_SESSIONS_TABLE} (
        id_hash text PRIMARY KEY,
        opened bigserial NOT NULL,
        user_id text NOT NULL,
        version text NOT NULL,
        used_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${MCP_SESSIONS_TABLE}_user ON ${MCP_SESSIONS_TABLE} (user_id, opened)`);
      await tx.unsafe(`CREATE INDEX ${MCP_SESSIONS_TABLE}_used ON ${MCP_SESSIONS_TABLE} (used_at)`);
    },
  },
];

const hashOf = (id: string) => createHash("sha256").update(id).digest("base64url");

export class PostgresMcpSessions implements McpSessionStore {
  constructor(
    private readonly sql: SharedQueries,
    private readonly now: () => number = Date.now,
    /** Sessions all nodes hold at most (MAX_SESSIONS; a test gives a smaller one). */
    private readonly max = MAX_SESSIONS,
  ) {}

  /** The same store inside `tx` (a deletion's: users/deletion.ts): what it erases commits or rolls back with the rest. */
  within(tx: postgres.TransactionSql): PostgresMcpSessions {
    return new PostgresMcpSessions(tx, this.now, this.max);
  }

  async open(user: string, version: string): Promise<string | undefined> {
    const t = this.now();
    const table = this.sql(MCP_SESSIONS_TABLE);
    // Room for one more of the user's: the first opened beyond the cap go first.
    await this.sql`DELETE FROM ${table} WHERE id_hash IN (
      SELECT id_hash FROM ${table} WHERE user_id = ${user} ORDER BY opened DESC OFFSET ${MAX_SESSIONS_PER_USER - 1})`;
    const [held] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${table}`;
    if (Number(held!.n) >= this.max && (await this.sweep()) === 0) return undefined;
    const id = crypto.randomUUID();
    await this.sql`INSERT INTO ${table} (id_hash, user_id, version, used_at) VALUES (${hashOf(id)}, ${user}, ${version}, ${t})`;
    return id;
  }

  async use(id: string, user: string): Promise<Session | undefined> {
    const t = this.now();
    const [row] = await this.sql<{ version: string }[]>`UPDATE ${this.sql(MCP_SESSIONS_TABLE)} SET used_at = ${t}
      WHERE id_hash = ${hashOf(id)} AND user_id = ${user} AND used_at >= ${t - SESSION_TTL_MS}
      RETURNING version`;
    return row ? { version: row.version, user, at: t } : undefined;
  }

  async close(id: string, user: string): Promise<boolean> {
    const t = this.now();
    const ended = await this.sql`DELETE FROM ${this.sql(MCP_SESSIONS_TABLE)}
      WHERE id_hash = ${hashOf(id)} AND user_id = ${user} AND used_at >= ${t - SESSION_TTL_MS}`;
    return ended.count > 0;
  }

  async sweep(): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(MCP_SESSIONS_TABLE)} WHERE used_at < ${this.now() - SESSION_TTL_MS}`).count;
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(MCP_SESSIONS_TABLE)} WHERE user_id = ${user}`;
    return Number(row!.n);
  }

  async forget(user: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(MCP_SESSIONS_TABLE)} WHERE user_id = ${user}`).count;
  }
}
