// Sessions and sign-in at the built-in authorization server (D27): a password checked against
// `corpus user` accounts, throttled per account and address, per account and per address
// (throttle.ts) with each attempt counted before its hash is computed, and the hash itself
// waiting for the process's gate (accounts/hash-gate.ts), one at a time per address, so guesses
// sent at once buy neither CPU nor memory nor every other sign-in's turn (issue 35); or a
// person signed in by the upstream OpenID Connect provider. Then the connected-apps page.

import { HashesBusy } from "../accounts/hash-gate";
import { SAFE_SUBJECT } from "../auth/subjects";
import { type OAuthContext, secondsOf, secret } from "./context";
import { revokeGrant } from "./revocation";
import { sha256 } from "./store";
import { LoginThrottle, type SignInThrottle } from "./throttle";
import { UpstreamError } from "./upstream";

export const SESSION_TTL_SECONDS = 12 * 3600;

/** A sign-in's outcome; refused ones say why and how many seconds to wait. */
export type LoginResult = { ok: true } | { ok: false; refused?: { reason: "throttled" | "busy"; retryAfter: number } };

export class SignIn {
  readonly throttle: SignInThrottle;

  constructor(private readonly ctx: OAuthContext) {
    this.throttle = ctx.throttles?.signIn() ?? new LoginThrottle(ctx.now);
  }

  async createSession(user: string): Promise<{ id: string; csrf: string }> {
    const id = secret();
    const csrf = secret();
    await this.ctx.store.putSession(sha256(id), user, csrf, secondsOf(this.ctx) + SESSION_TTL_SECONDS);
    return { id, csrf };
  }

  async session(id: string | undefined): Promise<{ user: string; csrf: string } | undefined> {
    if (!id) return undefined;
    const row = await this.ctx.store.session(sha256(id));
    if (!row || row.expires_at < secondsOf(this.ctx) || !(await this.ctx.accounts.exists(row.user_id))) return undefined;
    return { user: row.user_id, csrf: row.csrf };
  }

  async endSession(id: string): Promise<void> {
    await this.ctx.store.deleteSession(sha256(id));
  }

  /**
   * Checks a password sign-in from `address` (a limit key: an IPv6 client by its /64) and
   * `device` (the id the browser's device cookie holds): refused before any hash when the throttle is
   * reached (the attempt is counted first) or when the process's hashes are busy, or busy with
   * this address's. Signed in, the address and `issued` (the browser's new device id) are known to the account (throttle.ts).
   */
  async login(user: string, password: string, address: string, device?: string, issued?: string): Promise<LoginResult> {
    // Not a possible account name: counted against the address only, never kept as a key of its own.
    const account = SAFE_SUBJECT.test(user) ? user : undefined;
    const counted = await this.throttle.attempt(account, address, device);
    if ("wait" in counted) return { ok: false, refused: { reason: "throttled", retryAfter: counted.wait } };
    let right: boolean;
    try {
      right = account !== undefined && (await this.ctx.accounts.verify(account, password, address));
    } catch (error) {
      // No password was checked: not the account's failure; a busy refusal is still the address's.
      if (error instanceof HashesBusy) {
        await counted.attempt.busy();
        return { ok: false, refused: { reason: "busy", retryAfter: error.retryAfter } };
      }
      await counted.attempt.refund();
      throw error;
    }
    if (!right) return { ok: false };
    await counted.attempt.succeeded(issued);
    return { ok: true };
  }

  /**
   * The upstream provider's answer at the callback: the person it names becomes (or stays) a
   * corpus user and gets a session. Throws UpstreamError with what a person may be told.
   */
  async upstreamSignIn(
    params: URLSearchParams,
    binding: string | undefined,
  ): Promise<{ session: { id: string; csrf: string }; returnTo: string }> {
    const upstream = this.ctx.upstream;
    if (!upstream) throw new UpstreamError("no identity provider is configured");
    const who = await upstream.finish(params, binding);
    try {
      await this.ctx.accounts.linkExternal(who.user, upstream.issuer, who.subject, who.name);
    } catch (error) {
      throw new UpstreamError(`this person cannot be a corpus user (${error instanceof Error ? error.message : "refused"})`);
    }
    return { session: await this.createSession(who.user), returnTo: who.returnTo };
  }

  /** The apps holding a live grant of `user`: for the connected-apps page. */
  async connectedApps(user: string): Promise<Array<{ grantId: string; clientName: string; scopes: string[]; since: number }>> {
    const grants = await this.ctx.store.liveGrants(user);
    return Promise.all(
      grants.map(async (g) => ({
        grantId: g.grant_id,
        clientName: (await this.ctx.store.client(g.client_id))?.name ?? g.client_id,
        scopes: g.scopes.split(" ").filter(Boolean),
        since: g.created_at,
      })),
    );
  }

  /** Revokes one of `user`'s grants; false when it is not theirs. */
  async revokeAppOf(user: string, grantId: string): Promise<boolean> {
    const grant = await this.ctx.store.grant(grantId);
    if (!grant || grant.user_id !== user) return false;
    await revokeGrant(this.ctx, grantId);
    return true;
  }
}
