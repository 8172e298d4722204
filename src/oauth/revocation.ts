// Ending access: a grant with everything it issued (a replayed code or refresh token, a user's
// Revoke on connected apps), and the revocation endpoint (RFC 7009).
import { authenticateClient } from "./client-auth";
import { type OAuthContext, secondsOf } from "./context";
import { InvalidRequest } from "./errors";
import type { Clients } from "./registration";
import { sha256 } from "./store";

/** Revokes a grant: its refresh tokens, and its access tokens in the auth room's revocation list. */
export async function revokeGrant(ctx: OAuthContext, grantId: string): Promise<void> {
  for (const t of await ctx.store.revokeGrant(grantId, secondsOf(ctx))) ctx.auth.store.revokeToken(t.jti, t.expires_at);
}

/** RFC 7009: a refresh token ends its grant, an access token itself; an unknown token is no error. */
export async function revoke(
  ctx: OAuthContext,
  clients: Clients,
  form: URLSearchParams,
  authorization: string | null,
  address: string,
): Promise<void> {
  const client = await authenticateClient(clients, form, authorization, address);
  const token = form.get("token");
  if (!token) throw new InvalidRequest("token is missing");
  const refresh = await ctx.store.refresh(sha256(token));
  if (refresh) {
    const grant = await ctx.store.grant(refresh.grant_id);
    if (grant?.client_id === client.id) await revokeGrant(ctx, grant.grant_id);
    return;
  }
  try {
    const principal = await ctx.auth.verifier.verifyUncached(token);
    const grantId = principal.jti ? await ctx.store.accessGrant(principal.jti) : undefined;
    const grant = grantId ? await ctx.store.grant(grantId) : null;
    if (grant?.client_id === client.id) ctx.auth.store.revokeToken(principal.jti!, principal.expiresAt);
  } catch {
    // Not a token of ours: nothing to revoke (RFC 7009 section 2.2).
  }
}
