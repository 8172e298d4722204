// The auth room as one service: keys, issued tokens, verification, revocation. Callers hand
// it the Authorization header and the scope they need; it answers with the principal or an
// AuthFailure saying how to answer (status, message, WWW-Authenticate per RFC 6750 and D6).

import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import type { Config } from "../config";
import { DomainError } from "../errors";
import type { HealthCheck } from "../health/checks";
import { type Awaitable, andThen } from "../store/shared";
import { RecentHeaders } from "./recent-headers";
import { PANEL_ROUTES, type Scope } from "./scopes";
import { loadSharedSigningKey, loadSigningKey, type SigningKey } from "./signing-key";
import { type AuthStore, SqliteAuthStore, UserTags } from "./store";
import { PostgresAuthStore } from "./store-postgres";
import { TokenIssuer } from "./tokens";
import { AuthError, type ExternalJwks, externalJwks, type KeyRead, type Principal, Verifier } from "./verifier";

const TOKEN_CHARS = /^[A-Za-z0-9._~+/-]+=*$/;
const RECENT_LIMIT = 10_000;
export const PANEL_ONLY = `Forbidden: this is a connector panel's token; it serves only ${[...PANEL_ROUTES].join(", ")}`;

/**
 * The token of an `Authorization: Bearer <token>` header (RFC 6750 section 2.1), or undefined.
 * Read only for a header not seen before: a known header passed this when it was first seen.
 */
export function bearerToken(header: string | null): string | undefined {
  if (!header || header.length < 8) return undefined;
  // The common exact form without a regular expression over the scheme.
  const token = header.startsWith("Bearer ") ? header.slice(7).trim() : /^bearer\s+(\S+)\s*$/i.exec(header)?.[1];
  return token && TOKEN_CHARS.test(token) ? token : undefined;
}

/** A refused token (401) or scope (403), with the WWW-Authenticate challenge to answer it with. */
export class AuthFailure extends DomainError {
  constructor(
    readonly status: 401 | 403,
    message: string,
    readonly challenge: string,
  ) {
    super(status === 401 ? "unauthorized" : "forbidden", message, { "www-authenticate": challenge });
  }
}

export class AuthService {
  readonly issuer: TokenIssuer;
  readonly verifier: Verifier;
  private readonly resourceMetadata: string;
  // Verified principals by the header they came with: the signature is checked once per token.
  private readonly recent = new RecentHeaders<Principal>(RECENT_LIMIT);

  private constructor(
    readonly key: SigningKey,
    readonly store: AuthStore,
    private readonly external: ExternalJwks | undefined,
    config: Config,
    private readonly now: () => number,
  ) {
    this.issuer = new TokenIssuer(key, config.issuer, config.resourceUrl, store, now);
    this.verifier = new Verifier(key, config.issuer, config.resourceUrl, store, external, now);
    this.resourceMetadata = `${config.resourceUrl}/.well-known/oauth-protected-resource`;
  }

  /** `shared`: the shared PostgreSQL's connections when CORPUS_DATABASE_URL names one (D33), else the embedded `db` keeps the room. */
  static async create(
    config: Config,
    db: Database,
    masterKey: Buffer,
    now: () => number = Date.now,
    shared?: postgres.Sql,
  ): Promise<AuthService> {
    // Shared: one key for every node, kept in the shared database (D33); else the data folder's file.
    const key = shared
      ? await loadSharedSigningKey(shared, config.CORPUS_DATA_DIR, masterKey)
      : await loadSigningKey(config.CORPUS_DATA_DIR, masterKey);
    const external = config.CORPUS_OAUTH_JWKS_URI ? externalJwks(config.CORPUS_OAUTH_JWKS_URI, now) : undefined;
    const store = shared ? new PostgresAuthStore(shared, new UserTags(masterKey), now) : new SqliteAuthStore(db, masterKey, now);
    return new AuthService(key, store, external, config, now);
  }

  /** The public keys clients verify this server's tokens with. */
  jwks() {
    return { keys: [this.key.publicJwk] };
  }

  private challenge(params: Record<string, string>): string {
    const all = { resource_metadata: this.resourceMetadata, ...params };
    return `Bearer ${Object.entries(all)
      .map(([k, v]) => `${k}="${v.replaceAll('"', "'")}"`)
      .join(", ")}`;
  }

