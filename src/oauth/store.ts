// The built-in authorization server's tables (D27): registered clients, authorization codes,
// grants (one per consent: a refresh-token family), refresh tokens, the access tokens issued
// under each grant, and login sessions. Codes, refresh tokens and session ids are kept as
// SHA-256 hashes: a copy of the database holds nothing a client could present. One interface
// (OAuthStore), two stores (D33): the embedded one below (tables of the data folder's SQLite
// database) and the shared one (store-postgres.ts), so that a code made on one node is redeemed
// once on any, a rotated refresh token is refused on every node, and a session signs in on all.
// Every step that must happen once is one statement (or a row lock), never a read then a write.
import type { Database } from "bun:sqlite";
import { createHash } from "node:crypto";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

export const oauthMigrations: Migration[] = [
  {
    id: "oauth-001-server",
    up(db) {
      db.exec(`CREATE TABLE oauth_clients (
        client_id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        auth_method TEXT NOT NULL,
        secret_hash TEXT,
        grant_types TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        fetched_at INTEGER NOT NULL
      )`);
      db.exec(`CREATE TABLE oauth_grants (
        grant_id TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        revoked_at INTEGER
      )`);
      db.exec("CREATE INDEX oauth_grants_user ON oauth_grants (user_id)");
      db.exec(`CREATE TABLE oauth_codes (
        code_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL,
        user_id TEXT NOT NULL,
        redirect_uri TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        scopes TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        grant_id TEXT
      )`);
      db.exec(`CREATE TABLE oauth_refresh_tokens (
        token_hash TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL,
        used_at INTEGER
      )`);
      db.exec("CREATE INDEX oauth_refresh_grant ON oauth_refresh_tokens (grant_id)");
      db.exec(`CREATE TABLE oauth_access_tokens (
        jti TEXT PRIMARY KEY,
        grant_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      )`);
      db.exec("CREATE INDEX oauth_access_grant ON oauth_access_tokens (grant_id)");
      db.exec(`CREATE TABLE oauth_sessions (
        session_hash TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        csrf TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      )`);
      db.exec("CREATE INDEX oauth_sessions_user ON oauth_sessions (user_id)");
    },
  },
  {
    // OpenID Connect (with an upstream provider): the authorization request's nonce, for the ID token.
    id: "oauth-002-code-nonce",
    up(db) {
      db.exec("ALTER TABLE oauth_codes ADD COLUMN nonce TEXT");
    },
  },
];

export const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");

export interface ClientRow {
  client_id: string;
  kind: "registered" | "metadata_document";
  name: string;
  redirect_uris: string;
  auth_method: string;
  secret_hash: string | null;
  grant_types: string;
  created_at: number;
  fetched_at: number;
}

export interface CodeRow {
  code_hash: string;
  client_id: string;
  user_id: string;
  redirect_uri: string;
  code_challenge: string;
  scopes: string;
  expires_at: number;
  grant_id: string | null;
  /** The `nonce` of an OpenID Connect request, returned in its ID token. */
  nonce?: string | null;
}

export interface GrantRow {
  grant_id: string;
  client_id: string;
  user_id: string;
  scopes: string;
  created_at: number;
  revoked_at: number | null;
}

/**
 * A client no grant names, nor a code: a grant is made only when its code is exchanged, so a
 * client just approved is in use before it has one (dropped then, the exchange failed).
 */
const UNUSED_CLIENT = `NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = oauth_clients.client_id)
  AND NOT EXISTS (SELECT 1 FROM oauth_codes c WHERE c.client_id = oauth_clients.client_id)`;

/** A refresh token as kept: its grant, expiry and when it was used (rotated), in seconds. */
export interface RefreshRow {
  grant_id: string;
  expires_at: number;
  used_at: number | null;
}

export interface SessionRow {
  user_id: string;
  csrf: string;
  expires_at: number;
}

/** An access token issued under a grant, to put on the auth room's revocation list when the grant ends. */
export interface IssuedAccess {
  jti: string;
  expires_at: number;
}

