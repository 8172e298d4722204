// The auth room in the shared PostgreSQL (D33): tokens issued, revoked ids, per-user not-before
// stamps. Nothing of it is cached on a node: a revocation, or a user's deletion, made on one
// node holds on every other at the next request, because every request reads its token's
// revocation here, in one statement of two primary-key lookups (the token's and its parent's
// ids, the user's keyed tag); scripts/bench/token-revocation.ts measures what that costs.
// PostgreSQL holds what the embedded store holds at rest (auth_tokens, auth_revoked_tokens,
// auth_user_not_before): the token ids, their user ids, scopes and times; the stamps keyed by
// the user's keyed hash (UserTags), never the id, so they outlive the user's data naming no one.
// A write that must not outlive its token (D25) runs in whileStanding's transaction: it takes the
// user's lock shared and reads the revocation there; a user's revocation (revokeUser, first in the
// deletion's transaction) takes it exclusive. So a write either commits before the deletion
// erases (and is erased with the rest) or waits for it and is refused: never a row after it.
import type postgres from "postgres";
import { USER_KEYS_TABLE } from "../crypto/user-keys-postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { type Awaitable, atomically, type SharedQueries } from "../store/shared";
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

/** The transaction-scoped advisory lock of a user's writes: a bigint of their keyed tag (a collision only serializes two users). */
const userLock = (tag: string) => BigInt.asIntN(64, BigInt(`0x${tag.slice(0, 16)}`)).toString();

/** Revoked by its id (or its parent's), or issued at or before its user's not-before stamp. */
/** A token read revoked from one statement's row: by its id, or by the user's stamp (milliseconds, revokedByStamp). */
const revokedBy = (row: { by_id: boolean; not_before: string | null; issued_ms: string | null }, issuedAt: number | undefined): boolean =>
  row.by_id ||
  (row.not_before !== null &&
    revokedByStamp(Number(row.not_before), issuedAt, () => (row.issued_ms === null ? null : Number(row.issued_ms))));

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
    // Inside a transaction (a deletion's), the user's writes in flight finish first and later ones wait for its end (whileStanding).
    await this.sql`SELECT pg_advisory_xact_lock(${userLock(this.tags.of(user))}::bigint)`;
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
    return revokedBy(row!, issuedAt);
  }

  async isRevokedWithKey(
    user: string,
    jti: string | undefined,
    issuedAt: number | undefined,
    parentJti?: string,
  ): Promise<{ revoked: boolean; wrapped: Uint8Array | undefined }> {
    const ids = [jti, parentJti].filter((id): id is string => id !== undefined);
    const [row] = await this.sql<{ by_id: boolean; not_before: string | null; issued_ms: string | null; wrapped: Uint8Array | null }[]>`
      SELECT EXISTS (SELECT 1 FROM ${this.sql(REVOKED_TABLE)} WHERE jti = ANY(${ids}::text[])) AS by_id,
        (SELECT not_before FROM ${this.sql(NOT_BEFORE_TABLE)} WHERE user_tag = ${this.tags.of(user)}) AS not_before,
        (SELECT issued_ms FROM ${this.sql(TOKENS_TABLE)} WHERE jti = ${jti ?? null}) AS issued_ms,
        (SELECT wrapped_key FROM ${this.sql(USER_KEYS_TABLE)} WHERE user_id = ${user}) AS wrapped`;
    return { revoked: revokedBy(row!, issuedAt), wrapped: row!.wrapped ? new Uint8Array(row!.wrapped) : undefined };
  }

  /**
   * `work` in a transaction that holds `user`'s lock shared and in which the token was read
   * unrevoked (`refused` thrown otherwise): what it writes commits only while the token stands.
   * The lock is taken before the revocation is read (two statements: READ COMMITTED reads what
   * committed before each statement began, so the read must begin after the wait).
   */
  whileStanding<T>(
    token: { user: string; jti: string | undefined; issuedAt: number | undefined; parentJti?: string },
    work: (tx: postgres.TransactionSql) => Awaitable<T>,
    refused: () => Error,
  ): Promise<T> {
    return atomically(this.sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock_shared(${userLock(this.tags.of(token.user))}::bigint)`;
      if (await new PostgresAuthStore(tx, this.tags, this.now).isRevoked(token.user, token.jti, token.issuedAt, token.parentJti))
        throw refused();
      return work(tx);
    });
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
