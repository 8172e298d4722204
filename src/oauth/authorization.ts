// The authorization endpoint (OAuth 2.1 section 4.1): the request checked, then, after sign-in
// and consent (routes.ts), a code for the client with PKCE S256 (60 s, used once), sent back
// to its redirect URI with `iss` (RFC 9207).
import { SCOPES } from "../auth/scopes";
import { type OAuthContext, secondsOf, secret, singleValued } from "./context";
import { InvalidClient, InvalidRequest, InvalidScope, InvalidTarget, type OAuthError, UnsupportedResponseType } from "./errors";
import { redirectMatches } from "./redirect-uris";
import type { Client, Clients } from "./registration";
import { grantableScopes } from "./scopes";
import { sha256 } from "./store";

export const CODE_TTL_SECONDS = 60;

/** A validated authorization request (the query of /oauth/authorize, carried through login and consent). */
export interface AuthorizationRequest {
  client: Client;
  redirectUri: string;
  state?: string;
  codeChallenge: string;
  scopes: string[];
  /** OpenID Connect: returned in the ID token. */
  nonce?: string;
}

/** An error to send to the request's verified redirect URI. */
export interface RedirectError {
  redirectUri: string;
  state?: string;
  error: string;
  description: string;
}

export class Authorization {
  constructor(
    private readonly ctx: OAuthContext,
    private readonly clients: Clients,
  ) {}

  /**
   * Checks an authorization request from `address`. Problems with client_id or redirect_uri
   * throw an OAuthError (shown on a page: never redirected to an unverified URI); the rest come
   * back as `{ redirectError }`, to send to the verified redirect URI.
   */
  async request(params: URLSearchParams, address: string): Promise<{ request: AuthorizationRequest } | { redirectError: RedirectError }> {
    singleValued(params, (m) => new InvalidRequest(m));
    const clientId = params.get("client_id");
    if (!clientId) throw new InvalidRequest("client_id is missing");
    const client = await this.clients.find(clientId, address);
    if (!client) throw new InvalidClient("this client is not registered");
    const redirectUri = params.get("redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : undefined);
    if (!redirectUri || !redirectMatches(client.redirectUris, redirectUri))
      throw new InvalidRequest("redirect_uri is not one this client registered");
    const state = params.get("state") ?? undefined;
    const fail = (error: OAuthError) => ({
      redirectError: { redirectUri, ...(state !== undefined ? { state } : {}), error: error.error, description: error.message },
    });
    if (params.get("response_type") !== "code") return fail(new UnsupportedResponseType("response_type must be code"));
    const challenge = params.get("code_challenge");
    const method = params.get("code_challenge_method");
    if (!challenge) return fail(new InvalidRequest("code_challenge is required (PKCE)"));
    if (method !== "S256") return fail(new InvalidRequest("code_challenge_method must be S256"));
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail(new InvalidRequest("code_challenge is not a base64url SHA-256"));
    const resource = params.get("resource");
    if (resource !== null && !this.ctx.resources.has(resource))
      return fail(new InvalidTarget(`this server issues tokens for ${this.ctx.config.resourceUrl} only`));
    const asked = (params.get("scope") ?? "").split(" ").filter(Boolean);
    const grantable = grantableScopes(this.ctx.config);
    const unknown = asked.filter((s) => !grantable.includes(s));
    if (unknown.length) return fail(new InvalidScope(`unknown scope ${unknown[0]}`));
    // No scope asked: the resource's scopes (what its metadata lists), each still chosen on the consent page.
    const scopes = asked.length ? [...new Set(asked)] : [...SCOPES];
    const nonce = params.get("nonce") ?? undefined;
    if (nonce !== undefined && (nonce.length === 0 || nonce.length > 255))
      return fail(new InvalidRequest("nonce must have 1 to 255 characters"));
    return {
      request: {
        client,
        redirectUri,
        ...(state !== undefined ? { state } : {}),
        codeChallenge: challenge,
        scopes,
        ...(nonce !== undefined ? { nonce } : {}),
      },
    };
  }

  /** The consented scopes become a code for the client, sent back to its redirect URI with iss (RFC 9207). */
  async issueCode(request: AuthorizationRequest, user: string, granted: string[]): Promise<string> {
    const code = secret();
    await this.ctx.store.putCode({
      code_hash: sha256(code),
      client_id: request.client.id,
      user_id: user,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      scopes: granted.join(" "),
      expires_at: secondsOf(this.ctx) + CODE_TTL_SECONDS,
      grant_id: null,
      nonce: request.nonce ?? null,
    });
    return this.redirect(request.redirectUri, { code, ...(request.state !== undefined ? { state: request.state } : {}) });
  }

  /** `uri` with `params` and `iss` added to its query. */
  redirect(uri: string, params: Record<string, string>): string {
    const url = new URL(uri);
    for (const [k, v] of Object.entries({ ...params, iss: this.ctx.config.issuer })) url.searchParams.set(k, v);
    return url.href;
  }
}
