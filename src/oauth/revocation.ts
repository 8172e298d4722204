// Ending access: a grant with everything it issued (a replayed code or refresh token, a user's
// Revoke on connected apps), and the revocation endpoint (RFC 7009).

import type { Principal } from "../auth/verifier";
import { type Awaitable, andThen } from "../store/shared";
import { authenticateClient } from "./client-auth";
import { type OAuthContext, secondsOf } from "./context";
import { InvalidRequest } from "./errors";
import type { Clients } from "./registration";
import { type IssuedAccess, sha256 } from "./store";

/**
 * Access tokens put on the auth room's revocation list: at once by the embedded store (inside a
 * deletion's SQLite transaction too), every write awaited from the shared one (D33): an answer
 * saying they are revoked comes once every node refuses them, and a failed write is told.
 */
export function revokeAccess(ctx: OAuthContext, tokens: IssuedAccess[]): Awaitable<void> {
  const writes = tokens.map((t) => ctx.auth.store.revokeToken(t.jti, t.expires_at)).filter((w) => w instanceof Promise);
  if (writes.length) return Promise.all(writes).then(() => {});
}

/**
 * Ends a user's sessions and grants (password changed, account removed, a deletion): at once from
 * the embedded store (inside a deletion's SQLite transaction), later from the shared one (inside
 * the deletion's PostgreSQL transaction when `ctx.store` is bound to it: OAuthServer.within).
 */
export function forgetUser(ctx: OAuthContext, user: string): Awaitable<void> {
  return andThen(ctx.store.forgetUser(user, secondsOf(ctx)), (revoked) => revokeAccess(ctx, revoked));
}

/** Revokes a grant: its refresh tokens, and its access tokens in the auth room's revocation list. */
export async function revokeGrant(ctx: OAuthContext, grantId: string): Promise<void> {
  await revokeAccess(ctx, await ctx.store.revokeGrant(grantId, secondsOf(ctx)));
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
  let principal: Principal;
  try {
    principal = await ctx.auth.verifier.verifyUncached(token);
  } catch {
    // Not a token of ours: nothing to revoke (RFC 7009 section 2.2).
    return;
  }
  const grantId = principal.jti ? await ctx.store.accessGrant(principal.jti) : undefined;
  const grant = grantId ? await ctx.store.grant(grantId) : null;
  // Outside the try: a revocation the store failed to write is the server's failure, never a silent 200.
  if (grant?.client_id === client.id) await revokeAccess(ctx, [{ jti: principal.jti!, expires_at: principal.expiresAt }]);
}
