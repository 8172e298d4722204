// corpus as its own OAuth 2.1 authorization server (D27, D28; MCP authorization 2025-11-25
// and 2026-07-28): authorization code with PKCE S256 only, clients registered dynamically
// (RFC 7591) or named by the URL of their metadata document (Client ID Metadata Documents),
// redirect URIs from an allow-list, matched exactly (a loopback one on any port, RFC 8252
// section 7.3), tokens bound to this resource (RFC 8707), refresh tokens only with
// offline_access, rotating, a replayed one revoking its whole grant, and revocation (RFC 7009).
// Access tokens are the EdDSA JWTs of D4, issued by the auth room's TokenIssuer and verified by
// its Verifier. This is the one object the routes hold; each endpoint lives in its own file:
// registration.ts (and metadata-document.ts), authorization.ts, grants/ (the token endpoint),
// revocation.ts, sign-in.ts (sessions, password sign-in, connected apps); errors.ts their errors.

import type postgres from "postgres";
import type { Accounts } from "../accounts/store";
import type { AuthService } from "../auth/service";
import type { Config } from "../config";
import { type Awaitable, inTransaction } from "../store/shared";
import { Authorization, type AuthorizationRequest, type RedirectError } from "./authorization";
import type { OAuthContext } from "./context";
import { token } from "./grants";
import type { MetadataDocumentOptions } from "./metadata-document";
import { Clients } from "./registration";
import { forgetUser, revoke } from "./revocation";
import { grantableScopes, signsInUpstream } from "./scopes";
import { type LoginResult, SignIn } from "./sign-in";
import type { OAuthStore } from "./store";
import type { SharedThrottles } from "./throttle-postgres";
import { UPSTREAM_CALLBACK_PATH, UpstreamError, UpstreamOidc } from "./upstream";

export type OAuthOptions = MetadataDocumentOptions & {
  /** The shared database's throttles (D33); without, each node counts in its memory. */
  throttles?: SharedThrottles;
};

export class OAuthServer {
  readonly store: OAuthStore;
  readonly accounts: Accounts;
  /** The upstream OpenID Connect provider people sign in at, when CORPUS_OIDC_ISSUER is set. */
  readonly upstream?: UpstreamOidc;
  private readonly ctx: OAuthContext;
  private readonly clients: Clients;
  private readonly authorization: Authorization;
  private readonly signIn: SignIn;

  constructor(
    config: Config,
    auth: AuthService,
    accounts: Accounts,
    store: OAuthStore,
    now: () => number = Date.now,
    options: OAuthOptions = {},
  ) {
    this.store = store;
    this.accounts = accounts;
    if (signsInUpstream(config)) {
      this.upstream = new UpstreamOidc(
        {
          issuer: config.CORPUS_OIDC_ISSUER!,
          clientId: config.CORPUS_OIDC_CLIENT_ID!,
          clientSecret: config.CORPUS_OIDC_CLIENT_SECRET!,
          redirectUri: `${config.issuer}${UPSTREAM_CALLBACK_PATH}`,
        },
        now,
      );
    }
    this.ctx = {
      config,
      auth,
      accounts,
      store,
      now,
      resources: new Set([config.resourceUrl, `${config.resourceUrl}/`, `${config.resourceUrl}/mcp`]),
      ...(this.upstream ? { upstream: this.upstream } : {}),
      ...(options.throttles ? { throttles: options.throttles } : {}),
    };
    this.clients = new Clients(this.ctx, options);
    this.authorization = new Authorization(this.ctx, this.clients);
    this.signIn = new SignIn(this.ctx);
  }

  /** The scopes a client may ask for here: with an upstream provider, openid too. */
  grantableScopes(): string[] {
    return grantableScopes(this.ctx.config);
  }

  /** The same list from the configuration alone, for the metadata documents. */
  static grantableScopes(config: Config): string[] {
    return grantableScopes(config);
  }

  /** Whether sign-in happens at an upstream OpenID Connect provider (all three CORPUS_OIDC_* set). */
  static signsInUpstream(config: Config): boolean {
    return signsInUpstream(config);
  }

  /** Whether this server is the authorization server (no external endpoints configured). */
  static builtIn(config: Config): boolean {
    return !config.CORPUS_OAUTH_AUTHORIZATION_ENDPOINT && !config.CORPUS_OAUTH_TOKEN_ENDPOINT;
  }

  register(meta: Record<string, unknown>, address: string): Promise<Record<string, unknown>> {
    return this.clients.register(meta, address);
  }

  authorizationRequest(
    params: URLSearchParams,
    address: string,
  ): Promise<{ request: AuthorizationRequest } | { redirectError: RedirectError }> {
    return this.authorization.request(params, address);
  }

  issueCode(request: AuthorizationRequest, user: string, granted: string[]): Promise<string> {
    return this.authorization.issueCode(request, user, granted);
  }

  redirect(uri: string, params: Record<string, string>): string {
    return this.authorization.redirect(uri, params);
  }

  token(form: URLSearchParams, authorization: string | null, address: string): Promise<Record<string, unknown>> {
    return token(this.ctx, this.clients, form, authorization, address);
  }

  revoke(form: URLSearchParams, authorization: string | null, address: string): Promise<void> {
    return revoke(this.ctx, this.clients, form, authorization, address);
  }

  createSession(user: string): Promise<{ id: string; csrf: string }> {
    return this.signIn.createSession(user);
  }

  session(id: string | undefined): Promise<{ user: string; csrf: string } | undefined> {
    return this.signIn.session(id);
  }

  endSession(id: string): Promise<void> {
    return this.signIn.endSession(id);
  }

  login(user: string, password: string, address: string, device?: string, issued?: string): Promise<LoginResult> {
    return this.signIn.login(user, password, address, device, issued);
  }

  async upstreamSignIn(
    params: URLSearchParams,
    binding: string | undefined,
  ): Promise<{ session: { id: string; csrf: string }; returnTo: string }> {
    try {
      const done = await this.signIn.upstreamSignIn(params, binding);
      this.onUpstreamSignIn?.(true);
      return done;
    } catch (error) {
      if (error instanceof UpstreamError) this.onUpstreamSignIn?.(false);
      throw error;
    }
  }

  /** Told of each answer of the upstream provider at the callback: a sign-in completed or refused (the sign-in metrics, D35). */
  onUpstreamSignIn?: (completed: boolean) => void;

  connectedApps(user: string): Promise<Array<{ grantId: string; clientName: string; scopes: string[]; since: number }>> {
    return this.signIn.connectedApps(user);
  }

  revokeAppOf(user: string, grantId: string): Promise<boolean> {
    return this.signIn.revokeAppOf(user, grantId);
  }

  /** A user's sessions and grants ended, their access tokens revoked (revocation.ts). */
  forgetUser(user: string): Awaitable<void> {
    return forgetUser(this.ctx, user);
  }

  /** The erase and count of a user's deletion inside its PostgreSQL transaction (D33); refused for the embedded store. */
  within(tx: postgres.TransactionSql): Pick<OAuthServer, "forgetUser" | "store"> {
    const ctx = { ...this.ctx, store: inTransaction(this.store, tx, "oauth") };
    return { forgetUser: (user) => forgetUser(ctx, user), store: ctx.store };
  }

  /** Expired rows, and the shared throttles' events out of their windows (D33). */
  purgeExpired(): Awaitable<number> {
    const purged = this.store.purgeExpired(Math.floor(this.ctx.now() / 1000));
    const throttles = this.ctx.throttles;
    return throttles ? Promise.all([purged, throttles.sweep()]).then(([a, b]) => a + b) : purged;
  }
}
