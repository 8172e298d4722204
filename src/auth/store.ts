// The auth room's tables: tokens this server issued, revoked token ids, and per-user "not
// before" stamps (D13: deleting a user revokes every token issued before). A stamp must
// outlive the user's data, so it is keyed by a keyed hash of the user id, not the id itself.
// One interface, two stores (D33): the embedded one below caches revocations in memory for the
// hot path, refreshed from the database, so a revocation made by another process (the CLI)
// takes effect within REFRESH_MS; the shared one (store-postgres.ts) keeps no cache: every
// request reads its revocation, so one made by another node holds at once.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

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
  {
    // A user deleted and made again at once signs in at once (D13): the stamp in milliseconds, and
    // the millisecond each token was signed (its iat is the whole second). A stamp of before is
    // taken at the end of its second: every token of that second stays revoked.
    id: "auth-002-milliseconds",
    up(db) {
      db.exec("ALTER TABLE auth_tokens ADD COLUMN issued_ms INTEGER");
      db.exec("UPDATE auth_user_not_before SET not_before = not_before * 1000 + 999");
    },
  },
];

const REFRESH_MS = 2000;
const TAG_CACHE_LIMIT = 10_000;

/** A token issued by this server, as recorded (so deleting its user can count and revoke it). */
export interface IssuedRecord {
  jti: string;
  user: string;
  scopes: string[];
  issuedAt: number;
  /** The millisecond it was signed (revokedByStamp); absent on rows recorded before it was kept. */
  issuedMs?: number;
  expiresAt: number;
}

/**
 * Whether a token of a user stamped "not before" `notBeforeMs` (milliseconds) is revoked (D13):
 * one issued in an earlier second (`issuedAt`, its iat) is, one of a later second is not. Within
 * the stamp's second the millisecond this server recorded for it (`issuedMs`, read by its jti)
 * decides; a token with none recorded (another issuer's, its record erased by the deletion) is
 * revoked, so no token of before the stamp passes. Without an iat, revoked.
 */
export function revokedByStamp(notBeforeMs: number, issuedAt: number | undefined, issuedMs: () => number | null | undefined): boolean {
  if (issuedAt === undefined) return true;
  const second = Math.floor(notBeforeMs / 1000);
  if (issuedAt !== second) return issuedAt < second;
  const ms = issuedMs();
  return ms === null || ms === undefined || ms <= notBeforeMs;
}

/** The auth room (D33): issued tokens, revoked ids and per-user not-before stamps. Times in seconds. */
export interface AuthStore {
  recordIssued(t: IssuedRecord): Awaitable<void>;
  revokeToken(jti: string, expiresAt: number): Awaitable<void>;
  issued(jti: string): Awaitable<{ user: string; expiresAt: number } | undefined>;
  /** Revokes every token of `user` issued at or before `atMs` (milliseconds, default now); answers how many issued tokens were still valid. */
  revokeUser(user: string, atMs?: number): Awaitable<number>;
  isRevoked(user: string, jti: string | undefined, issuedAt: number | undefined, parentJti?: string): Awaitable<boolean>;
  /**
   * The shared store only: the revocation and the user's wrapped data key in one statement, so
   * that a request's guard makes one round trip where it made two (UserKeys.ready given the row).
   */
  isRevokedWithKey?(
    user: string,
    jti: string | undefined,
    issuedAt: number | undefined,
    parentJti?: string,
  ): Promise<{ revoked: boolean; wrapped: Uint8Array | undefined }>;
  rowsOf(user: string): Awaitable<number>;
  forgetIssued(user: string): Awaitable<number>;
  /** Removes expired token rows; answers how many went. */
  purgeExpired(): Awaitable<number>;
}

/**
 * The keyed hash naming a user in the not-before stamps, the same in both stores. Remembered per
 * user: every authenticated request may look one up, and an HMAC costs microseconds where a Map
 * lookup costs nanoseconds (a tag never changes: nothing another node does makes one stale).
 */
