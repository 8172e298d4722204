// corpus as its own OAuth 2.1 authorization server (D27, D28; MCP authorization 2025-11-25
// and 2026-07-28): authorization code with PKCE S256 only, clients registered dynamically
// (RFC 7591) or named by the URL of their metadata document (Client ID Metadata Documents),
// redirect URIs matched exactly (a loopback one on any port, RFC 8252 section 7.3), tokens
// bound to this resource (RFC 8707), refresh tokens only with offline_access, rotating, a
// replayed one revoking its whole grant, and revocation (RFC 7009). Access tokens are the
// EdDSA JWTs of D4, issued by the auth room's TokenIssuer and verified by its Verifier.
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { SignJWT } from "jose";
import type { Accounts } from "../accounts/store";
import { SCOPES, type Scope } from "../auth/scopes";
import type { AuthService } from "../auth/service";
import { SIGNING_ALG } from "../auth/signing-key";
import { SAFE_SUBJECT } from "../auth/subjects";
import type { Config } from "../config";
import { getPinned } from "../net/get";
import { type AddressPolicy, PUBLIC_ONLY, pinHost, type Resolver } from "../net/pin";
import { type ClientRow, type OAuthStore, sha256 } from "./store";
import { LoginThrottle, WindowLimit } from "./throttle";
import { UPSTREAM_CALLBACK_PATH, UpstreamError, UpstreamOidc } from "./upstream";

export const OFFLINE_ACCESS = "offline_access";
/**
 * OpenID Connect's scope: with an upstream provider configured, corpus is an OpenID Provider
 * too (its /.well-known/openid-configuration), and a code asked with `openid` also gives an
 * ID token naming the corpus user (aud: the client; the request's nonce).
 */
export const OPENID = "openid";
export const ID_TOKEN_TTL_SECONDS = 300;
/** Every scope a client may ask for: the resource's (D5) and offline_access (a refresh token). */
export const GRANTABLE_SCOPES = [...SCOPES, OFFLINE_ACCESS] as const;
export const ACCESS_TTL_SECONDS = 900;
export const REFRESH_TTL_SECONDS = 30 * 24 * 3600;
export const CODE_TTL_SECONDS = 60;
export const SESSION_TTL_SECONDS = 12 * 3600;
export const MAX_CLIENTS = 10_000;
/** Registrations one address may make in an hour: the table of clients cannot be filled from one place. */
export const REGISTRATIONS_PER_HOUR = 20;
const METADATA_DOCUMENT_TTL_SECONDS = 3600;
const METADATA_DOCUMENT_MAX_BYTES = 5 * 1024;
export const AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"] as const;

