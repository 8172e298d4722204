// What the endpoints of the built-in authorization server share (D27): the configuration, the
// auth room that issues and verifies tokens, the accounts people sign in with, the OAuth
// tables, the clock, and the resource tokens are bound to (RFC 8707).
import { randomBytes, timingSafeEqual } from "node:crypto";
import type { Accounts } from "../accounts/store";
import type { AuthService } from "../auth/service";
import type { Config } from "../config";
import type { OAuthStore } from "./store";
import type { SharedThrottles } from "./throttle-postgres";
import type { UpstreamOidc } from "./upstream";

export interface OAuthContext {
  readonly config: Config;
  readonly auth: AuthService;
  readonly accounts: Accounts;
  readonly store: OAuthStore;
  readonly now: () => number;
  /** The resource tokens are bound to; also accepted with a trailing slash and the MCP endpoint's path. */
  readonly resources: ReadonlySet<string>;
  /** The upstream OpenID Connect provider people sign in at, when CORPUS_OIDC_ISSUER is set. */
  readonly upstream?: UpstreamOidc;
  /** The sign-in throttle and the registration allowances counted in the shared database (D33); without, in this node's memory. */
  readonly throttles?: SharedThrottles;
}

export const secondsOf = (ctx: OAuthContext): number => Math.floor(ctx.now() / 1000);

/** A fresh 256-bit secret: codes, refresh tokens, client secrets, session ids, CSRF tokens. */
export const secret = (): string => randomBytes(32).toString("base64url");

/** Equality in constant time of two ASCII strings (hashes, base64url): not for raw form input, whose bytes may differ in length. */
export const constantEqual = (a: string, b: string): boolean => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Refuses a form or query naming a field twice (OAuth 2.1 section 3.1). */
export function singleValued(params: URLSearchParams, invalid: (message: string) => Error): void {
  for (const name of new Set(params.keys())) {
    if (params.getAll(name).length > 1) throw invalid(`${name} is given more than once`);
  }
}
