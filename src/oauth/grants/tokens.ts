// What a grant answers at the token endpoint: an access token (the EdDSA JWT of D4, bound to
// this resource), a rotating refresh token when offline_access was granted, and with openid an
// OpenID Connect ID token.
import { SignJWT } from "jose";
import { SCOPES, type Scope } from "../../auth/scopes";
import { SIGNING_ALG } from "../../auth/signing-key";
import { type OAuthContext, secondsOf, secret } from "../context";
import { InvalidGrant } from "../errors";
import type { Client } from "../registration";
import { revokeAccess } from "../revocation";
import { OFFLINE_ACCESS } from "../scopes";
import { sha256 } from "../store";

export const ACCESS_TTL_SECONDS = 900;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;
export const ID_TOKEN_TTL_SECONDS = 300;

export async function tokensFor(
  ctx: OAuthContext,
  grantId: string,
  client: Client,
  user: string,
  scopes: string[],
): Promise<Record<string, unknown>> {
  const tokenScopes = scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
  const issued = await ctx.auth.issuer.issue(user, tokenScopes, ACCESS_TTL_SECONDS, undefined, { client_id: client.id });
  if (!(await ctx.store.putAccess(issued.jti, grantId, issued.expiresAt))) {
    // The grant was revoked while the token was signed (a replay answered on another node): it never leaves.
    await revokeAccess(ctx, [{ jti: issued.jti, expires_at: issued.expiresAt }]);
    throw new InvalidGrant("this grant was revoked");
  }
  const answer: Record<string, unknown> = {
    access_token: issued.token,
    token_type: "Bearer",
    expires_in: ACCESS_TTL_SECONDS,
    scope: scopes.join(" "),
  };
  // Refresh tokens only when offline_access was granted (MCP 2026-07-28) and the client may use them.
  if (scopes.includes(OFFLINE_ACCESS) && client.grantTypes.includes("refresh_token")) {
    const refresh = secret();
    await ctx.store.putRefresh(sha256(refresh), grantId, secondsOf(ctx) + REFRESH_TTL_SECONDS);
    answer.refresh_token = refresh;
  }
  return answer;
}

/** An OpenID Connect ID token for `client` naming `user` (Core 1.0 section 2), signed with this server's key. */
export async function idToken(ctx: OAuthContext, client: Client, user: string, nonce: string | undefined): Promise<string> {
  const iat = secondsOf(ctx);
  return new SignJWT({ ...(nonce !== undefined ? { nonce } : {}), auth_time: iat })
    .setProtectedHeader({ alg: SIGNING_ALG, kid: ctx.auth.key.kid, typ: "JWT" })
    .setIssuer(ctx.config.issuer)
    .setSubject(user)
    .setAudience(client.id)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ID_TOKEN_TTL_SECONDS)
    .sign(ctx.auth.key.privateKey);
}