/** Where the authorization server's rows are kept (D33): every answer at once from the embedded database, later from PostgreSQL. Times in seconds. */
export interface OAuthStore {
  client(clientId: string): Awaitable<ClientRow | null>;
  countClients(): Awaitable<number>;
  /** Adds or replaces (a metadata document fetched again) a client. */
  putClient(row: ClientRow): Awaitable<void>;
  /** Drops up to `limit` clients introduced before `before` never used (no grant, no code), oldest first; how many. */
  dropUnusedClients(before: number, limit: number): Awaitable<number>;
  putCode(row: CodeRow): Awaitable<void>;
  code(codeHash: string): Awaitable<CodeRow | null>;
  /**
   * Marks the code used by `grant` and makes the grant, in one step: of redemptions racing (on
   * any node) exactly one answers true; false when the code was used already, or is gone.
   */
  redeemCode(codeHash: string, grant: GrantRow): Awaitable<boolean>;
  grant(grantId: string): Awaitable<GrantRow | null>;
  liveGrants(user: string): Awaitable<GrantRow[]>;
  /** Marks the grant revoked and forgets its refresh tokens; answers the access tokens issued under it (to revoke). */
  revokeGrant(grantId: string, at: number): Awaitable<IssuedAccess[]>;
  putRefresh(tokenHash: string, grantId: string, expiresAt: number): Awaitable<void>;
  refresh(tokenHash: string): Awaitable<RefreshRow | null>;
  /** Marks a refresh token used (rotated); false when it was used already (a replay), on whichever node. */
  useRefresh(tokenHash: string, at: number): Awaitable<boolean>;
  /** Records an access token issued under a grant; false (nothing kept) when the grant was revoked meanwhile: the token is to be revoked. */
  putAccess(jti: string, grantId: string, expiresAt: number): Awaitable<boolean>;
  accessGrant(jti: string): Awaitable<string | undefined>;
  putSession(sessionHash: string, user: string, csrf: string, expiresAt: number): Awaitable<void>;
  session(sessionHash: string): Awaitable<SessionRow | null>;
  deleteSession(sessionHash: string): Awaitable<void>;
  /**
   * The sessions, grants and codes of `user` (a deletion asks every room, after it erased, that
   * nothing is left: users/deletion.ts).
   */
  rowsOf(user: string): Awaitable<number>;
  /**
   * Sessions, grants and codes of a user (a password change, a removed account, a deletion);
   * answers the access tokens to revoke.
   */
  forgetUser(user: string, at: number): Awaitable<IssuedAccess[]>;
  /** What has expired: codes, refresh tokens, sessions, access-token links, grants holding nothing, and registered clients never used within a day; how many rows. */
  purgeExpired(nowSec: number): Awaitable<number>;
}

/** Seconds after which an expired code is purged (kept a while so that a late replay still revokes what it gave). */
export const CODE_KEPT_SECONDS = 3600;
/** Seconds a grant holding nothing is kept before it is purged (one just made may not have its tokens yet). */
export const EMPTY_GRANT_SECONDS = 3600;
/** Seconds a registered client never used is kept. */
export const UNUSED_CLIENT_KEPT_SECONDS = 86_400;

/** The embedded store: tables of the data folder's SQLite database. */
export class SqliteOAuthStore implements OAuthStore {
  constructor(readonly db: Database) {}

  client(clientId: string): ClientRow | null {
    return this.db.query<ClientRow, [string]>("SELECT * FROM oauth_clients WHERE client_id = ?").get(clientId);
  }

  countClients(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM oauth_clients").get()!.n;
  }