  /**
   * Only the Authorization header is read: a token in the query string is never accepted.
   * A token verified before answers synchronously; a new one is verified with jose.
   */
  authenticate(authorization: string | null, scope: Scope | null, keyRead?: KeyRead): Awaitable<Principal> {
    // The same header as an earlier request: its principal, still checked for expiry and
    // revocation (at once by the embedded store, by one read of the shared one).
    const seen = authorization === null ? undefined : this.recent.get(authorization);
    if (!seen) return this.verifyNew(authorization, scope, keyRead);
    let current: Awaitable<Principal | undefined>;
    try {
      current = this.verifier.current(seen, keyRead);
    } catch (error) {
      throw this.invalid(error);
    }
    const known = (p: Principal | undefined): Awaitable<Principal> => {
      if (p) return this.authorize(p, scope);
      this.recent.delete(authorization!);
      return this.verifyNew(authorization, scope, keyRead);
    };
    if (!(current instanceof Promise)) return known(current);
    return current.then(known, (error) => {
      throw this.invalidOr(error);
    });
  }

  /** A header not seen before (or whose token expired since): its token verified with jose. */
  private verifyNew(authorization: string | null, scope: Scope | null, keyRead?: KeyRead): Promise<Principal> {
    const token = bearerToken(authorization);
    if (!token) throw new AuthFailure(401, "Unauthorized: a bearer token is required", this.challenge({}));
    return this.verifier.verify(token, keyRead).then(
      (p) => {
        this.recent.set(authorization!, p);
        return this.authorize(p, scope);
      },
      (error) => {
        throw this.invalidOr(error);
      },
    );
  }

  /** A refused token is 401; a store that could not answer (the shared database unreachable) is the server's failure, not the caller's. */
  private invalidOr(error: unknown): unknown {
    return error instanceof AuthError ? this.invalid(error) : error;
  }

  private invalid(error: unknown): AuthFailure {
    const reason = error instanceof AuthError ? error.message : "token is invalid";
    return new AuthFailure(401, `Unauthorized: ${reason}`, this.challenge({ error: "invalid_token", error_description: reason }));
  }

  /**
   * Whether the principal's token was revoked since it was verified (a deletion revokes every
   * token of its user). Work done for a request checks this right before it writes (D25).
   */
  revoked(principal: Principal): Awaitable<boolean> {
    return this.store.isRevoked(principal.user, principal.jti, principal.issuedAt, principal.panel?.parent);
  }

  /**
   * `write` only while the principal's token stands (D25), `refused` thrown otherwise. The embedded
   * store checks in the same synchronous step as the write (no transaction: `write` gets none); the
   * shared one inside the transaction `write` is given and writes in, so that a revocation or a
   * deletion on another node between the check and the write cannot let it land (D33).
   */
  whileStanding<T>(
    principal: Principal,
    write: (tx: postgres.TransactionSql | undefined) => Awaitable<T>,
    refused: () => Error,
  ): Awaitable<T> {
    const token = { user: principal.user, jti: principal.jti, issuedAt: principal.issuedAt, parentJti: principal.panel?.parent };
    if (this.store instanceof PostgresAuthStore) return this.store.whileStanding(token, write, refused);
    return andThen(this.revoked(principal), (revoked) => {
      if (revoked) throw refused();
      return write(undefined);
    });
  }

  /** Seconds until the principal's token expires. */
  secondsLeft(principal: Principal): number {
    return principal.expiresAt - Math.floor(this.now() / 1000);
  }

  /** 403 unless the principal holds `scope` (null: any valid token will do). */
  authorize(principal: Principal, scope: Scope | null): Principal {
    if (scope !== null && !principal.scopes.has(scope)) {
      throw new AuthFailure(403, `Forbidden: this token lacks the scope ${scope}`, this.challenge({ error: "insufficient_scope", scope }));
    }
    return principal;
  }

  /**
   * 403 for a connector panel's token anywhere but the panel's routes (PANEL_ROUTES): it may
   * carry connectors:write, yet neither delete the user, nor open a panel of its own, nor search.
   */
  confine(principal: Principal, route: string): Principal {
    if (principal.panel && !PANEL_ROUTES.has(route)) {
      throw new AuthFailure(
        403,
        PANEL_ONLY,
        this.challenge({ error: "insufficient_scope", error_description: "a connector panel's token serves only /v1/connectors" }),
      );
    }
    return principal;
  }

  healthChecks(): HealthCheck[] {
    // A token signed and verified end to end proves the key and the verifier work.
    const checks: HealthCheck[] = [
      async () => {
        try {
          await this.verifier.verifyUncached((await this.issuer.sign("corpus-health", [], 60)).token);
          return { healthy: true };
        } catch {
          return { healthy: false, reason: "tokens cannot be signed or verified" };
        }
      },
    ];
    if (this.external) {
      const external = this.external;
      checks.push(async () => {
        try {
          await external.check();
          return { healthy: true };
        } catch {
          return { healthy: false, reason: "the external JWKS (CORPUS_OAUTH_JWKS_URI) cannot be loaded" };
        }
      });
    }
    return checks;
  }
}
