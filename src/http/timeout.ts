// Request timeout (D17): a request still unanswered after CORPUS_REQUEST_TIMEOUT seconds is
// ended with 503 and a clear body: { type, message }, or a feature's own shape (ErrorShapes: a
// JSON-RPC error on /mcp, whose clients read nothing else). It wraps the app's fetch, so it
// covers every stage.
// Most requests settle at once (Bun.peek sees it) and cost nothing more; the others are
// watched by one shared sweep rather than a timer each.
import { type ErrorShapes, errorBody, shapedErrorBody } from "./errors";
import { infoFor, type RequestInfo } from "./request-context";
import { jsonResponse } from "./response";

export type FetchHandler = (request: Request) => Response | Promise<Response>;

interface Pending {
  deadline: number;
  request: Request;
  resolve: (r: Response) => void;
}

/** The time and the sweep's timer: the real ones, or a test's, which steps through a timeout without waiting for it. */
export interface SweepClock {
  now(): number;
  every(sweep: () => void, ms: number): unknown;
  cancel(timer: unknown): void;
}

const realClock: SweepClock = {
  now: () => performance.now(),
  every: (sweep, ms) => setInterval(sweep, ms),
  cancel: (timer) => clearInterval(timer as ReturnType<typeof setInterval>),
};

export interface TimeoutOptions {
  /** Told of each request that timed out, with its info (the listener logs it). */
  onTimeout?: (request: Request, info: RequestInfo) => void;
  clock?: SweepClock;
  /** The features' own error bodies (the 503 on /mcp is a JSON-RPC error). */
  shapes?: ErrorShapes;
}

export function withTimeout(handle: FetchHandler, seconds: number, options: TimeoutOptions = {}): FetchHandler {
  const { onTimeout, clock = realClock, shapes = [] } = options;
  const ms = seconds * 1000;
  const pending = new Set<Pending>();
  let sweeper: unknown;

  const timeoutResponse = (request: Request) => {
    const info = infoFor(request);
    const body = shapedErrorBody(shapes, new URL(request.url).pathname, 503, errorBody(503, `request timed out after ${seconds} s`), info);
    // With the rate-limit headers the request had gathered (D16: errors included).
    return jsonResponse(body, 503, info, { "retry-after": "1" });
  };

  const sweep = () => {
    const now = clock.now();
    for (const p of pending) {
      if (p.deadline > now) continue;
      pending.delete(p);
      const info = infoFor(p.request);
      info.timedOut = true;
      info.status = 503;
      onTimeout?.(p.request, info);
      p.resolve(timeoutResponse(p.request));
    }
    if (pending.size === 0) {
      clock.cancel(sweeper);
      sweeper = undefined;
    }
  };

  return (request) => {
    // The app takes this request's info from here: what it gathers, the 503 carries.
    infoFor(request);
    const result = handle(request);
    if (!(result instanceof Promise)) return result;
    const settled = Bun.peek(result);
    if (settled !== result) return settled as Response;
    return new Promise<Response>((resolve, reject) => {
      const entry: Pending = { deadline: clock.now() + ms, request, resolve };
      pending.add(entry);
      // Resolution granularity: a tenth of the timeout, at most a quarter second.
      sweeper ??= clock.every(sweep, Math.min(250, Math.max(10, ms / 10)));
      result.then(
        (r) => {
          if (pending.delete(entry)) resolve(r);
        },
        (e) => {
          if (pending.delete(entry)) reject(e);
        },
      );
    });
  };
}