  putClient(row: ClientRow): void {
    this.db
      .query(
        `INSERT OR REPLACE INTO oauth_clients (client_id, kind, name, redirect_uris, auth_method, secret_hash, grant_types, created_at, fetched_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.client_id,
        row.kind,
        row.name,
        row.redirect_uris,
        row.auth_method,
        row.secret_hash,
        row.grant_types,
        row.created_at,
        row.fetched_at,
      );
  }

  putCode(row: CodeRow): void {
    this.db
      .query(
        "INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, expires_at, grant_id, nonce) VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?)",
      )
      .run(row.code_hash, row.client_id, row.user_id, row.redirect_uri, row.code_challenge, row.scopes, row.expires_at, row.nonce ?? null);
  }

  code(codeHash: string): CodeRow | null {
    return this.db.query<CodeRow, [string]>("SELECT * FROM oauth_codes WHERE code_hash = ?").get(codeHash);
  }

  redeemCode(codeHash: string, grant: GrantRow): boolean {
    return this.db.transaction(() => {
      const used = this.db
        .query("UPDATE oauth_codes SET grant_id = ? WHERE code_hash = ? AND grant_id IS NULL")
        .run(grant.grant_id, codeHash);
      if (used.changes !== 1) return false;
      this.db
        .query("INSERT INTO oauth_grants (grant_id, client_id, user_id, scopes, created_at, revoked_at) VALUES (?, ?, ?, ?, ?, NULL)")
        .run(grant.grant_id, grant.client_id, grant.user_id, grant.scopes, grant.created_at);
      return true;
    })();
  }

  grant(grantId: string): GrantRow | null {
    return this.db.query<GrantRow, [string]>("SELECT * FROM oauth_grants WHERE grant_id = ?").get(grantId);
  }

  liveGrants(user: string): GrantRow[] {
    return this.db
      .query<GrantRow, [string]>("SELECT * FROM oauth_grants WHERE user_id = ? AND revoked_at IS NULL ORDER BY created_at")
      .all(user);
  }

  revokeGrant(grantId: string, at: number): IssuedAccess[] {
    return this.db.transaction(() => {
      this.db.query("UPDATE oauth_grants SET revoked_at = ? WHERE grant_id = ? AND revoked_at IS NULL").run(at, grantId);
      this.db.query("DELETE FROM oauth_refresh_tokens WHERE grant_id = ?").run(grantId);
      return this.db.query<IssuedAccess, [string]>("SELECT jti, expires_at FROM oauth_access_tokens WHERE grant_id = ?").all(grantId);
    })();
  }

  putRefresh(tokenHash: string, grantId: string, expiresAt: number): void {
    this.db
      .query("INSERT INTO oauth_refresh_tokens (token_hash, grant_id, expires_at, used_at) VALUES (?, ?, ?, NULL)")
      .run(tokenHash, grantId, expiresAt);
  }

  refresh(tokenHash: string): RefreshRow | null {
    return this.db
      .query<RefreshRow, [string]>("SELECT grant_id, expires_at, used_at FROM oauth_refresh_tokens WHERE token_hash = ?")
      .get(tokenHash);
  }

  useRefresh(tokenHash: string, at: number): boolean {
    return (
      this.db.query("UPDATE oauth_refresh_tokens SET used_at = ? WHERE token_hash = ? AND used_at IS NULL").run(at, tokenHash).changes === 1
    );
  }

  putAccess(jti: string, grantId: string, expiresAt: number): boolean {
    return (
      this.db
        .query(
          "INSERT INTO oauth_access_tokens (jti, grant_id, expires_at) SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM oauth_grants WHERE grant_id = ?2 AND revoked_at IS NULL)",
        )
        .run(jti, grantId, expiresAt).changes === 1
    );
  }

  accessGrant(jti: string): string | undefined {
    return this.db.query<{ grant_id: string }, [string]>("SELECT grant_id FROM oauth_access_tokens WHERE jti = ?").get(jti)?.grant_id;
  }

  putSession(sessionHash: string, user: string, csrf: string, expiresAt: number): void {
    this.db
      .query("INSERT INTO oauth_sessions (session_hash, user_id, csrf, expires_at) VALUES (?, ?, ?, ?)")
      .run(sessionHash, user, csrf, expiresAt);
  }

  session(sessionHash: string): SessionRow | null {
    return this.db
      .query<SessionRow, [string]>("SELECT user_id, csrf, expires_at FROM oauth_sessions WHERE session_hash = ?")
      .get(sessionHash);
  }

  deleteSession(sessionHash: string): void {
    this.db.query("DELETE FROM oauth_sessions WHERE session_hash = ?").run(sessionHash);
  }

  rowsOf(user: string): number {
    return this.db
      .query<{ n: number }, [string]>(
        "SELECT (SELECT count(*) FROM oauth_sessions WHERE user_id = ?1) + (SELECT count(*) FROM oauth_grants WHERE user_id = ?1) + (SELECT count(*) FROM oauth_codes WHERE user_id = ?1) AS n",
      )
      .get(user)!.n;
  }

  forgetUser(user: string, at: number): IssuedAccess[] {
    return this.db.transaction(() => {
      this.db.query("DELETE FROM oauth_sessions WHERE user_id = ?").run(user);
      const revoke = this.liveGrants(user).flatMap((g) => this.revokeGrant(g.grant_id, at));
      // Then nothing here names the user any more (D25: their data deleted): the revocations live on by jti only.
      this.db.query("DELETE FROM oauth_access_tokens WHERE grant_id IN (SELECT grant_id FROM oauth_grants WHERE user_id = ?)").run(user);
      this.db.query("DELETE FROM oauth_grants WHERE user_id = ?").run(user);
      this.db.query("DELETE FROM oauth_codes WHERE user_id = ?").run(user);
      return revoke;
    })();
  }

  dropUnusedClients(before: number, limit: number): number {
    return this.db
      .query(
        `DELETE FROM oauth_clients WHERE client_id IN (
           SELECT client_id FROM oauth_clients WHERE created_at < ? AND ${UNUSED_CLIENT}
           ORDER BY created_at LIMIT ?)`,
      )
      .run(before, limit).changes;
  }

  purgeExpired(nowSec: number): number {
    let n = 0;
    n += this.db.query("DELETE FROM oauth_codes WHERE expires_at < ?").run(nowSec - CODE_KEPT_SECONDS).changes;
    n += this.db.query("DELETE FROM oauth_refresh_tokens WHERE expires_at < ?").run(nowSec).changes;
    n += this.db.query("DELETE FROM oauth_sessions WHERE expires_at < ?").run(nowSec).changes;
    n += this.db.query("DELETE FROM oauth_access_tokens WHERE expires_at < ?").run(nowSec).changes;
    // A grant that holds nothing any more (revoked, or its last token expired) leaves the connected apps.
    n += this.db
      .query(
        `DELETE FROM oauth_grants WHERE created_at < ?
           AND NOT EXISTS (SELECT 1 FROM oauth_refresh_tokens r WHERE r.grant_id = oauth_grants.grant_id)
           AND NOT EXISTS (SELECT 1 FROM oauth_access_tokens a WHERE a.grant_id = oauth_grants.grant_id)`,
      )
      .run(nowSec - EMPTY_GRANT_SECONDS).changes;
    n += this.db
      .query(`DELETE FROM oauth_clients WHERE created_at < ? AND ${UNUSED_CLIENT}`)
      .run(nowSec - UNUSED_CLIENT_KEPT_SECONDS).changes;
    return n;
  }
}
