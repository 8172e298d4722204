// What stands before every protected REST route, as one macro so its steps run in order:
//   1. authentication and scope (D4, D5): 401 / 403 with WWW-Authenticate; a connector
//      panel's token only on the panel's routes (issue 13 item 8);
//   2. the JSON body parsed, only now (issue 13 finding 4): the parse stage left it as text
//      (http/json-body.ts), so a caller without a token or scope costs no parsing whatever
//      its body, and one over their limit neither;
//   2b. the user's data key made present on this node (UserKeys.ready, D33), before anything of
//      theirs is sealed or opened (the idempotency record included): made on first use, but not
//      by the deletion, which needs none;
//   3. Idempotency-Key on POST (D11): a replay is answered from the store and not counted;
//   4. per-user rate limits (D16, LIMITED_ROUTES): the six X-RateLimit-* headers on every
//      response, errors included (401, 403, 400, 409; those refused before the guard get the
//      whole windows from limitHeaders below); 429 with Retry-After; a request then refused as
//      the caller's mistake (400, 401, 413, 415) is given back (D31);
// all in the transform stage, before the body is validated. A claimed key is completed with
// the response, or given up when the request fails so that a retry runs again. What one
// request's stages tell each other is on its RequestInfo (http/request-context.ts).
import { Elysia } from "elysia";
import type { UserKeys } from "../crypto/user-keys";
import { HttpError, rateLimitedError } from "../http/errors";
import { parseJsonObject } from "../http/json-body";
import { JsonText } from "../http/json-text";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { replayResponse } from "../http/response";
import { type Claim, IDEMPOTENCY_KEY_PATTERN, type IdempotencyStore } from "../limits/idempotency";
import { LIMITED_ROUTES, type LimitedEndpoint, type RateDecision, type RateLimits, REFUNDED_STATUSES } from "../limits/rate-limit";
import { type Awaitable, andThen } from "../store/shared";
import { type ProtectedRoute, REQUIRED_SCOPE } from "./scopes";
import type { AuthService } from "./service";
import type { Principal } from "./verifier";

export interface GuardServices {
  auth: AuthService;
  limiter: RateLimits;
  idempotency: IdempotencyStore;
  userKeys: Pick<UserKeys, "ready">;
}

/** The route that makes no data key for a user without one: it only destroys theirs. */
const MAKES_NO_KEY: ProtectedRoute = "DELETE /v1/delete_my_data";

export interface GuardOptions {
  /** The route as REQUIRED_SCOPE names it; LIMITED_ROUTES says whether and how it is limited. */
  route: ProtectedRoute;
}

/** The principal a guarded request was authenticated as (kept on its RequestInfo by the guard). */
function principalOf(info: RequestInfo): Principal {
  const principal = info.verified as Principal | undefined;
  if (!principal) throw new Error("principalOf: the route is not guarded");
  return principal;
}

/**
 * Before a handler writes anything of its user: their token still stands. A deletion revokes
 * every token in the transaction that erases the user, so a request that began before it and
 * checks here, in the same synchronous step as its write, never writes after it (D25).
 */
export const REVOKED_MESSAGE = "Unauthorized: token has been revoked";

/**
 * 401 when the principal's token was revoked while its request did its work; that work still
 * counts against the limit. The embedded store answers at once (in the caller's synchronous step);
 * the shared one later: the caller awaits it right before it writes (D33).
 */
export function assertNotRevoked(auth: AuthService, principal: Principal, info?: RequestInfo): Awaitable<void> {
  return andThen(auth.revoked(principal), (revoked) => {
    if (!revoked) return;
    if (info) info.refusedAfterWork = true;
    throw new HttpError(401, REVOKED_MESSAGE);
  });
}

/** The six X-RateLimit-* headers on whatever the response turns out to be, errors included. */
function withRateHeaders(info: RequestInfo, decision: RateDecision): void {
  info.fixedHeaders = decision.fixed;
  info.ownHeaders = decision.remaining;
}

/** The path of an absolute request URL, without its query. */
function pathOf(url: string): string {
  const start = url.indexOf("/", url.indexOf("//") + 2);
  if (start < 0) return "/";
  const query = url.indexOf("?", start);
  return query < 0 ? url.slice(start) : url.slice(start, query);
}

/**
 * The first stage of every request (before the Host check, the content type and the body
 * limit): a request for a limited route starts with the headers of whole windows, so that a
 * refusal before the guard knows the caller (403 Host or Origin, 415, 413, the 503 timeout)
 * carries the six headers too (D16). The guard puts the caller's own in their place.
 */
export const limitHeaders = (limiter: RateLimits) =>
  new Elysia({ name: "corpus/limit-headers" }).use(requestContext).onRequest(({ request, info }) => {
    const method = request.method;
    if (method !== "POST" && method !== "DELETE") return;
    const endpoint = LIMITED_ROUTES[`${method} ${pathOf(request.url)}`];
    if (!endpoint) return;
    withRateHeaders(infoOf(request, info), limiter.unknownCaller(endpoint));
  });