export class UserTags {
  private readonly tags = new Map<string, string>();
  private readonly key: Buffer;

  constructor(masterKey: Buffer) {
    this.key = createHmac("sha256", masterKey).update("corpus/user-tag").digest();
  }

  of(user: string): string {
    let tag = this.tags.get(user);
    if (tag === undefined) {
      if (this.tags.size >= TAG_CACHE_LIMIT) this.tags.clear();
      tag = createHmac("sha256", this.key).update(user).digest("hex");
      this.tags.set(user, tag);
    }
    return tag;
  }
}

/** The embedded store: SQLite, revocations cached in memory and refreshed every REFRESH_MS. */
export class SqliteAuthStore implements AuthStore {
  private revokedJti = new Set<string>();
  private notBefore = new Map<string, number>();
  private loadedAt = 0;
  private readonly tags: UserTags;

  constructor(
    private readonly db: Database,
    masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.tags = new UserTags(masterKey);
    this.reload();
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

  recordIssued(t: IssuedRecord): void {
    this.db
      .query("INSERT INTO auth_tokens (jti, user_id, scopes, issued_at, issued_ms, expires_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(t.jti, t.user, t.scopes.join(" "), t.issuedAt, t.issuedMs ?? null, t.expiresAt);
  }

  revokeToken(jti: string, expiresAt: number): void {
    this.db
      .query("INSERT OR REPLACE INTO auth_revoked_tokens (jti, expires_at, revoked_at) VALUES (?, ?, ?)")
      .run(jti, expiresAt, Math.floor(this.now() / 1000));
    this.revokedJti.add(jti);
  }

  issued(jti: string): { user: string; expiresAt: number } | undefined {
    const row = this.db
      .query<{ user_id: string; expires_at: number }, [string]>("SELECT user_id, expires_at FROM auth_tokens WHERE jti = ?")
      .get(jti);
    return row ? { user: row.user_id, expiresAt: row.expires_at } : undefined;
  }

  revokeUser(user: string, atMs = Math.floor(this.now())): number {
    const tag = this.tags.of(user);
    this.db
      .query(
        "INSERT INTO auth_user_not_before (user_tag, not_before) VALUES (?, ?) ON CONFLICT (user_tag) DO UPDATE SET not_before = excluded.not_before",
      )
      .run(tag, atMs);
    this.notBefore.set(tag, atMs);
    return this.db
      .query<{ n: number }, [string, number]>("SELECT count(*) AS n FROM auth_tokens WHERE user_id = ? AND expires_at > ?")
      .get(user, Math.floor(atMs / 1000))!.n;
  }

  isRevoked(user: string, jti: string | undefined, issuedAt: number | undefined, parentJti?: string): boolean {
    this.fresh();
    if (jti && this.revokedJti.has(jti)) return true;
    if (parentJti && this.revokedJti.has(parentJti)) return true;
    if (this.notBefore.size === 0) return false;
    const nb = this.notBefore.get(this.tags.of(user));
    if (nb === undefined) return false;
    return revokedByStamp(nb, issuedAt, () =>
      jti === undefined
        ? undefined
        : this.db.query<{ issued_ms: number | null }, [string]>("SELECT issued_ms FROM auth_tokens WHERE jti = ?").get(jti)?.issued_ms,
    );
  }

  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM auth_tokens WHERE user_id = ?1) AS n").get(user)!.n;
  }

  forgetIssued(user: string): number {
    return this.db.query("DELETE FROM auth_tokens WHERE user_id = ?").run(user).changes;
  }

  purgeExpired(): number {
    const nowSec = Math.floor(this.now() / 1000);
    const tokens = this.db.query("DELETE FROM auth_tokens WHERE expires_at < ?").run(nowSec).changes;
    const revoked = this.db.query("DELETE FROM auth_revoked_tokens WHERE expires_at < ?").run(nowSec).changes;
    return tokens + revoked;
  }
}
