// OAuth 2.0 grants of users' IMAP connectors (issue 38), corpus as the client: the user starts
// an authorization-code flow with PKCE S256 (begin), the provider sends the browser back to
// CALLBACK_PATH, where the person confirms who asked (describe), the code is exchanged (finish)
// and the refresh token kept sealed with the
// user's data key like a password (D20, rows.ts): never shown, never logged. Access tokens live
// in memory only, refreshed before they expire; a grant the provider refuses (revoked, expired)
// is kept refused, its reason the connector's status, until access is granted again. The token
// endpoint is reached at a pinned address under the users' rules (D26): public, or listed in
// CORPUS_CONNECTOR_ALLOW_HOSTS.

import { Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { OPERATOR_OWNER } from "../../auth/subjects";
import { DomainError } from "../../errors";
import type { Logger } from "../../log";
import { postPinnedForAnswer } from "../../net/get";
import { HostRefused, normalizeHost, type Pin } from "../../net/pin";
import { randomToken, sha256 } from "../../oauth/upstream";
import type { Awaitable } from "../../store/shared";
import { CONNECT_TIMEOUT_MS, refusedMessage } from "../remote";
import type { ConnectorRows } from "../rows";
import { ConnectorError } from "../types";
import { CALLBACK_PATH, PROVIDERS_VARIABLE, type Provider } from "./providers";

/** The start of a state of a grant started in a terminal (`corpus connector grant`): the callback page sends the person back there. */
export const TERMINAL_STATE_PREFIX = "terminal.";
/** How long a user has at the provider before the grant must start again. */
export const PENDING_TTL_MS = 600_000;
/** Grants waiting at the provider, in all and per user: past either, the oldest is forgotten. */
export const MAX_PENDING = 10_000;
export const MAX_PENDING_PER_USER = 5;
/** An access token is refreshed this long before it expires (or at half its life, if shorter). */
export const REFRESH_MARGIN_MS = 300_000;
/** Within the IMAP operation that asks for a token (7 s), as connecting is (remote.ts). */
const TOKEN_TIMEOUT_MS = CONNECT_TIMEOUT_MS;
const MAX_ANSWER_BYTES = 64 * 1024;
/** An access token without expires_in is taken to last this long (RFC 6749 leaves it to the provider's documentation). */
const DEFAULT_LIFETIME_S = 3600;

/** What a grant was given for: its access tokens go to no other server, user or provider. */
export const GrantBindingSchema = Type.Object({
  host: Type.String(),
  port: Type.Integer(),
  secure: Type.Boolean(),
  user: Type.String(),
  provider: Type.String(),
});
export type GrantBinding = typeof GrantBindingSchema.static;

const StoredGrantSchema = Type.Object({
  refresh_token: Type.String({ minLength: 1 }),
  binding: GrantBindingSchema,
  granted_at: Type.String(),
  /** Why the provider refused it last (revoked, expired): shown until access is granted again. */
  refused: Type.Optional(Type.String()),
});
type StoredGrant = typeof StoredGrantSchema.static;

/** A grant that cannot be finished: told the person at the callback page. */
export class GrantFlowError extends Error {}

/**
 * What the owner is shown of a connector's grant (the panel's "grant access" row): none yet,
 * waiting at the provider, granted (its access token's expiry: it is refreshed before), or an
 * error with its reason (refused by the provider, unusable, or the last attempt's failure).
 */
export interface GrantState {
  provider: string;
  state: "none" | "waiting" | "granted" | "error";
  granted_at?: string;
  access_expires_at?: string;
  /** A grant started and not finished yet must be finished before then. */
  waiting_until?: string;
  reason?: string;
}

const grantAgain = (owner: string, id: string) => `grant access again with ${grantRoute(owner, id)}`;
const NO_GRANT = (owner: string, id: string) => `no OAuth grant yet: access is granted with ${grantRoute(owner, id)}`;
const UNREADABLE = (owner: string, id: string) => `the stored OAuth grant is unreadable; ${grantAgain(owner, id)}`;
const OTHER_BINDING = (owner: string, id: string) =>
  `access was granted for another host, port, TLS setting, user or provider than the connector's now; ${grantAgain(owner, id)}`;

/** The provider refused the grant itself (invalid_grant): revoked, expired, or given to another client. */
class GrantRefused extends Error {}

export interface AccessToken {
  accessToken: string;
  expiresAt: number;
  obtainedAt: number;
}

/** What an OAuth connector is given (KindContext): access tokens of its grant. */
export interface AccessTokens {
  /** An access token for `binding` that is not due for refresh; throws ConnectorError with the reason shown as the connector's status. */
  token(binding: GrantBinding): Promise<AccessToken>;
  /** Whether `token` is due for refresh now (a connection signed in with it is not reused past that). */
  due(token: AccessToken): boolean;
  /** The server refused `token`: it is not offered again (the next connection refreshes). */
  refusedByServer(token: AccessToken): void;
}

interface Pending {
  owner: string;
  id: string;
  /** Who is shown as having asked, when not the owner (the operator's account at the console). */
  asker?: string;
  binding: GrantBinding;
  verifier: string;
  expiresAt: number;
  /** Throws (or rejects) once the token that started the grant is revoked (its user deleted, a sign-out), or its operator is none. */
  stillAllowed: () => Awaitable<void>;
}

export interface GrantOptions {
  rows: ConnectorRows;
  providers: ReadonlyMap<string, Provider>;
  /** How the owner's outbound connections are checked (D26). */
  pin: (owner: string) => Pin;
  /** corpus's public URL (D4 resource URL): the callback is under it. */
  publicUrl: string;
  now: () => number;
  log: Logger;
}

/** How access is granted: a user's connector through the API (or their panel), the operator's with the CLI or the console. */
const grantRoute = (owner: string, id: string) =>
  owner === OPERATOR_OWNER ? `corpus connector grant --id ${id} (or the console's Connectors page)` : `POST /v1/connectors/${id}/oauth`;

export class ConnectorGrants {
  private readonly pending = new Map<string, Pending>();
  /** Why the last attempt at a connector's grant failed (by `owner/id`), until the next one starts or succeeds; at most MAX_PENDING. */
  private readonly failed = new Map<string, string>();
  private readonly tokens = new Map<string, AccessToken>();
  private readonly refreshing = new Map<string, Promise<AccessToken>>();

  constructor(private readonly options: GrantOptions) {}

  get redirectUri(): string {
    return `${this.options.publicUrl}${CALLBACK_PATH}`;
  }

  /** The provider named by `config.oauth`; 400 naming the field when the operator has none such. */
  provider(name: string): Provider {
    const p = this.options.providers.get(name);
    if (p) return p;
    const known = [...this.options.providers.keys()];
    throw new DomainError(
      "invalid",
      `config.oauth: no OAuth provider ${name}; ${known.length ? `the operator's are: ${known.join(", ")}` : `the operator lists none (${PROVIDERS_VARIABLE})`}`,
    );
  }

  /** Why `binding` cannot be granted (no such provider, a host its tokens may not go to), or undefined. */
  problem(binding: GrantBinding): string | undefined {
    try {
      this.providerFor(binding);
      return undefined;
    } catch (e) {
      if (e instanceof DomainError) return e.message;
      throw e;
    }
  }

  /** The provider of `binding`, its access tokens allowed to go to the binding's host. */
  private providerFor(binding: GrantBinding): Provider {
    const p = this.provider(binding.provider);
    if (!p.imap_hosts.includes(normalizeHost(binding.host)))
      throw new DomainError("invalid", `config.host: ${p.title}'s access tokens go only to ${p.imap_hosts.join(", ")}`);
    return p;
  }

  /**
   * Starts a grant for `owner`'s connector `id`: the provider's authorization URL, with a state
   * that is single use, expires, and is bound to the user's token (`stillAllowed`).
   */
  begin(
    owner: string,
    id: string,
    binding: GrantBinding,
    stillAllowed: () => Awaitable<void>,
    options: { statePrefix?: string; asker?: string } = {},
  ): { authorize_url: string; expires_at: string } {
    const provider = this.providerFor(binding);
    const state = `${options.statePrefix ?? ""}${randomToken()}`;
    const verifier = randomToken();
    const now = this.options.now();
    this.forgetExpired();
    const mine = [...this.pending].filter(([, p]) => p.owner === owner);
    for (const [key] of mine.slice(0, Math.max(0, mine.length - MAX_PENDING_PER_USER + 1))) this.pending.delete(key);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    this.pending.set(sha256(state), {
      owner,
      id,
      ...(options.asker ? { asker: options.asker } : {}),
      binding,
      verifier,
      expiresAt: now + PENDING_TTL_MS,
      stillAllowed,
    });
    this.failed.delete(`${owner}/${id}`);
    const url = new URL(provider.authorization_endpoint);
    for (const [k, v] of Object.entries(provider.authorization_parameters ?? {})) url.searchParams.set(k, v);
    const params = {
      response_type: "code",
      client_id: provider.client_id,
      redirect_uri: this.redirectUri,
      scope: provider.scopes.join(" "),
      state,
      code_challenge: sha256(verifier),
      code_challenge_method: "S256",
      // Which mailbox: Microsoft and Google preselect the account, a local provider may ignore it.
      login_hint: binding.user,
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { authorize_url: url.href, expires_at: new Date(now + PENDING_TTL_MS).toISOString() };
  }

  private forgetExpired(): void {
    const now = this.options.now();
    // Inserted in time order with one lifetime: the expired ones are at the front.
    for (const [key, p] of this.pending) {
      if (p.expiresAt > now) break;
      this.pending.delete(key);
    }
  }

  /** A deleted user's access tokens and waiting grants are forgotten (their rows went with their data). */
  forgetOwner(owner: string): void {
    for (const key of this.tokens.keys()) if (key.slice(0, key.lastIndexOf("/")) === owner) this.tokens.delete(key);
    for (const [key, p] of this.pending) if (p.owner === owner) this.pending.delete(key);
    for (const key of this.failed.keys()) if (key.slice(0, key.lastIndexOf("/")) === owner) this.failed.delete(key);
  }

  /** Grants waiting at a provider (tests: nothing grows without bound). */
  pendingCount(): number {
    this.forgetExpired();
    return this.pending.size;
  }

  /** The grant waiting under `state`, left waiting; GrantFlowError when there is none. */
  private waiting(state: string | null): { key: string; pending: Pending } {
    const key = state ? sha256(state) : undefined;
    const pending = key ? this.pending.get(key) : undefined;
    if (!key || !pending || pending.expiresAt <= this.options.now())
      throw new GrantFlowError("this grant is unknown, was used already or has expired; start again from corpus");
    return { key, pending };
  }

  /**
   * Who asked for the grant waiting under `state`, for the page that asks the person at the
   * callback to confirm it (the grant is not used up).
   */
  async describe(state: string | null): Promise<{ owner: string; asker?: string; id: string; provider: string; user: string }> {
    const { pending } = this.waiting(state);
    try {
      await pending.stillAllowed();
    } catch {
      throw new GrantFlowError("the corpus session that started this grant has ended; start again from corpus");
    }
    return {
      owner: pending.owner,
      ...(pending.asker ? { asker: pending.asker } : {}),
      id: pending.id,
      provider: this.providerFor(pending.binding).title,
      user: pending.binding.user,
    };
  }

  /** The person at the callback declined: the grant waiting under `state` is forgotten. */
  cancel(state: string | null): void {
    const { key, pending } = this.waiting(state);
    this.pending.delete(key);
    this.remember(pending, "it was cancelled at the confirmation page");
  }

  /**
   * The provider's answer at the callback, confirmed: the state used once, the code exchanged
   * with the PKCE verifier, the refresh token kept. Answers whose connector now has access.
   */
  async finish(params: URLSearchParams): Promise<{ owner: string; id: string; provider: string; user: string }> {
    const { key, pending } = this.waiting(params.get("state"));
    this.pending.delete(key);
    try {
      return await this.exchange(pending, params);
    } catch (error) {
      this.remember(pending, error instanceof GrantFlowError ? error.message : "the grant could not be finished");
      throw error;
    }
  }

  /** Why `pending` did not go through, shown with its connector until the next attempt. */
  private remember(pending: Pending, why: string): void {
    const key = `${pending.owner}/${pending.id}`;
    this.failed.delete(key);
    while (this.failed.size >= MAX_PENDING) this.failed.delete(this.failed.keys().next().value!);
    this.failed.set(key, `the last attempt to grant access failed: ${why}`);
  }

  private async exchange(
    pending: Pending,
    params: URLSearchParams,
  ): Promise<{ owner: string; id: string; provider: string; user: string }> {
    try {
      await pending.stillAllowed();
    } catch {
      throw new GrantFlowError("the corpus session that started this grant has ended; start again from corpus");
    }
    const provider = this.providerFor(pending.binding);
    const error = params.get("error");
    if (error) throw new GrantFlowError(`${provider.title} did not grant access (${oauthCode(error)})`);
    const code = params.get("code");
    if (!code) throw new GrantFlowError(`${provider.title}'s answer has no code`);
    let answer: TokenAnswer;
    try {
      answer = await this.tokenRequest(pending.owner, provider, {
        grant_type: "authorization_code",
        code,
        redirect_uri: this.redirectUri,
        code_verifier: pending.verifier,
      });
    } catch (e) {
      throw new GrantFlowError(e instanceof Error ? e.message : `${provider.title} did not answer`);
    }
    if (!answer.refresh_token)
      throw new GrantFlowError(
        `${provider.title} gave no refresh token, so access would end within the hour: the operator asks it for offline access (Microsoft: the offline_access scope; Google: access_type=offline and prompt=consent)`,
      );
    const grant: StoredGrant = {
      refresh_token: answer.refresh_token,
      binding: pending.binding,
      granted_at: new Date(this.options.now()).toISOString(),
    };
    if (!(await this.options.rows.setGrant(pending.owner, pending.id, grant)))
      throw new GrantFlowError("the connector was removed meanwhile; nothing was kept");
    this.tokens.set(`${pending.owner}/${pending.id}`, this.cached(answer));
    this.failed.delete(`${pending.owner}/${pending.id}`);
    this.options.log.info("connector OAuth grant kept", { connector: pending.id, provider: provider.id });
    return { owner: pending.owner, id: pending.id, provider: provider.title, user: pending.binding.user };
  }

  private cached(answer: TokenAnswer): AccessToken {
    const now = this.options.now();
    return { accessToken: answer.access_token, expiresAt: now + answer.expires_in * 1000, obtainedAt: now };
  }

  /** What `owner` is shown of the grant of their connector `id`, which signs in as `binding` says. */
  async state(owner: string, id: string, binding: GrantBinding): Promise<GrantState> {
    const key = `${owner}/${id}`;
    let provider: Provider;
    try {
      provider = this.providerFor(binding);
    } catch (e) {
      return { provider: binding.provider, state: "error", reason: (e as Error).message };
    }
    const shown = { provider: provider.title };
    this.forgetExpired();
    let waitingUntil: number | undefined;
    for (const p of this.pending.values()) if (p.owner === owner && p.id === id) waitingUntil = Math.max(waitingUntil ?? 0, p.expiresAt);
    const waiting = waitingUntil !== undefined ? { waiting_until: new Date(waitingUntil).toISOString() } : {};
    const stored = await this.options.rows.grant(owner, id);
    // Why the last attempt failed: the error of a connector without a grant, a note beside one that still works.
    const failed = waitingUntil ? undefined : this.failed.get(key);
    if (stored === undefined)
      return waitingUntil
        ? { ...shown, state: "waiting", ...waiting }
        : failed
          ? { ...shown, state: "error", reason: failed }
          : { ...shown, state: "none" };
    if (!Value.Check(StoredGrantSchema, stored))
      return { ...shown, state: waitingUntil ? "waiting" : "error", reason: UNREADABLE(owner, id), ...waiting };
    const granted = { granted_at: stored.granted_at };
    if (stored.refused) return { ...shown, state: waitingUntil ? "waiting" : "error", ...granted, reason: stored.refused, ...waiting };
    if (!Value.Equal(stored.binding, binding))
      return { ...shown, state: waitingUntil ? "waiting" : "error", ...granted, reason: OTHER_BINDING(owner, id), ...waiting };
    const token = this.tokens.get(key);
    return {
      ...shown,
      state: "granted",
      ...granted,
      ...(token ? { access_expires_at: new Date(token.expiresAt).toISOString() } : {}),
      ...waiting,
      ...(failed ? { reason: failed } : {}),
    };
  }

  /** The access tokens of `owner`'s connector `id`. */
  forConnector(owner: string, id: string): AccessTokens {
    const key = `${owner}/${id}`;
    return {
      token: (binding) => this.token(owner, id, binding),
      due: (token) => this.isDue(token),
      refusedByServer: (token) => {
        if (this.tokens.get(key)?.accessToken === token.accessToken) this.tokens.delete(key);
      },
    };
  }

  private isDue(t: AccessToken): boolean {
    const margin = Math.min(REFRESH_MARGIN_MS, (t.expiresAt - t.obtainedAt) / 2);
    return this.options.now() >= t.expiresAt - margin;
  }

  private async token(owner: string, id: string, binding: GrantBinding): Promise<AccessToken> {
    const key = `${owner}/${id}`;
    let provider: Provider;
    try {
      provider = this.providerFor(binding);
    } catch (e) {
      throw new ConnectorError((e as Error).message);
    }
    const stored = await this.options.rows.grant(owner, id);
    if (stored === undefined) {
      this.tokens.delete(key);
      throw new ConnectorError(NO_GRANT(owner, id));
    }
    if (!Value.Check(StoredGrantSchema, stored)) throw new ConnectorError(UNREADABLE(owner, id));
    if (stored.refused) throw new ConnectorError(stored.refused);
    if (!Value.Equal(stored.binding, binding)) throw new ConnectorError(OTHER_BINDING(owner, id));
    const cached = this.tokens.get(key);
    if (cached && !this.isDue(cached)) return cached;
    // One refresh at a time per grant: a provider that rotates refresh tokens takes the old one once.
    let running = this.refreshing.get(key);
    if (!running) {
      running = this.refresh(owner, id, provider, stored).finally(() => this.refreshing.delete(key));
      this.refreshing.set(key, running);
    }
    return running;
  }

  private async refresh(owner: string, id: string, provider: Provider, grant: StoredGrant): Promise<AccessToken> {
    const key = `${owner}/${id}`;
    let answer: TokenAnswer;
    // Access granted again while the provider answered: its answer is the old grant's, and
    // neither refuses nor replaces the new one (the new one's token is cached by finish).
    const replaced = async () =>
      ((await this.options.rows.grant(owner, id)) as StoredGrant | undefined)?.refresh_token !== grant.refresh_token;
    const grantedAgain = () => {
      const current = this.tokens.get(key);
      if (current && !this.isDue(current)) return current;
      throw new ConnectorError("access was granted again meanwhile; the next attempt uses it");
    };
    try {
      answer = await this.tokenRequest(owner, provider, { grant_type: "refresh_token", refresh_token: grant.refresh_token });
    } catch (e) {
      if (!(e instanceof GrantRefused)) throw new ConnectorError((e as Error).message);
      if (await replaced()) return grantedAgain();
      const reason = `${e.message}; ${grantAgain(owner, id)}`;
      this.tokens.delete(key);
      // Kept refused: every later check shows why, without asking the provider again.
      await this.options.rows.setGrant(owner, id, { ...grant, refused: reason });
      this.options.log.warning("connector OAuth grant refused by its provider", { connector: id, provider: provider.id });
      throw new ConnectorError(reason);
    }
    if (await replaced()) return grantedAgain();
    // A provider that rotates refresh tokens answers a new one; the old one is not kept.
    if (answer.refresh_token && answer.refresh_token !== grant.refresh_token)
      await this.options.rows.setGrant(owner, id, { ...grant, refresh_token: answer.refresh_token });
    const fresh = this.cached(answer);
    this.tokens.set(key, fresh);
    return fresh;
  }

  /** A POST to the provider's token endpoint, at an address the owner's rules allow (D26). */
  private async tokenRequest(owner: string, provider: Provider, fields: Record<string, string>): Promise<TokenAnswer> {
    const url = new URL(provider.token_endpoint);
    const form = new URLSearchParams({ ...fields, client_id: provider.client_id });
    if (provider.client_secret) form.set("client_secret", provider.client_secret);
    const where = `${provider.title}'s token endpoint`;
    let answer: Awaited<ReturnType<typeof postPinnedForAnswer>>;
    try {
      const pinned = await this.options.pin(owner)(url.hostname);
      answer = await postPinnedForAnswer(url, pinned, {
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: form.toString(),
        timeoutMs: TOKEN_TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
      });
    } catch (e) {
      if (e instanceof HostRefused) throw new Error(refusedMessage(where, e));
      throw new Error(`${where} cannot be reached`);
    }
    let body: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(answer.body);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
    } catch {}
    if (answer.status !== 200) {
      const code = typeof body.error === "string" ? oauthCode(body.error) : `HTTP ${answer.status}`;
      if (code === "invalid_grant")
        throw fields.grant_type === "refresh_token"
          ? new GrantRefused(`${provider.title} refused the OAuth grant (invalid_grant): access was revoked or has expired`)
          : new Error(
              `${provider.title} refused the code (invalid_grant): it was used already, has expired, or was asked for by another grant`,
            );
      throw new Error(`${where} refused the request (${code})`);
    }
    const { access_token, refresh_token, expires_in } = body;
    if (typeof access_token !== "string" || access_token.length === 0 || /\p{Cc}/u.test(access_token))
      throw new Error(`${where} answered no usable access_token`);
    const lifetime = typeof expires_in === "number" && expires_in > 0 ? Math.min(expires_in, 86_400) : DEFAULT_LIFETIME_S;
    return {
      access_token,
      expires_in: lifetime,
      ...(typeof refresh_token === "string" && refresh_token.length > 0 ? { refresh_token } : {}),
    };
  }
}

interface TokenAnswer {
  access_token: string;
  expires_in: number;
  refresh_token?: string;
}

/** An OAuth error code as it may be shown: its characters (RFC 6749 section 5.2), at most 60 of them. */
const oauthCode = (code: string) => code.replace(/[^\x20-\x21\x23-\x5b\x5d-\x7e]/g, "").slice(0, 60) || "unknown error";
