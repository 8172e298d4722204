// grant_type=refresh_token (OAuth 2.1 section 4.3): each refresh token once, rotated; one
// presented again revokes its grant; a refresh may narrow the scopes, never add one.
import { type OAuthContext, secondsOf } from "../context";
import { InvalidGrant, InvalidRequest, InvalidScope } from "../errors";
import type { Client } from "../registration";
import { revokeGrant } from "../revocation";
import { sha256 } from "../store";
import { tokensFor } from "./tokens";

export async function refreshTokenGrant(ctx: OAuthContext, client: Client, form: URLSearchParams): Promise<Record<string, unknown>> {
  const token = form.get("refresh_token");
  if (!token) throw new InvalidRequest("refresh_token is missing");
  const hash = sha256(token);
  const row = await ctx.store.refresh(hash);
  const grant = row ? await ctx.store.grant(row.grant_id) : null;
  if (!row || !grant || grant.client_id !== client.id || grant.revoked_at !== null)
    throw new InvalidGrant("the refresh token is not valid");
  if (row.used_at !== null || !(await ctx.store.useRefresh(hash, secondsOf(ctx)))) {
    // A rotated token presented again (here or on another node): one of its holders is not the client. The grant ends.
    await revokeGrant(ctx, grant.grant_id);
    throw new InvalidGrant("the refresh token was used already; this grant is revoked");
  }
  if (row.expires_at < secondsOf(ctx)) throw new InvalidGrant("the refresh token has expired");
  let scopes = grant.scopes.split(" ").filter(Boolean);
  const asked = form.get("scope");
  if (asked !== null) {
    const narrower = asked.split(" ").filter(Boolean);
    if (narrower.some((s) => !scopes.includes(s))) throw new InvalidScope("a refresh cannot add scopes");
    scopes = narrower;
  }
  return tokensFor(ctx, grant.grant_id, client, grant.user_id, scopes);
}
