// The auth room's tables: tokens this server issued, revoked token ids, and per-user "not
// before" stamps (D13: deleting a user revokes every token issued before). A stamp must
// outlive the user's data, so it is keyed by a keyed hash of the user id, not the id itself.
// Revocations are cached in memory for the hot path and refreshed from the database, so a
// revocation made by another process (the CLI) takes effect within REFRESH_MS.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import type { Migration } from "../store/migrations";

export const authMigrations: Migration[] = [
  {
    id: "auth-001-tokens",
    up(db) {
      db.exec(`CREATE TABLE auth_tokens (
        jti TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        scopes TEXT NOT NULL,
        issued_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      )`);
      db.exec("CREATE INDEX auth_tokens_user ON auth_tokens (user_id)");
      db.exec(`CREATE TABLE auth_revoked_tokens (
        jti TEXT PRIMARY KEY,
        expires_at INTEGER NOT NULL,
        revoked_at INTEGER NOT NULL
      )`);
      db.exec(`CREATE TABLE auth_user_not_before (
        user_tag TEXT PRIMARY KEY,
        not_before INTEGER NOT NULL
      )`);
    },
  },
];

const REFRESH_MS = 2000;
const TAG_CACHE_LIMIT = 10_000;

export class AuthStore {
  private revokedJti = new Set<string>();
  private notBefore = new Map<string, number>();
  private loadedAt = 0;
  // User tags remembered per user: once any stamp exists, every authenticated request looks one
  // up, and an HMAC costs microseconds where a Map lookup costs nanoseconds.
  private readonly tags = new Map<string, string>();

  private readonly tagKey: Buffer;

  constructor(
    private readonly db: Database,
    masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.tagKey = createHmac("sha256", masterKey).update("corpus/user-tag").digest();
    this.reload();
  }

  private tag(user: string): string {
    let tag = this.tags.get(user);
    if (tag === undefined) {
      if (this.tags.size >= TAG_CACHE_LIMIT) this.tags.clear();
      tag = createHmac("sha256", this.tagKey).update(user).digest("hex");
      this.tags.set(user, tag);
    }
    return tag;
  }

  private reload(): void {
    const nowSec = Math.floor(this.now() / 1000);
    this.revokedJti = new Set(
      this.db
        .query<{ jti: string }, [number]>("SELECT jti FROM auth_revoked_tokens WHERE expires_at >= ?")
        .all(nowSec)
        .map((r) => r.jti),
    );
    this.notBefore = new Map(
      this.db
        .query<{ user_tag: string; not_before: number }, []>("SELECT user_tag, not_before FROM auth_user_not_before")
        .all()
        .map((r) => [r.user_tag, r.not_before]),
    );
    this.loadedAt = this.now();
  }

  private fresh(): void {
    if (this.now() - this.loadedAt > REFRESH_MS) this.reload();
  }

  recordIssued(t: { jti: string; user: string; scopes: string[]; issuedAt: number; expiresAt: number }): void {
    this.db
      .query("INSERT INTO auth_tokens (jti, user_id, scopes, issued_at, expires_at) VALUES (?, ?, ?, ?, ?)")
      .run(t.jti, t.user, t.scopes.join(" "), t.issuedAt, t.expiresAt);
  }

  revokeToken(jti: string, expiresAt: number): void {
    this.db
      .query("INSERT OR REPLACE INTO auth_revoked_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?)")
      .run(jti, expiresAt, Math.floor(this.now() / 1000));
    this.revokedJti.add(jti);
  }

  /** An issued token by id, for revocation by the operator. */
  issued(jti: string): { user: string; expiresAt: number } | undefined {
    const row = this.db
      .query<{ user_id: string; expires_at: number }, [string]>("SELECT user_id, expires_at FROM auth_tokens WHERE jti = ?")
      .get(jti);
    return row ? { user: row.user_id, expiresAt: row.expires_at } : undefined;
  }

  /** Revokes every token of `user` issued at or before `atSeconds`; returns how many issued tokens were still valid. */
  revokeUser(user: string, atSeconds = Math.floor(this.now() / 1000)): number {
    const tag = this.tag(user);
    this.db
      .query(
        "INSERT INTO auth_user_not_before (user_tag, not_before) VALUES (?, ?) ON CONFLICT (user_tag) DO UPDATE SET not_before = excluded.not_before",
      )
      .run(tag, atSeconds);
    this.notBefore.set(tag, atSeconds);
    return this.db
      .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM auth_tokens WHERE user_id = ? AND expires_at > ?")
      .get(user, atSeconds)!.n;
  }

  /** Whether a token is revoked: itself, its parent (a panel token's), or every token of its user up to its issue. */
  isRevoked(user: string, jti: string | undefined, issuedAt: number | undefined, parentJti?: string): boolean {
    this.fresh();
    if (jti && this.revokedJti.has(jti)) return true;
    if (parentJti && this.revokedJti.has(parentJti)) return true;
    if (this.notBefore.size === 0) return false;
    const nb = this.notBefore.get(this.tag(user));
    return nb !== undefined && (issuedAt === undefined || issuedAt <= nb);
  }

  /** The records of tokens issued to `user` (the keyed not-before stamp names no one) (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM auth_tokens WHERE user_id = ?1) AS n").get(user)!.n;
  }

  /** Removes the records of tokens issued to `user` (the keyed not-before stamp stays: it keeps old tokens out). */
  forgetIssued(user: string): number {
    return this.db.query("DELETE FROM auth_tokens WHERE user_id = ?").run(user).changes;
  }

  /** Removes expired token rows; returns how many went. */
  purgeExpired(): number {
    const nowSec = Math.floor(this.now() / 1000);
    const tokens = this.db.query("DELETE FROM auth_tokens WHERE expires_at < ?").run(nowSec).changes;
    const revoked = this.db.query("DELETE FROM auth_revoked_tokens WHERE expires_at < ?").run(nowSec).changes;
    return tokens + revoked;
  }
}
