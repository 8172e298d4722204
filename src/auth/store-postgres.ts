// The auth room in the shared PostgreSQL (D33): tokens issued, revoked ids, per-user not-before
// stamps. Nothing of it is cached on a node: a revocation, or a user's deletion, made on one
// node holds on every other at the next request, because every request reads its token's
// revocation here, in one statement of two primary-key lookups (the token's and its parent's
// ids, the user's keyed tag); scripts/bench/token-revocation.ts measures what that costs.
// PostgreSQL holds what the embedded store holds at rest (auth_tokens, auth_revoked_tokens,
// auth_user_not_before): the token ids, their user ids, scopes and times; the stamps keyed by
// the user's keyed hash (UserTags), never the id, so they outlive the user's data naming no one.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { type AuthStore, type IssuedRecord, revokedByStamp, type UserTags } from "./store";

export const TOKENS_TABLE = "corpus_auth_tokens";
export const REVOKED_TABLE = "corpus_auth_revoked_tokens";
export const NOT_BEFORE_TABLE = "corpus_auth_user_not_before";

export const authPgMigrations: PgMigration[] = [
  {
    id: "auth-pg-001-tokens",
    async up(tx) {
      await tx.unsafe(`CREATE TABLE ${TOKENS_TABLE} (
        jti text PRIMARY KEY,
        user_id text NOT NULL,
        scopes text NOT NULL,
        issued_at bigint NOT NULL,
        expires_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${TOKENS_TABLE}_user ON ${TOKENS_TABLE} (user_id)`);
      await tx.unsafe(`CREATE TABLE ${REVOKED_TABLE} (
        jti text PRIMARY KEY,
        expires_at bigint NOT NULL,
        revoked_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE TABLE ${NOT_BEFORE_TABLE} (
        user_tag text PRIMARY KEY,
        not_before bigint NOT NULL
      )`);
    },
  },
  {
    // As the embedded store's auth-002-milliseconds (store.ts).
    id: "auth-pg-002-milliseconds",
    async up(tx) {
      await tx.unsafe(`ALTER TABLE ${TOKENS_TABLE} ADD COLUMN issued_ms bigint`);
      await tx.unsafe(`UPDATE ${NOT_BEFORE_TABLE} SET not_before = not_before * 1000 + 999`);
    },
  },
];

/** The node's connections, or a transaction of them (a deletion's: users/deletion.ts). */

export class PostgresAuthStore implements AuthStore {
  constructor(
    private readonly sql: SharedQueries,
    private readonly tags: UserTags,
    private readonly now: () => number = Date.now,
  ) {}

  /** The same store writing inside `tx`: a deletion's stamp and erase commit or roll back with the rest of it. */
  within(tx: postgres.TransactionSql): PostgresAuthStore {
    return new PostgresAuthStore(tx, this.tags, this.now);
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  async recordIssued(t: IssuedRecord): Promise<void> {
    await this.sql`INSERT INTO ${this.sql(TOKENS_TABLE)} (jti, user_id, scopes, issued_at, issued_ms, expires_at)
      VALUES (${t.jti}, ${t.user}, ${t.scopes.join(" ")}, ${t.issuedAt}, ${t.issuedMs ?? null}, ${t.expiresAt})`;
  }

  async revokeToken(jti: string, expiresAt: number): Promise<void> {
    await this.sql`INSERT INTO ${this.sql(REVOKED_TABLE)} (jti, expires_at, revoked_at) VALUES (${jti}, ${expiresAt}, ${this.seconds()})
      ON CONFLICT (jti) DO UPDATE SET expires_at = EXCLUDED.expires_at, revoked_at = EXCLUDED.revoked_at`;
  }

  async issued(jti: string): Promise<{ user: string; expiresAt: number } | undefined> {
    const [row] = await this.sql<{ user_id: string; expires_at: string }[]>`
      SELECT user_id, expires_at FROM ${this.sql(TOKENS_TABLE)} WHERE jti = ${jti}`;
    return row ? { user: row.user_id, expiresAt: Number(row.expires_at) } : undefined;
  }

  async revokeUser(user: string, atMs = Math.floor(this.now())): Promise<number> {
    // The stamp written and the still valid tokens counted in one statement (a data-modifying
    // WITH runs whether or not it is read).
    const [row] = await this.sql<{ n: string }[]>`
      WITH stamp AS (
        INSERT INTO ${this.sql(NOT_BEFORE_TABLE)} (user_tag, not_before) VALUES (${this.tags.of(user)}, ${atMs})
        ON CONFLICT (user_tag) DO UPDATE SET not_before = EXCLUDED.not_before
      )
      SELECT count(*) AS n FROM ${this.sql(TOKENS_TABLE)} WHERE user_id = ${user} AND expires_at > ${Math.floor(atMs / 1000)}`;
    return Number(row!.n);
  }

  async isRevoked(user: string, jti: string | undefined, issuedAt: number | undefined, parentJti?: string): Promise<boolean> {
    const ids = [jti, parentJti].filter((id): id is string => id !== undefined);
    const [row] = await this.sql<{ by_id: boolean; not_before: string | null; issued_ms: string | null }[]>`
      SELECT EXISTS (SELECT 1 FROM ${this.sql(REVOKED_TABLE)} WHERE jti = ANY(${ids}::text[])) AS by_id,
        (SELECT not_before FROM ${this.sql(NOT_BEFORE_TABLE)} WHERE user_tag = ${this.tags.of(user)}) AS not_before,
        (SELECT issued_ms FROM ${this.sql(TOKENS_TABLE)} WHERE jti = ${jti ?? null}) AS issued_ms`;
    if (row!.by_id) return true;
    if (row!.not_before === null) return false;
    return revokedByStamp(Number(row!.not_before), issuedAt, () => (row!.issued_ms === null ? null : Number(row!.issued_ms)));
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(TOKENS_TABLE)} WHERE user_id = ${user}`;
    return Number(row!.n);
  }

  async forgetIssued(user: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(TOKENS_TABLE)} WHERE user_id = ${user}`).count;
  }

  async purgeExpired(): Promise<number> {
    const now = this.seconds();
    const tokens = await this.sql`DELETE FROM ${this.sql(TOKENS_TABLE)} WHERE expires_at < ${now}`;
    const revoked = await this.sql`DELETE FROM ${this.sql(REVOKED_TABLE)} WHERE expires_at < ${now}`;
    return tokens.count + revoked.count;
  }
}
