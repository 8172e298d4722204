// What stands before every protected REST route, as one macro so its steps run in order:
//   1. authentication and scope (D4, D5): 401 / 403 with WWW-Authenticate; a connector
//      panel's token only on the panel's routes (issue 13 item 8);
//   2. Idempotency-Key on POST (D11): a replay is answered from the store and not counted;
//   3. per-user rate limits (D16): the six X-RateLimit-* headers on every response, errors
//      included (401 and 403 too); 429 with Retry-After;
// all in the transform stage, before the body is validated, so that an unauthenticated
// request is 401 whatever its body. A claimed key is completed with the response, or given
// up when the request fails so that a retry runs again. A token seen before is checked
// without a promise, so the common path stays synchronous.
import { Elysia } from "elysia";
import type { AuthService } from "../auth/service";
import { AuthFailure } from "../auth/service";
import { REQUIRED_SCOPE, type ProtectedRoute } from "../auth/scopes";
import type { Principal } from "../auth/verifier";
import { HttpError, rateLimitedError, RunAgain } from "../http/errors";
import { requestInfo, type RequestInfo } from "../http/request-context";
import { replayResponse } from "../http/response";
import { IDEMPOTENCY_KEY_PATTERN, type Claim, type IdempotencyStore } from "../limits/idempotency";
import type { LimitedEndpoint, RateDecision, RateLimiter } from "../limits/rate-limit";

export interface GuardServices {
  auth: AuthService;
  limiter: RateLimiter;
  idempotency: IdempotencyStore;
}

export interface GuardOptions {
  route: ProtectedRoute;
  limit?: LimitedEndpoint;
}

/** Idempotency state of a POST that carries an Idempotency-Key. */
interface IdempotentState {
  claim?: Claim;
  replay?: { status: number; body: string };
}

// Kept on the Request under a private symbol (a WeakMap entry costs ten times more).
const STATE = Symbol("corpus.idempotency");
type Guarded = Request & { [STATE]?: IdempotentState };

/** The principal a guarded request was authenticated as (kept on its RequestInfo). */
export function principalOf(request: Request): Principal {
  const principal = requestInfo(request).verified as Principal | undefined;
  if (!principal) throw new Error("principalOf: the route is not guarded");
  return principal;
}

/**
 * Before a handler writes anything of its user: their token still stands. A deletion revokes
 * every token in the transaction that erases the user, so a request that began before it and
 * checks here, in the same synchronous step as its write, never writes after it (D25).
 */
export function assertNotRevoked(auth: AuthService, principal: Principal): void {
  if (auth.revoked(principal)) throw new HttpError(401, "Unauthorized: token has been revoked");
}

/** The six X-RateLimit-* headers on whatever the response turns out to be, errors included. */
function withRateHeaders(info: RequestInfo, decision: RateDecision): void {
  info.fixedHeaders = decision.fixed;
  info.ownHeaders = decision.remaining;
}

function asHttpError(error: unknown): unknown {
  return error instanceof AuthFailure ? new HttpError(error.status, error.message, { "www-authenticate": error.challenge }) : error;
}

export const guard = ({ auth, limiter, idempotency }: GuardServices) => {
  /**
   * A refusal before the limit is counted: on a limited route it still carries the six headers
   * (D16), the caller's own when the token named one, else those of whole windows.
   */
  function refused(info: RequestInfo, opts: GuardOptions, user: string | undefined, error: unknown): unknown {
    if (opts.limit) withRateHeaders(info, user === undefined ? limiter.unknownCaller(opts.limit) : limiter.peek(user, opts.limit));
    return asHttpError(error);
  }

  /** After authentication: scope, idempotency, then the rate limit. */
  function admit(principal: Principal, opts: GuardOptions, isPost: boolean, request: Request, info: RequestInfo, body: unknown): void {
    try {
      auth.confine(auth.authorize(principal, REQUIRED_SCOPE[opts.route]), opts.route);
    } catch (error) {
      throw refused(info, opts, principal.user, error);
    }
    info.verified = principal;
    const key = isPost ? request.headers.get("idempotency-key") : null;
    const limit = opts.limit;
    if (key !== null) {
      const state: IdempotentState = {};
      (request as Guarded)[STATE] = state;
      if (!IDEMPOTENCY_KEY_PATTERN.test(key)) throw new HttpError(400, "Idempotency-Key: must be 1-255 visible ASCII characters");
      const claim = { user: principal.user, endpoint: opts.route, key };
      const outcome = idempotency.begin(claim, body);
      if (outcome.kind !== "claimed") {
        if (limit) withRateHeaders(info, limiter.peek(principal.user, limit));
        if (outcome.kind === "conflict") throw new HttpError(409, outcome.reason);
        state.replay = outcome;
        return;
      }
      state.claim = claim;
      // Completed with exactly the bytes sent; given up if the request fails, so that a retry runs again.
      info.onJsonWritten = (status, text) => {
        if (!state.claim || status >= 400 || auth.revoked(principal)) return;
        idempotency.complete(state.claim, status, text);
        state.claim = undefined;
      };
      info.onFailure(() => {
        if (state.claim) idempotency.release(state.claim);
        state.claim = undefined;
      });
    }

    if (limit) {
      const decision = limiter.hit(principal.user, limit);
      withRateHeaders(info, decision);
      if (!decision.allowed) throw rateLimitedError(decision.retryAfter);
    }
  }

  /** Replays of idempotent requests: POST routes only. */
  const idempotencyHooks = {
    // The stored bytes go out through the response writer like any answer (same headers).
    beforeHandle({ request }: { request: Request }) {
      const replay = (request as Guarded)[STATE]?.replay;
      if (replay) return replayResponse(request, replay.status, replay.body);
    },
  };

  return new Elysia({ name: "corpus/guard" }).macro({
    guard: (opts: GuardOptions) => {
      const isPost = opts.route.startsWith("POST ");
      return {
        // Declared synchronous, so that Elysia does not await it on every request: a token seen
        // before is checked at once; a new one is verified and the request run again (RunAgain).
        transform: {
          isAsync: false,
          fn({ request, body }: { request: Request; body: unknown }) {
            const info = requestInfo(request);
            let principal = info.verified as Principal | undefined;
            if (!principal) {
              let outcome: Principal | Promise<Principal>;
              try {
                outcome = auth.authenticate(request.headers.get("authorization"), null);
              } catch (error) {
                throw refused(info, opts, undefined, error);
              }
              if (outcome instanceof Promise) throw new RunAgain(outcome.then((p) => (info.verified = p), (e) => Promise.reject(refused(info, opts, undefined, e))));
              principal = outcome;
            }
            admit(principal, opts, isPost, request, info, body);
          },
        } as never,
        resolve({ request }) {
          return { principal: principalOf(request) };
        },
        // Other routes skip these hooks entirely: each hook costs on every request.
        ...(isPost ? idempotencyHooks : {}),
      };
    },
  });
};
