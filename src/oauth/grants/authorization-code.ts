// grant_type=authorization_code (OAuth 2.1 section 4.1.3): the code once, by its client, with
// the PKCE verifier of its S256 challenge; a code presented again revokes what it gave.
import { createHash, randomBytes } from "node:crypto";
import { constantEqual, type OAuthContext, secondsOf } from "../context";
import { InvalidGrant, InvalidRequest } from "../errors";
import type { Client } from "../registration";
import { revokeGrant } from "../revocation";
import { OPENID } from "../scopes";
import { sha256 } from "../store";
import { idToken, tokensFor } from "./tokens";

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");

export async function authorizationCodeGrant(ctx: OAuthContext, client: Client, form: URLSearchParams): Promise<Record<string, unknown>> {
  const code = form.get("code");
  const verifier = form.get("code_verifier");
  if (!code) throw new InvalidRequest("code is missing");
  if (!verifier) throw new InvalidRequest("code_verifier is missing (PKCE)");
  const hash = sha256(code);
  const row = await ctx.store.code(hash);
  if (!row || row.client_id !== client.id) throw new InvalidGrant("the code is not valid");
  if (row.grant_id !== null) {
    // A code used twice: whoever used it first may be the attacker; everything it gave is revoked.
    await revokeGrant(ctx, row.grant_id);
    throw new InvalidGrant("the code was used already; the tokens issued for it are revoked");
  }
  if (row.expires_at < secondsOf(ctx)) throw new InvalidGrant("the code has expired");
  if (form.get("redirect_uri") !== null && form.get("redirect_uri") !== row.redirect_uri)
    throw new InvalidGrant("redirect_uri differs from the authorization request's");
  if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !constantEqual(s256(verifier), row.code_challenge))
    throw new InvalidGrant("code_verifier does not match the code_challenge");
  const grantId = randomBytes(16).toString("base64url");
  // One step: of redemptions racing on any node, one makes the grant; the others are refused.
  const redeemed = await ctx.store.redeemCode(hash, {
    grant_id: grantId,
    client_id: client.id,
    user_id: row.user_id,
    scopes: row.scopes,
    created_at: secondsOf(ctx),
    revoked_at: null,
  });
  if (!redeemed) throw new InvalidGrant("the code was used already");
  const scopes = row.scopes.split(" ").filter(Boolean);
  const answer = await tokensFor(ctx, grantId, client, row.user_id, scopes);
  if (scopes.includes(OPENID) && ctx.upstream) answer.id_token = await idToken(ctx, client, row.user_id, row.nonce ?? undefined);
  return answer;
}
