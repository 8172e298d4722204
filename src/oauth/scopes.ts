// The scopes of the built-in authorization server: the resource's (D5), offline_access (a
// refresh token, MCP 2026-07-28) and, with an upstream provider, openid.
import { SCOPES } from "../auth/scopes";
import type { Config } from "../config";

export const OFFLINE_ACCESS = "offline_access";
/**
 * OpenID Connect's scope: with an upstream provider configured, corpus is an OpenID Provider
 * too (its /.well-known/openid-configuration), and a code asked with `openid` also gives an
 * ID token naming the corpus user (aud: the client; the request's nonce).
 */
export const OPENID = "openid";
/** Every scope a client may ask for: the resource's (D5) and offline_access (a refresh token). */
export const GRANTABLE_SCOPES = [...SCOPES, OFFLINE_ACCESS] as const;

/** Whether sign-in happens at an upstream OpenID Connect provider (all three CORPUS_OIDC_* set). */
export function signsInUpstream(config: Config): boolean {
  return Boolean(config.CORPUS_OIDC_ISSUER && config.CORPUS_OIDC_CLIENT_ID && config.CORPUS_OIDC_CLIENT_SECRET);
}

/** The scopes a client may ask for here: with an upstream provider, openid too. */
export function grantableScopes(config: Config): string[] {
  return signsInUpstream(config) ? [...GRANTABLE_SCOPES, OPENID] : [...GRANTABLE_SCOPES];
}
