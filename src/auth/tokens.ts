// Tokens this server issues (D2, D4): EdDSA JWTs with sub, scope, iss, aud, iat, exp, jti.

import { randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import type { Awaitable } from "../store/shared";
import { SCOPES, type Scope } from "./scopes";
import { SIGNING_ALG, type SigningKey } from "./signing-key";
import type { AuthStore } from "./store";
import { SAFE_SUBJECT, subjectProblem } from "./subjects";
import { DEFAULT_TTL_SECONDS, MAX_TTL_SECONDS, MIN_TTL_SECONDS } from "./ttl";

/**
 * The claim that makes a token a connector panel's (issue 13 item 8): `{ parent: <jti> }`, the
 * token it was issued for. Revoking the parent revokes it; it serves only PANEL_ROUTES.
 */
export const PANEL_CLAIM = "corpus_panel";
export const panelClaims = (parentJti: string | undefined) => ({ [PANEL_CLAIM]: parentJti ? { parent: parentJti } : {} });

export class TokenRequestError extends Error {}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: number;
  /** When it was signed, in milliseconds (its iat is the whole second): recorded to tell it from a revocation of that second. */
  issuedMs: number;
}

export function parseScopes(csv: string): Scope[] {
  const scopes = csv.split(/[,\s]+/).filter(Boolean);
  if (scopes.length === 0) throw new TokenRequestError(`--scopes needs at least one of ${SCOPES.join(", ")}`);
  for (const s of scopes)
    if (!(SCOPES as readonly string[]).includes(s)) throw new TokenRequestError(`unknown scope ${s}; allowed: ${SCOPES.join(", ")}`);
  return [...new Set(scopes)] as Scope[];
}

export class TokenIssuer {
  constructor(
    private readonly key: SigningKey,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly store: AuthStore,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * Issues a token and records it (so deleting the user can count and revoke it). `beforeRecord`
   * runs in the same step as the record and may refuse (a parent token revoked meanwhile): with
   * the embedded store both answer at once, with no turn between them.
   */
  async issue(
    user: string,
    scopes: Scope[],
    ttlSeconds = DEFAULT_TTL_SECONDS,
    beforeRecord?: () => Awaitable<void>,
    claims: Record<string, unknown> = {},
  ): Promise<IssuedToken> {
    if (!SAFE_SUBJECT.test(user))
      throw new TokenRequestError("--user must be 1-128 letters, digits or ._@+- and start with a letter or digit");
    if (subjectProblem(user)) throw new TokenRequestError(`--user ${user} is reserved (the operator's connectors or the anonymous caller)`);
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < MIN_TTL_SECONDS || ttlSeconds > MAX_TTL_SECONDS) {
      throw new TokenRequestError(`--ttl must be an integer from ${MIN_TTL_SECONDS} to ${MAX_TTL_SECONDS} seconds`);
    }
    const issued = await this.sign(user, scopes, ttlSeconds, claims);
    const checked = beforeRecord?.();
    if (checked instanceof Promise) await checked;
    const recorded = this.store.recordIssued({
      jti: issued.jti,
      user,
      scopes,
      issuedAt: issued.expiresAt - ttlSeconds,
      issuedMs: issued.issuedMs,
      expiresAt: issued.expiresAt,
    });
    if (recorded instanceof Promise) await recorded;
    return issued;
  }

  /** Signs a token without recording it (the health check's probe). */
  async sign(user: string, scopes: Scope[], ttlSeconds: number, claims: Record<string, unknown> = {}): Promise<IssuedToken> {
    const issuedMs = Math.floor(this.now());
    const iat = Math.floor(issuedMs / 1000);
    const exp = iat + ttlSeconds;
    const jti = randomBytes(16).toString("base64url");
    const token = await new SignJWT({ ...claims, scope: scopes.join(" ") })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.key.kid, typ: "JWT" })
      .setSubject(user)
      .setIssuer(this.issuer)
      .setAudience(this.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(jti)
      .sign(this.key.privateKey);
    return { token, jti, expiresAt: exp, issuedMs };
  }
}
