// The authorization server's rows in the shared PostgreSQL (D33), so that every node of one
// database honours what another issued: a code made on one node is redeemed once on any (the
// redemption is one statement: the code marked used where it was not, and the grant made from
// that row), a rotated refresh token is refused on every node (marked used where it was not),
// a session made on one signs in on all, and revoking a grant locks its row, so no node records
// an access token under it afterwards that the revocation would miss.
// PostgreSQL holds what the embedded store holds at rest (oauth_* tables, store.ts): codes,
// refresh tokens, client secrets and session ids as SHA-256 hashes only (nothing a client could
// present); user ids, client names and redirect URIs, PKCE challenges, nonces, scopes, access
// tokens' ids (jti) and times, as the embedded tables do.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically, type SharedQueries } from "../store/shared";
import {
  type ClientRow,
  CODE_KEPT_SECONDS,
  type CodeRow,
  EMPTY_GRANT_SECONDS,
  type GrantRow,
  type IssuedAccess,
  type OAuthStore,
  type RefreshRow,
  type SessionRow,
  UNUSED_CLIENT_KEPT_SECONDS,
} from "./store";

export const OAUTH_TABLES = {
  clients: "corpus_oauth_clients",
  grants: "corpus_oauth_grants",
  codes: "corpus_oauth_codes",
  refresh: "corpus_oauth_refresh_tokens",
  access: "corpus_oauth_access_tokens",
  sessions: "corpus_oauth_sessions",
} as const;

const T = OAUTH_TABLES;