export const guard = ({ auth, limiter, idempotency, userKeys }: GuardServices) => {
  /**
   * A refusal before the limit is counted: on a limited route it still carries the six headers
   * (D16), the caller's own when the token named one, else those of whole windows.
   */
  async function refused(
    info: RequestInfo,
    limit: LimitedEndpoint | undefined,
    user: string | undefined,
    error: unknown,
  ): Promise<unknown> {
    if (limit) withRateHeaders(info, user === undefined ? limiter.unknownCaller(limit) : await limiter.peek(user, limit));
    return error;
  }

  /**
   * Counts the request; 429 once a window is spent. Counted before the body is judged (a caller
   * over their limit costs no parsing), and given back if it is then refused as the caller's
   * mistake (D31: REFUNDED_STATUSES), the headers saying so.
   */
  async function count(info: RequestInfo, user: string, limit: LimitedEndpoint): Promise<void> {
    const decision = await limiter.hit(user, limit);
    withRateHeaders(info, decision);
    if (!decision.allowed) throw rateLimitedError(decision.retryAfter);
    if (!decision.counted) return;
    info.onFailure((status) => {
      if (!REFUNDED_STATUSES.has(status) || info.refusedAfterWork) return;
      withRateHeaders(info, limiter.refund(user, limit, decision));
    });
  }

  /** The body the parse stage left as text, parsed (400 when it is not JSON or nests too deep). */
  const parseBody = (body: unknown): unknown => (body instanceof JsonText ? parseJsonObject(body.text) : body);

  /** After authentication: scope, then the body, idempotency and the rate limit. Answers the body, parsed. */
  async function admit(
    principal: Principal,
    opts: GuardOptions,
    isPost: boolean,
    request: Request,
    info: RequestInfo,
    raw: unknown,
    read: { user: string; wrapped: Uint8Array | undefined } | undefined,
  ): Promise<unknown> {
    const limit = LIMITED_ROUTES[opts.route];
    try {
      auth.confine(auth.authorize(principal, REQUIRED_SCOPE[opts.route]), opts.route);
    } catch (error) {
      throw await refused(info, limit, principal.user, error);
    }
    info.verified = principal;
    // The key's row read with the token's revocation (the shared store: one round trip), else read here.
    const known = read?.user === principal.user ? { read: { wrapped: read.wrapped } } : {};
    await userKeys.ready(principal.user, { create: opts.route !== MAKES_NO_KEY, ...known });
    const key = isPost ? request.headers.get("idempotency-key") : null;
    if (key === null) {
      // Counted before the body is parsed: a caller over their limit costs no parsing.
      if (limit) await count(info, principal.user, limit);
      return parseBody(raw);
    }

    // With a key, the count waits for the body (a replay is not counted); what is refused
    // before it carries the caller's windows as they stand.
    if (limit) withRateHeaders(info, await limiter.peek(principal.user, limit));
    if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new HttpError(400, "Idempotency-Key: must be 1-255 visible ASCII characters");
    const claim = { user: principal.user, endpoint: opts.route, key };
    const body = parseBody(raw);
    const outcome = await idempotency.begin(claim, body);
    if (outcome.kind !== "claimed") {
      if (outcome.kind === "conflict")
        throw new HttpError(409, outcome.reason, outcome.retryAfterSeconds ? { "retry-after": String(outcome.retryAfterSeconds) } : {});
      info.replay = outcome;
      return body;
    }
    let held: Claim | undefined = claim;
    // Completed with exactly the bytes sent; given up if the request fails, so that a retry runs again.
    info.onJsonWritten = (status, text) => {
      const claimed = held;
      if (!claimed || status >= 400) return;
      held = undefined;
      // Not for a user deleted while the request ran (D25): their rows went with them.
      void andThen(auth.revoked(principal), (revoked) => {
        if (!revoked) idempotency.complete(claimed, status, text);
      });
    };
    info.onFailure(() => {
      if (held) idempotency.release(held);
      held = undefined;
    });
    if (limit) await count(info, principal.user, limit);
    return body;
  }

  /** Replays of idempotent requests: POST routes only. */
  const idempotencyHooks = {
    // The stored bytes go out through the response writer like any answer (same headers).
    beforeHandle({ request, info: scoped }: { request: Request; info: RequestInfo | undefined }) {
      const info = infoOf(request, scoped);
      if (info.replay) return replayResponse(info, info.replay.status, info.replay.body);
    },
  };

  return new Elysia({ name: "corpus/guard" }).use(requestContext).macro({
    guard: (opts: GuardOptions) => {
      const isPost = opts.route.startsWith("POST ");
      const limit = LIMITED_ROUTES[opts.route];
      return {
        // A token seen before is checked at once (Verifier's cache); a new one is awaited here.
        // The context's fields are read and written one by one: a hook that hands the whole
        // context to a function makes Elysia prepare all of it on every request (request-context.ts).
        async transform(context: { request: Request; body: unknown; info: RequestInfo | undefined }) {
          const request = context.request;
          const info = infoOf(request, context.info);
          let principal: Principal;
          let read: { user: string; wrapped: Uint8Array | undefined } | undefined;
          try {
            principal = await auth.authenticate(request.headers.get("authorization"), null, (user, wrapped) => {
              read = { user, wrapped };
            });
          } catch (error) {
            throw await refused(info, limit, undefined, error);
          }
          context.body = await admit(principal, opts, isPost, request, info, context.body, read);
        },
        resolve({ request, info }) {
          return { principal: principalOf(infoOf(request, info)) };
        },
        // Other routes skip these hooks entirely: each hook costs on every request.
        ...(isPost ? idempotencyHooks : {}),
      };
    },
  });
};