/** An OAuth error answered as RFC 6749 section 5.2 says: `{ error, error_description }`. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export interface Client {
  id: string;
  kind: ClientRow["kind"];
  name: string;
  redirectUris: string[];
  authMethod: string;
  secretHash: string | null;
  grantTypes: string[];
}

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

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why a redirect URI may not be registered, or undefined (OAuth 2.1 section 2.3; RFC 8252). */
export function redirectUriProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not an absolute URI`;
  }
  if (url.hash || text.includes("#")) return `${text} has a fragment`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return LOOPBACK.has(url.hostname) ? undefined : `${text}: http is allowed only for loopback redirects (127.0.0.1, [::1], localhost)`;
  // A native app's private-use scheme (RFC 8252 section 7.1): never one a browser runs itself.
  if (["javascript:", "data:", "file:", "blob:", "vbscript:", "about:", "ftp:", "ws:", "wss:"].includes(url.protocol))
    return `${text}: scheme ${url.protocol} is not allowed`;
  return undefined;
}

/** Exact match; a loopback http redirect matches on any port (RFC 8252 section 7.3). */
export function redirectMatches(registered: string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  let a: URL;
  try {
    a = new URL(asked);
  } catch {
    return false;
  }
  if (a.protocol !== "http:" || !LOOPBACK.has(a.hostname)) return false;
  return registered.some((r) => {
    const u = new URL(r);
    if (u.protocol !== "http:" || u.hostname !== a.hostname) return false;
    u.port = a.port;
    return u.href === a.href;
  });
}

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
const secret = () => randomBytes(32).toString("base64url");
const equal = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

export interface OAuthOptions {
  /** Which addresses a client metadata document may be fetched from (public only by default). */
  documentPolicy?: AddressPolicy;
  resolve?: Resolver;
  /** Extra CA certificates for metadata documents (tests). */
  documentCa?: string;
}

export class OAuthServer {
  readonly store: OAuthStore;
  readonly throttle: LoginThrottle;
  private readonly registrations: WindowLimit;
  /** The resource tokens are bound to; also accepted with the MCP endpoint's path. */
  private readonly resources: Set<string>;
  /** The upstream OpenID Connect provider people sign in at, when CORPUS_OIDC_ISSUER is set. */
  readonly upstream?: UpstreamOidc;

  constructor(
    private readonly config: Config,
    private readonly auth: AuthService,
    readonly accounts: Accounts,
    store: OAuthStore,
    private readonly now: () => number = Date.now,
    private readonly options: OAuthOptions = {},
  ) {
    this.store = store;
    this.throttle = new LoginThrottle(now);
    this.registrations = new WindowLimit(REGISTRATIONS_PER_HOUR, 3_600_000, now);
    this.resources = new Set([config.resourceUrl, `${config.resourceUrl}/`, `${config.resourceUrl}/mcp`]);
    if (config.CORPUS_OIDC_ISSUER && config.CORPUS_OIDC_CLIENT_ID && config.CORPUS_OIDC_CLIENT_SECRET) {
      this.upstream = new UpstreamOidc(
        {
          issuer: config.CORPUS_OIDC_ISSUER,
          clientId: config.CORPUS_OIDC_CLIENT_ID,
          clientSecret: config.CORPUS_OIDC_CLIENT_SECRET,
          redirectUri: `${config.issuer}${UPSTREAM_CALLBACK_PATH}`,
        },
        now,
      );
    }
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** The scopes a client may ask for here: with an upstream provider, openid too. */
  grantableScopes(): string[] {
    return this.upstream ? [...GRANTABLE_SCOPES, OPENID] : [...GRANTABLE_SCOPES];
  }

  /** The same list from the configuration alone, for the metadata documents. */
  static grantableScopes(config: Config): string[] {
    return OAuthServer.signsInUpstream(config) ? [...GRANTABLE_SCOPES, OPENID] : [...GRANTABLE_SCOPES];
  }

  /** Whether sign-in happens at an upstream OpenID Connect provider (all three CORPUS_OIDC_* set). */
  static signsInUpstream(config: Config): boolean {
    return Boolean(config.CORPUS_OIDC_ISSUER && config.CORPUS_OIDC_CLIENT_ID && config.CORPUS_OIDC_CLIENT_SECRET);
  }

  /** Whether this server is the authorization server (no external endpoints configured). */
  static builtIn(config: Config): boolean {
    return !config.CORPUS_OAUTH_AUTHORIZATION_ENDPOINT && !config.CORPUS_OAUTH_TOKEN_ENDPOINT;
  }

  // ---- clients ----

  /** Dynamic client registration (RFC 7591): validates the metadata, answers the client information. */
  register(meta: Record<string, unknown>, address: string): Record<string, unknown> {
    const redirectUris = meta.redirect_uris;
    if (
      !Array.isArray(redirectUris) ||
      redirectUris.length === 0 ||
      redirectUris.length > 10 ||
      !redirectUris.every((u) => typeof u === "string" && u.length <= 2000)
    ) {
      throw new OAuthError("invalid_redirect_uri", "redirect_uris: 1 to 10 URIs are required");
    }
    for (const uri of redirectUris as string[]) {
      const problem = redirectUriProblem(uri);
      if (problem) throw new OAuthError("invalid_redirect_uri", `redirect_uris: ${problem}`);
    }
    const authMethod = meta.token_endpoint_auth_method ?? "client_secret_basic";
    if (typeof authMethod !== "string" || !(AUTH_METHODS as readonly string[]).includes(authMethod)) {
      throw new OAuthError("invalid_client_metadata", `token_endpoint_auth_method: one of ${AUTH_METHODS.join(", ")}`);
    }
    const grantTypes = meta.grant_types ?? ["authorization_code"];
    if (!Array.isArray(grantTypes) || !grantTypes.every((g) => g === "authorization_code" || g === "refresh_token")) {
      throw new OAuthError("invalid_client_metadata", "grant_types: authorization_code and refresh_token only");
    }
    const responseTypes = meta.response_types ?? ["code"];
    if (!Array.isArray(responseTypes) || !responseTypes.every((r) => r === "code"))
      throw new OAuthError("invalid_client_metadata", "response_types: code only");
    const name =
      typeof meta.client_name === "string" && meta.client_name.trim() ? meta.client_name.trim().slice(0, 100) : "an unnamed application";
    const wait = this.registrations.take(address);
    if (wait > 0) throw new OAuthError("temporarily_unavailable", `too many registrations from this address; try again in ${wait} s`, 429);
    if (this.store.countClients() >= MAX_CLIENTS)
      throw new OAuthError("temporarily_unavailable", "too many registered clients; try again later", 503);
    const clientId = `corpus-${randomBytes(16).toString("base64url")}`;
    const clientSecret = authMethod === "none" ? undefined : secret();
    const at = this.seconds();
    this.store.putClient({
      client_id: clientId,
      kind: "registered",
      name,
      redirect_uris: JSON.stringify(redirectUris),
      auth_method: authMethod,
      secret_hash: clientSecret ? sha256(clientSecret) : null,
      grant_types: JSON.stringify(grantTypes),
      created_at: at,
      fetched_at: at,
    });
    return {
      client_id: clientId,
      ...(clientSecret ? { client_secret: clientSecret, client_secret_expires_at: 0 } : {}),
      client_id_issued_at: at,
      client_name: name,
      redirect_uris: redirectUris,
      token_endpoint_auth_method: authMethod,
      grant_types: grantTypes,
      response_types: ["code"],
    };
  }

  /** A client by id: registered here, or the metadata document its https URL names (fetched, cached an hour). */
  async client(clientId: string): Promise<Client | undefined> {
    let row = this.store.client(clientId);
    if (clientId.startsWith("https://") && (!row || row.fetched_at + METADATA_DOCUMENT_TTL_SECONDS < this.seconds())) {
      row = await this.fetchMetadataDocument(clientId);
    }
    if (!row) return undefined;
    return {
      id: row.client_id,
      kind: row.kind,
      name: row.name,
      redirectUris: JSON.parse(row.redirect_uris) as string[],
      authMethod: row.auth_method,
      secretHash: row.secret_hash,
      grantTypes: JSON.parse(row.grant_types) as string[],
    };
  }

  /** Client ID Metadata Documents: the client_id is an https URL whose JSON names the client, with `client_id` equal to the URL. */
  private async fetchMetadataDocument(clientId: string): Promise<ClientRow> {
    let url: URL;
    try {
      url = new URL(clientId);
    } catch {
      throw new OAuthError("invalid_client", "client_id is not a URL");
    }
    if (url.protocol !== "https:" || url.hash || url.username || url.password || url.pathname === "/") {
      throw new OAuthError("invalid_client", "a client_id URL must be https with a path, without fragment or credentials");
    }
    let doc: Record<string, unknown>;
    try {
      const pinned = await pinHost(url.hostname, this.options.documentPolicy ?? PUBLIC_ONLY, this.options.resolve);
      const answer = await getPinned(url, pinned, {
        timeoutMs: 5000,
        maxBytes: METADATA_DOCUMENT_MAX_BYTES,
        ...(this.options.documentCa ? { ca: this.options.documentCa } : {}),
      });
      if (answer.status !== 200) throw new Error(`status ${answer.status}`);
      doc = JSON.parse(answer.body) as Record<string, unknown>;
      if (typeof doc !== "object" || doc === null || Array.isArray(doc)) throw new Error("not an object");
    } catch (error) {
      throw new OAuthError(
        "invalid_client",
        `the client's metadata document could not be used (${error instanceof Error ? error.message : "unreadable"})`,
      );
    }
    if (doc.client_id !== clientId) throw new OAuthError("invalid_client", "the metadata document's client_id is not its URL");
    const method = doc.token_endpoint_auth_method ?? "none";
    if (method !== "none")
      throw new OAuthError("invalid_client", "a metadata-document client authenticates with none (private_key_jwt is not supported)");
    const uris = doc.redirect_uris;
    if (
      !Array.isArray(uris) ||
      uris.length === 0 ||
      uris.length > 10 ||
      !uris.every((u) => typeof u === "string" && !redirectUriProblem(u))
    ) {
      throw new OAuthError("invalid_client", "the metadata document's redirect_uris are missing or not allowed");
    }
    const at = this.seconds();
    const row: ClientRow = {
      client_id: clientId,
      kind: "metadata_document",
      name: typeof doc.client_name === "string" && doc.client_name.trim() ? doc.client_name.trim().slice(0, 100) : url.hostname,
      redirect_uris: JSON.stringify(uris),
      auth_method: "none",
      secret_hash: null,
      grant_types: JSON.stringify(["authorization_code", "refresh_token"]),
      created_at: at,
      fetched_at: at,
    };
    this.store.putClient(row);
    return row;
  }

  // ---- authorization ----

  /**
   * Checks an authorization request. Problems with client_id or redirect_uri throw
   * OAuthError with status 400 (shown on a page: never redirected to an unverified URI);
   * the rest come back as `{ redirectError }`, to send to the verified redirect URI.
   */
  async authorizationRequest(
    params: URLSearchParams,
  ): Promise<
    { request: AuthorizationRequest } | { redirectError: { redirectUri: string; state?: string; error: string; description: string } }
  > {
    for (const name of new Set(params.keys())) {
      if (params.getAll(name).length > 1) throw new OAuthError("invalid_request", `${name} is given more than once`);
    }
    const clientId = params.get("client_id");
    if (!clientId) throw new OAuthError("invalid_request", "client_id is missing");
    const client = await this.client(clientId);
    if (!client) throw new OAuthError("invalid_client", "this client is not registered");
    const redirectUri = params.get("redirect_uri") ?? (client.redirectUris.length === 1 ? client.redirectUris[0]! : undefined);
    if (!redirectUri || !redirectMatches(client.redirectUris, redirectUri))
      throw new OAuthError("invalid_request", "redirect_uri is not one this client registered");
    const state = params.get("state") ?? undefined;
    const fail = (error: string, description: string) => ({
      redirectError: { redirectUri, ...(state !== undefined ? { state } : {}), error, description },
    });
    if (params.get("response_type") !== "code") return fail("unsupported_response_type", "response_type must be code");
    const challenge = params.get("code_challenge");
    const method = params.get("code_challenge_method");
    if (!challenge) return fail("invalid_request", "code_challenge is required (PKCE)");
    if (method !== "S256") return fail("invalid_request", "code_challenge_method must be S256");
    if (!/^[A-Za-z0-9_-]{43}$/.test(challenge)) return fail("invalid_request", "code_challenge is not a base64url SHA-256");
    const resource = params.get("resource");
    if (resource !== null && !this.resources.has(resource))
      return fail("invalid_target", `this server issues tokens for ${this.config.resourceUrl} only`);
    const asked = (params.get("scope") ?? "").split(" ").filter(Boolean);
    const grantable: readonly string[] = this.grantableScopes();
    const unknown = asked.filter((s) => !grantable.includes(s));
    if (unknown.length) return fail("invalid_scope", `unknown scope ${unknown[0]}`);
    // No scope asked: the resource's scopes (what its metadata lists), each still chosen on the consent page.
    const scopes = asked.length ? [...new Set(asked)] : [...SCOPES];
    const nonce = params.get("nonce") ?? undefined;
    if (nonce !== undefined && (nonce.length === 0 || nonce.length > 255))
      return fail("invalid_request", "nonce must have 1 to 255 characters");
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
  issueCode(request: AuthorizationRequest, user: string, granted: string[]): string {
    const code = secret();
    this.store.putCode({
      code_hash: sha256(code),
      client_id: request.client.id,
      user_id: user,
      redirect_uri: request.redirectUri,
      code_challenge: request.codeChallenge,
      scopes: granted.join(" "),
      expires_at: this.seconds() + CODE_TTL_SECONDS,
      grant_id: null,
      nonce: request.nonce ?? null,
    });
    return this.redirect(request.redirectUri, { code, ...(request.state !== undefined ? { state: request.state } : {}) });
  }

  /** `uri` with `params` and `iss` added to its query. */
  redirect(uri: string, params: Record<string, string>): string {
    const url = new URL(uri);
    for (const [k, v] of Object.entries({ ...params, iss: this.config.issuer })) url.searchParams.set(k, v);
    return url.href;
  }

  // ---- token endpoint ----

  /** The client of a token or revocation request, authenticated as it registered. */
  async authenticateClient(form: URLSearchParams, authorization: string | null): Promise<Client> {
    let id = form.get("client_id");
    let presented: string | undefined;
    if (authorization?.toLowerCase().startsWith("basic ")) {
      const decoded = Buffer.from(authorization.slice(6).trim(), "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon < 0) throw new OAuthError("invalid_client", "malformed Basic credentials", 401);
      let basicId: string;
      try {
        basicId = decodeURIComponent(decoded.slice(0, colon));
        presented = decodeURIComponent(decoded.slice(colon + 1));
      } catch {
        throw new OAuthError("invalid_client", "malformed Basic credentials", 401);
      }
      if (id && id !== basicId) throw new OAuthError("invalid_request", "client_id differs from the Basic credentials");
      id = basicId;
    } else if (form.get("client_secret") !== null) presented = form.get("client_secret")!;
    if (!id) throw new OAuthError("invalid_client", "client_id is missing", 401);
    const client = await this.client(id);
    if (!client) throw new OAuthError("invalid_client", "unknown client", 401);
    if (client.secretHash) {
      if (presented === undefined || !equal(sha256(presented), client.secretHash))
        throw new OAuthError("invalid_client", "client authentication failed", 401);
    } else if (presented !== undefined) throw new OAuthError("invalid_client", "this client has no secret", 401);
    return client;
  }

  async token(form: URLSearchParams, authorization: string | null): Promise<Record<string, unknown>> {
    for (const name of new Set(form.keys())) {
      if (form.getAll(name).length > 1) throw new OAuthError("invalid_request", `${name} is given more than once`);
    }
    const client = await this.authenticateClient(form, authorization);
    const resource = form.get("resource");
    if (resource !== null && !this.resources.has(resource))
      throw new OAuthError("invalid_target", `this server issues tokens for ${this.config.resourceUrl} only`);
    const grantType = form.get("grant_type");
    if (grantType === "authorization_code") return this.exchangeCode(client, form);
    if (grantType === "refresh_token") return this.refresh(client, form);
    throw new OAuthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token");
  }

  private async exchangeCode(client: Client, form: URLSearchParams): Promise<Record<string, unknown>> {
    const code = form.get("code");
    const verifier = form.get("code_verifier");
    if (!code) throw new OAuthError("invalid_request", "code is missing");
    if (!verifier) throw new OAuthError("invalid_request", "code_verifier is missing (PKCE)");
    const hash = sha256(code);
    const row = this.store.code(hash);
    if (!row || row.client_id !== client.id) throw new OAuthError("invalid_grant", "the code is not valid");
    if (row.grant_id !== null) {
      // A code used twice: whoever used it first may be the attacker; everything it gave is revoked.
      this.revokeGrant(row.grant_id);
      throw new OAuthError("invalid_grant", "the code was used already; the tokens issued for it are revoked");
    }
    if (row.expires_at < this.seconds()) throw new OAuthError("invalid_grant", "the code has expired");
    if (form.get("redirect_uri") !== null && form.get("redirect_uri") !== row.redirect_uri)
      throw new OAuthError("invalid_grant", "redirect_uri differs from the authorization request's");
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || !equal(s256(verifier), row.code_challenge))
      throw new OAuthError("invalid_grant", "code_verifier does not match the code_challenge");
    const grantId = randomBytes(16).toString("base64url");
    if (!this.store.useCode(hash, grantId)) throw new OAuthError("invalid_grant", "the code was used already");
    this.store.putGrant({
      grant_id: grantId,
      client_id: client.id,
      user_id: row.user_id,
      scopes: row.scopes,
      created_at: this.seconds(),
      revoked_at: null,
    });
    const scopes = row.scopes.split(" ").filter(Boolean);
    const answer = await this.tokensFor(grantId, client, row.user_id, scopes);
    if (scopes.includes(OPENID) && this.upstream) answer.id_token = await this.idToken(client, row.user_id, row.nonce ?? undefined);
    return answer;
  }

  /** An OpenID Connect ID token for `client` naming `user` (Core 1.0 section 2), signed with this server's key. */
  private async idToken(client: Client, user: string, nonce: string | undefined): Promise<string> {
    const iat = this.seconds();
    return new SignJWT({ ...(nonce !== undefined ? { nonce } : {}), auth_time: iat })
      .setProtectedHeader({ alg: SIGNING_ALG, kid: this.auth.key.kid, typ: "JWT" })
      .setIssuer(this.config.issuer)
      .setSubject(user)
      .setAudience(client.id)
      .setIssuedAt(iat)
      .setExpirationTime(iat + ID_TOKEN_TTL_SECONDS)
      .sign(this.auth.key.privateKey);
  }

  private async refresh(client: Client, form: URLSearchParams): Promise<Record<string, unknown>> {
    const token = form.get("refresh_token");
    if (!token) throw new OAuthError("invalid_request", "refresh_token is missing");
    const hash = sha256(token);
    const row = this.store.refresh(hash);
    const grant = row ? this.store.grant(row.grant_id) : null;
    if (!row || !grant || grant.client_id !== client.id || grant.revoked_at !== null)
      throw new OAuthError("invalid_grant", "the refresh token is not valid");
    if (row.used_at !== null || !this.store.useRefresh(hash, this.seconds())) {
      // A rotated token presented again: one of its holders is not the client. The grant ends.
      this.revokeGrant(grant.grant_id);
      throw new OAuthError("invalid_grant", "the refresh token was used already; this grant is revoked");
    }
    if (row.expires_at < this.seconds()) throw new OAuthError("invalid_grant", "the refresh token has expired");
    let scopes = grant.scopes.split(" ").filter(Boolean);
    const asked = form.get("scope");
    if (asked !== null) {
      const narrower = asked.split(" ").filter(Boolean);
      if (narrower.some((s) => !scopes.includes(s))) throw new OAuthError("invalid_scope", "a refresh cannot add scopes");
      scopes = narrower;
    }
    return this.tokensFor(grant.grant_id, client, grant.user_id, scopes);
  }

  private async tokensFor(grantId: string, client: Client, user: string, scopes: string[]): Promise<Record<string, unknown>> {
    const tokenScopes = scopes.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    const issued = await this.auth.issuer.issue(user, tokenScopes, ACCESS_TTL_SECONDS, undefined, { client_id: client.id });
    this.store.putAccess(issued.jti, grantId, issued.expiresAt);
    const answer: Record<string, unknown> = {
      access_token: issued.token,
      token_type: "Bearer",
      expires_in: ACCESS_TTL_SECONDS,
      scope: scopes.join(" "),
    };
    // Refresh tokens only when offline_access was granted (MCP 2026-07-28) and the client may use them.
    if (scopes.includes(OFFLINE_ACCESS) && client.grantTypes.includes("refresh_token")) {
      const refresh = secret();
      this.store.putRefresh(sha256(refresh), grantId, this.seconds() + REFRESH_TTL_SECONDS);
      answer.refresh_token = refresh;
    }
    return answer;
  }

  revokeGrant(grantId: string): void {
    for (const t of this.store.revokeGrant(grantId, this.seconds())) this.auth.store.revokeToken(t.jti, t.expires_at);
  }

  /** RFC 7009: a refresh token ends its grant, an access token itself; an unknown token is no error. */
  async revoke(form: URLSearchParams, authorization: string | null): Promise<void> {
    const client = await this.authenticateClient(form, authorization);
    const token = form.get("token");
    if (!token) throw new OAuthError("invalid_request", "token is missing");
    const refresh = this.store.refresh(sha256(token));
    if (refresh) {
      const grant = this.store.grant(refresh.grant_id);
      if (grant?.client_id === client.id) this.revokeGrant(grant.grant_id);
      return;
    }
    try {
      const principal = await this.auth.verifier.verifyUncached(token);
      const grantId = principal.jti ? this.store.accessGrant(principal.jti) : undefined;
      const grant = grantId ? this.store.grant(grantId) : null;
      if (grant?.client_id === client.id) this.auth.store.revokeToken(principal.jti!, principal.expiresAt);
    } catch {
      // Not a token of ours: nothing to revoke (RFC 7009 section 2.2).
    }
  }

  // ---- sessions and login ----

  createSession(user: string): { id: string; csrf: string } {
    const id = secret();
    const csrf = secret();
    this.store.putSession(sha256(id), user, csrf, this.seconds() + SESSION_TTL_SECONDS);
    return { id, csrf };
  }

  session(id: string | undefined): { user: string; csrf: string } | undefined {
    if (!id) return undefined;
    const row = this.store.session(sha256(id));
    if (!row || row.expires_at < this.seconds() || !this.accounts.exists(row.user_id)) return undefined;
    return { user: row.user_id, csrf: row.csrf };
  }

  /**
   * The upstream provider's answer at the callback: the person it names becomes (or stays) a
   * corpus user and gets a session. Throws UpstreamError with what a person may be told.
   */
  async upstreamSignIn(
    params: URLSearchParams,
    binding: string | undefined,
  ): Promise<{ session: { id: string; csrf: string }; returnTo: string }> {
    if (!this.upstream) throw new UpstreamError("no identity provider is configured");
    const who = await this.upstream.finish(params, binding);
    try {
      this.accounts.linkExternal(who.user, this.upstream.issuer, who.subject, who.name);
    } catch (error) {
      throw new UpstreamError(`this person cannot be a corpus user (${error instanceof Error ? error.message : "refused"})`);
    }
    return { session: this.createSession(who.user), returnTo: who.returnTo };
  }

  endSession(id: string): void {
    this.store.deleteSession(sha256(id));
  }

  /** Checks a login; throttled per account and per address. */
  async login(user: string, password: string, address: string): Promise<{ ok: true } | { ok: false; retryAfter?: number }> {
    // Not a possible account name: counted against the address only, never kept as a key of its own.
    if (!SAFE_SUBJECT.test(user)) user = "(invalid)";
    const wait = this.throttle.blockedFor(user, address);
    if (wait > 0) return { ok: false, retryAfter: wait };
    if (await this.accounts.verify(user, password)) {
      this.throttle.succeed(user);
      return { ok: true };
    }
    this.throttle.fail(user, address);
    return { ok: false };
  }

  /** The apps holding a live grant of `user`: for the connected-apps page. */
  async connectedApps(user: string): Promise<Array<{ grantId: string; clientName: string; scopes: string[]; since: number }>> {
    const apps = [];
    for (const g of this.store.liveGrants(user)) {
      const row = this.store.client(g.client_id);
      apps.push({
        grantId: g.grant_id,
        clientName: row?.name ?? g.client_id,
        scopes: g.scopes.split(" ").filter(Boolean),
        since: g.created_at,
      });
    }
    return apps;
  }

  /** Revokes one of `user`'s grants; false when it is not theirs. */
  revokeAppOf(user: string, grantId: string): boolean {
    const grant = this.store.grant(grantId);
    if (!grant || grant.user_id !== user) return false;
    this.revokeGrant(grantId);
    return true;
  }

  /** Ends a user's sessions and grants (password changed, account removed). */
  forgetUser(user: string): void {
    for (const t of this.store.forgetUser(user, this.seconds())) this.auth.store.revokeToken(t.jti, t.expires_at);
  }

  purgeExpired(): number {
    return this.store.purgeExpired(this.seconds());
  }
}