export const oauthPgMigrations: PgMigration[] = [
  {
    id: "oauth-pg-001-server",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${T.clients} (
        client_id text PRIMARY KEY,
        kind text NOT NULL,
        name text NOT NULL,
        redirect_uris text NOT NULL,
        auth_method text NOT NULL,
        secret_hash text,
        grant_types text NOT NULL,
        created_at bigint NOT NULL,
        fetched_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${T.clients}_created ON ${T.clients} (created_at)`);
      await tx.unsafe(`CREATE TABLE ${T.grants} (
        grant_id text PRIMARY KEY,
        client_id text NOT NULL,
        user_id text NOT NULL,
        scopes text NOT NULL,
        created_at bigint NOT NULL,
        revoked_at bigint
      )`);
      await tx.unsafe(`CREATE INDEX ${T.grants}_user ON ${T.grants} (user_id)`);
      await tx.unsafe(`CREATE INDEX ${T.grants}_client ON ${T.grants} (client_id)`);
      await tx.unsafe(`CREATE TABLE ${T.codes} (
        code_hash text PRIMARY KEY,
        client_id text NOT NULL,
        user_id text NOT NULL,
        redirect_uri text NOT NULL,
        code_challenge text NOT NULL,
        scopes text NOT NULL,
        expires_at bigint NOT NULL,
        grant_id text,
        nonce text
      )`);
      await tx.unsafe(`CREATE INDEX ${T.codes}_user ON ${T.codes} (user_id)`);
      await tx.unsafe(`CREATE INDEX ${T.codes}_client ON ${T.codes} (client_id)`);
      await tx.unsafe(`CREATE TABLE ${T.refresh} (
        token_hash text PRIMARY KEY,
        grant_id text NOT NULL,
        expires_at bigint NOT NULL,
        used_at bigint
      )`);
      await tx.unsafe(`CREATE INDEX ${T.refresh}_grant ON ${T.refresh} (grant_id)`);
      await tx.unsafe(`CREATE TABLE ${T.access} (
        jti text PRIMARY KEY,
        grant_id text NOT NULL,
        expires_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${T.access}_grant ON ${T.access} (grant_id)`);
      await tx.unsafe(`CREATE TABLE ${T.sessions} (
        session_hash text PRIMARY KEY,
        user_id text NOT NULL,
        csrf text NOT NULL,
        expires_at bigint NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${T.sessions}_user ON ${T.sessions} (user_id)`);
    },
  },
];

/** Connections or a transaction: a statement runs alike on either. */

// bigint columns come back as text: times in seconds fit a double exactly.
const num = (v: unknown): number => Number(v);
const orNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

const clientOf = (r: Record<string, unknown>): ClientRow =>
  ({ ...r, created_at: num(r.created_at), fetched_at: num(r.fetched_at) }) as unknown as ClientRow;
const codeOf = (r: Record<string, unknown>): CodeRow => ({ ...r, expires_at: num(r.expires_at) }) as unknown as CodeRow;
const grantOf = (r: Record<string, unknown>): GrantRow =>
  ({ ...r, created_at: num(r.created_at), revoked_at: orNull(r.revoked_at) }) as unknown as GrantRow;
const issuedOf = (r: Record<string, unknown>): IssuedAccess => ({ jti: String(r.jti), expires_at: num(r.expires_at) });

/** A client `c` no grant names, nor a code (store.ts UNUSED_CLIENT). */
const unusedClient = (sql: SharedQueries) =>
  sql`NOT EXISTS (SELECT 1 FROM ${sql(T.grants)} g WHERE g.client_id = c.client_id)
    AND NOT EXISTS (SELECT 1 FROM ${sql(T.codes)} k WHERE k.client_id = c.client_id)`;

export class PostgresOAuthStore implements OAuthStore {
  constructor(private readonly sql: SharedQueries) {}

  /** The same store inside `tx` (a deletion's: users/deletion.ts): what it erases commits or rolls back with the rest. */
  within(tx: postgres.TransactionSql): PostgresOAuthStore {
    return new PostgresOAuthStore(tx);
  }

  async client(clientId: string): Promise<ClientRow | null> {
    const [row] = await this.sql`SELECT * FROM ${this.sql(T.clients)} WHERE client_id = ${clientId}`;
    return row ? clientOf(row) : null;
  }

  async countClients(): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(T.clients)}`;
    return num(row!.n);
  }

  async putClient(row: ClientRow): Promise<void> {
    await this
      .sql`INSERT INTO ${this.sql(T.clients)} (client_id, kind, name, redirect_uris, auth_method, secret_hash, grant_types, created_at, fetched_at)
      VALUES (${row.client_id}, ${row.kind}, ${row.name}, ${row.redirect_uris}, ${row.auth_method}, ${row.secret_hash}, ${row.grant_types}, ${row.created_at}, ${row.fetched_at})
      ON CONFLICT (client_id) DO UPDATE SET kind = EXCLUDED.kind, name = EXCLUDED.name, redirect_uris = EXCLUDED.redirect_uris,
        auth_method = EXCLUDED.auth_method, secret_hash = EXCLUDED.secret_hash, grant_types = EXCLUDED.grant_types,
        created_at = EXCLUDED.created_at, fetched_at = EXCLUDED.fetched_at`;
  }

  async dropUnusedClients(before: number, limit: number): Promise<number> {
    const table = this.sql(T.clients);
    return (
      await this.sql`DELETE FROM ${table} WHERE client_id IN (
        SELECT c.client_id FROM ${table} c WHERE c.created_at < ${before} AND ${unusedClient(this.sql)}
        ORDER BY c.created_at LIMIT ${limit})`
    ).count;
  }

  async putCode(row: CodeRow): Promise<void> {
    await this
      .sql`INSERT INTO ${this.sql(T.codes)} (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, expires_at, grant_id, nonce)
      VALUES (${row.code_hash}, ${row.client_id}, ${row.user_id}, ${row.redirect_uri}, ${row.code_challenge}, ${row.scopes}, ${row.expires_at}, NULL, ${row.nonce ?? null})`;
  }

  async code(codeHash: string): Promise<CodeRow | null> {
    const [row] = await this.sql`SELECT * FROM ${this.sql(T.codes)} WHERE code_hash = ${codeHash}`;
    return row ? codeOf(row) : null;
  }

  async redeemCode(codeHash: string, grant: GrantRow): Promise<boolean> {
    // The UPDATE locks the code's row: a second redemption waits, then finds grant_id set and changes nothing.
    const made = await this.sql`
      WITH used AS (
        UPDATE ${this.sql(T.codes)} SET grant_id = ${grant.grant_id} WHERE code_hash = ${codeHash} AND grant_id IS NULL RETURNING code_hash
      )
      INSERT INTO ${this.sql(T.grants)} (grant_id, client_id, user_id, scopes, created_at, revoked_at)
      SELECT ${grant.grant_id}, ${grant.client_id}, ${grant.user_id}, ${grant.scopes}, ${grant.created_at}, NULL FROM used`;
    return made.count === 1;
  }

  async grant(grantId: string): Promise<GrantRow | null> {
    const [row] = await this.sql`SELECT * FROM ${this.sql(T.grants)} WHERE grant_id = ${grantId}`;
    return row ? grantOf(row) : null;
  }

  async liveGrants(user: string): Promise<GrantRow[]> {
    const rows = await this.sql`SELECT * FROM ${this.sql(T.grants)} WHERE user_id = ${user} AND revoked_at IS NULL ORDER BY created_at`;
    return rows.map(grantOf);
  }

  async revokeGrant(grantId: string, at: number): Promise<IssuedAccess[]> {
    // The grant's row locked first (its UPDATE): a putAccess under it waits for this transaction,
    // then finds it revoked; one that came before is committed, so the SELECT below sees it.
    return atomically(this.sql, async (tx) => {
      await tx`UPDATE ${tx(T.grants)} SET revoked_at = ${at} WHERE grant_id = ${grantId} AND revoked_at IS NULL`;
      await tx`DELETE FROM ${tx(T.refresh)} WHERE grant_id = ${grantId}`;
      return (await tx`SELECT jti, expires_at FROM ${tx(T.access)} WHERE grant_id = ${grantId}`).map(issuedOf);
    });
  }

  async putRefresh(tokenHash: string, grantId: string, expiresAt: number): Promise<void> {
    await this
      .sql`INSERT INTO ${this.sql(T.refresh)} (token_hash, grant_id, expires_at, used_at) VALUES (${tokenHash}, ${grantId}, ${expiresAt}, NULL)`;
  }

  async refresh(tokenHash: string): Promise<RefreshRow | null> {
    const [row] = await this.sql`SELECT grant_id, expires_at, used_at FROM ${this.sql(T.refresh)} WHERE token_hash = ${tokenHash}`;
    return row ? { grant_id: String(row.grant_id), expires_at: num(row.expires_at), used_at: orNull(row.used_at) } : null;
  }

  async useRefresh(tokenHash: string, at: number): Promise<boolean> {
    const used = await this.sql`UPDATE ${this.sql(T.refresh)} SET used_at = ${at} WHERE token_hash = ${tokenHash} AND used_at IS NULL`;
    return used.count === 1;
  }

  async putAccess(jti: string, grantId: string, expiresAt: number): Promise<boolean> {
    // FOR SHARE: the grant cannot be revoked between this check and the insert's commit.
    const put = await this.sql`
      WITH live AS (
        SELECT grant_id FROM ${this.sql(T.grants)} WHERE grant_id = ${grantId} AND revoked_at IS NULL FOR SHARE
      )
      INSERT INTO ${this.sql(T.access)} (jti, grant_id, expires_at) SELECT ${jti}, grant_id, ${expiresAt} FROM live`;
    return put.count === 1;
  }

  async accessGrant(jti: string): Promise<string | undefined> {
    const [row] = await this.sql<{ grant_id: string }[]>`SELECT grant_id FROM ${this.sql(T.access)} WHERE jti = ${jti}`;
    return row?.grant_id;
  }

  async putSession(sessionHash: string, user: string, csrf: string, expiresAt: number): Promise<void> {
    await this
      .sql`INSERT INTO ${this.sql(T.sessions)} (session_hash, user_id, csrf, expires_at) VALUES (${sessionHash}, ${user}, ${csrf}, ${expiresAt})`;
  }

  async session(sessionHash: string): Promise<SessionRow | null> {
    const [row] = await this.sql`SELECT user_id, csrf, expires_at FROM ${this.sql(T.sessions)} WHERE session_hash = ${sessionHash}`;
    return row ? { user_id: String(row.user_id), csrf: String(row.csrf), expires_at: num(row.expires_at) } : null;
  }

  async deleteSession(sessionHash: string): Promise<void> {
    await this.sql`DELETE FROM ${this.sql(T.sessions)} WHERE session_hash = ${sessionHash}`;
  }

  async rowsOf(user: string): Promise<number> {
    const sql = this.sql;
    const [row] = await sql<{ n: string }[]>`SELECT
      (SELECT count(*) FROM ${sql(T.sessions)} WHERE user_id = ${user})
      + (SELECT count(*) FROM ${sql(T.grants)} WHERE user_id = ${user})
      + (SELECT count(*) FROM ${sql(T.codes)} WHERE user_id = ${user}) AS n`;
    return num(row!.n);
  }

  async forgetUser(user: string, _at: number): Promise<IssuedAccess[]> {
    const sql = this.sql;
    // One statement (atomic on its own, or inside a deletion's transaction): the grants deleted
    // with their tokens; the access tokens of those not revoked yet are answered, to revoke.
    // Nothing here names the user afterwards (D25): the revocations live on by jti only.
    const rows = await sql`
      WITH s AS (DELETE FROM ${sql(T.sessions)} WHERE user_id = ${user}),
        k AS (DELETE FROM ${sql(T.codes)} WHERE user_id = ${user}),
        g AS (DELETE FROM ${sql(T.grants)} WHERE user_id = ${user} RETURNING grant_id, revoked_at),
        r AS (DELETE FROM ${sql(T.refresh)} WHERE grant_id IN (SELECT grant_id FROM g)),
        a AS (DELETE FROM ${sql(T.access)} WHERE grant_id IN (SELECT grant_id FROM g) RETURNING jti, expires_at, grant_id)
      SELECT a.jti, a.expires_at FROM a JOIN g ON g.grant_id = a.grant_id WHERE g.revoked_at IS NULL`;
    return rows.map(issuedOf);
  }

  async purgeExpired(nowSec: number): Promise<number> {
    const sql = this.sql;
    let n = 0;
    n += (await sql`DELETE FROM ${sql(T.codes)} WHERE expires_at < ${nowSec - CODE_KEPT_SECONDS}`).count;
    n += (await sql`DELETE FROM ${sql(T.refresh)} WHERE expires_at < ${nowSec}`).count;
    n += (await sql`DELETE FROM ${sql(T.sessions)} WHERE expires_at < ${nowSec}`).count;
    n += (await sql`DELETE FROM ${sql(T.access)} WHERE expires_at < ${nowSec}`).count;
    n += (
      await sql`DELETE FROM ${sql(T.grants)} g WHERE g.created_at < ${nowSec - EMPTY_GRANT_SECONDS}
        AND NOT EXISTS (SELECT 1 FROM ${sql(T.refresh)} r WHERE r.grant_id = g.grant_id)
        AND NOT EXISTS (SELECT 1 FROM ${sql(T.access)} a WHERE a.grant_id = g.grant_id)`
    ).count;
    n += (await sql`DELETE FROM ${sql(T.clients)} c WHERE c.created_at < ${nowSec - UNUSED_CLIENT_KEPT_SECONDS} AND ${unusedClient(sql)}`)
      .count;
    return n;
  }
}
