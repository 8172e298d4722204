// Bearer token verification with jose only (D4): this server's EdDSA key, and optionally an
// external identity provider's JWKS (http(s):// or file://). Algorithms are pinned per key
// source, issuer and audience are checked, and revocation is consulted on every request.
// What it verified is kept by its caller (AuthService, by header) until it expires.

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  decodeProtectedHeader,
  errors,
  type FlattenedJWSInput,
  type JSONWebKeySet,
  type JWSHeaderParameters,
  type JWTPayload,
  jwtVerify,
} from "jose";
import { type Awaitable, andThen } from "../store/shared";
import { SIGNING_ALG, type SigningKey } from "./signing-key";
import type { AuthStore } from "./store";
import { subjectProblem } from "./subjects";
import { PANEL_CLAIM } from "./tokens";

export interface Principal {
  user: string;
  scopes: ReadonlySet<string>;
  jti?: string;
  issuedAt?: number;
  expiresAt: number;
  /** Present on a connector panel's token: the jti of the token it was issued for, if it had one. */
  panel?: { parent?: string };
}

export class AuthError extends Error {}

/** Asymmetric algorithms only: an HMAC token "signed" with a public key never verifies. */
export const EXTERNAL_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
const FILE_RELOAD_MS = 1_000;

type KeyResolver = (header: JWSHeaderParameters, token: FlattenedJWSInput) => Promise<CryptoKey | Uint8Array>;

/** A JWKS file, re-read when a token names a key it does not have (at most once a second). */
function fileJwks(path: string, now: () => number): KeyResolver & { reload(): void } {
  let set = createLocalJWKSet({ keys: [] });
  let loadedAt = 0;
  const reload = () => {
    set = createLocalJWKSet(JSON.parse(readFileSync(path, "utf8")) as JSONWebKeySet);
    loadedAt = now();
  };
  const resolver = (async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (loadedAt === 0) reload();
    try {
      return await set(header, token);
    } catch (error) {
      if (!(error instanceof errors.JWKSNoMatchingKey) || now() - loadedAt < FILE_RELOAD_MS) throw error;
      reload();
      return await set(header, token);
    }
  }) as KeyResolver & { reload(): void };
  resolver.reload = reload;
  return resolver;
}

export interface ExternalJwks {
  resolve: KeyResolver;
  /** Throws when the key set cannot be loaded: for the health route. */
  check(): Promise<void>;
}

export function externalJwks(uri: string, now: () => number = Date.now): ExternalJwks {
  if (uri.startsWith("file://")) {
    const jwks = fileJwks(fileURLToPath(uri), now);
    return { resolve: jwks, check: async () => jwks.reload() };
  }
  const remote = createRemoteJWKSet(new URL(uri), { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 });
  return {
    resolve: remote as unknown as KeyResolver,
    check: async () => {
      if (!remote.fresh) await remote.reload();
    },
  };
}

function describe(error: unknown): string {
  if (error instanceof errors.JWTExpired) return "token expired";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "nbf") return "token not yet valid";
    if (error.claim === "iat") return "token issued in the future";
    return `token claim ${error.claim} is not accepted`;
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return "token signature is invalid";
  if (error instanceof errors.JOSEAlgNotAllowed) return "token algorithm is not allowed";
  if (error instanceof errors.JWKSNoMatchingKey) return "token signed by an unknown key";
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return "token is malformed";
  if (error instanceof AuthError) return error.message;
  return "token is invalid";
}

/** Told the user's wrapped data key read with the revocation (the shared store), undefined when they have none. */
export type KeyRead = (user: string, wrapped: Uint8Array | undefined) => void;

export class Verifier {
  private readonly localKeys: ReturnType<typeof createLocalJWKSet>;

  constructor(
    private readonly local: SigningKey,
    private readonly issuer: string,
    private readonly audience: string,
    private readonly store: AuthStore,
    private readonly external?: ExternalJwks,
    private readonly now: () => number = Date.now,
  ) {
    this.localKeys = createLocalJWKSet({ keys: [local.publicJwk] });
  }

  /** A principal verified before, if it has not expired since; throws (or rejects with) AuthError if it has been revoked. */
  current(principal: Principal, keyRead?: KeyRead): Awaitable<Principal | undefined> {
    if (principal.expiresAt * 1000 <= this.now()) return undefined;
    return this.checkRevocation(principal, keyRead);
  }

  /** Signature, claims and revocation. Callers keep what they verified (AuthService, by header). */
  async verify(token: string, keyRead?: KeyRead): Promise<Principal> {
    return this.checkRevocation(await this.verifyUncached(token), keyRead);
  }

  /** Signature and claims, without revocation. */
  async verifyUncached(token: string): Promise<Principal> {
    let payload: JWTPayload;
    try {
      const header = decodeHeader(token);
      const isLocal = header.kid === this.local.kid;
      if (!isLocal && !this.external) throw new errors.JWKSNoMatchingKey();
      const result = await jwtVerify(token, isLocal ? this.localKeys : this.external!.resolve, {
        algorithms: isLocal ? [SIGNING_ALG] : EXTERNAL_ALGORITHMS,
        issuer: this.issuer,
        audience: this.audience,
        requiredClaims: ["sub", "exp"],
        currentDate: new Date(this.now()),
        clockTolerance: 5,
      });
      payload = result.payload;
    } catch (error) {
      throw new AuthError(describe(error));
    }
    // Subjects become keys of records, limits and folders; reserved ones are never users (D24).
    const problem = subjectProblem(payload.sub!);
    if (problem) throw new AuthError(problem);
    return {
      user: payload.sub!,
      scopes: new Set(scopesOf(payload)),
      jti: payload.jti,
      issuedAt: payload.iat,
      expiresAt: payload.exp!,
      ...panelOf(payload),
    };
  }

  /** At once from the embedded store; from the shared one, read for this request (nothing cached: D33). */
  private checkRevocation(p: Principal, keyRead?: KeyRead): Awaitable<Principal> {
    // The shared store reads the user's wrapped key in the same statement, for the guard (one round trip).
    if (keyRead && this.store.isRevokedWithKey)
      return this.store.isRevokedWithKey(p.user, p.jti, p.issuedAt, p.panel?.parent).then(({ revoked, wrapped }) => {
        if (revoked) throw new AuthError("token has been revoked");
        keyRead(p.user, wrapped);
        return p;
      });
    return andThen(this.store.isRevoked(p.user, p.jti, p.issuedAt, p.panel?.parent), (revoked) => {
      if (revoked) throw new AuthError("token has been revoked");
      return p;
    });
  }
}

/** The panel claim, if any; one that is malformed still marks the token as a panel's (the narrower reading). */
function panelOf(payload: JWTPayload): Pick<Principal, "panel"> {
  if (!(PANEL_CLAIM in payload)) return {};
  const claim = payload[PANEL_CLAIM] as { parent?: unknown } | null;
  const parent = claim && typeof claim === "object" && typeof claim.parent === "string" ? claim.parent : undefined;
  return { panel: parent ? { parent } : {} };
}

function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ").filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((s): s is string => typeof s === "string");
  return [];
}

function decodeHeader(token: string): JWSHeaderParameters {
  try {
    return decodeProtectedHeader(token);
  } catch {
    throw new errors.JWSInvalid();
  }
}
