// Request timeout (D17): a request still unanswered after CORPUS_REQUEST_TIMEOUT seconds is
// ended with 503 and a clear body: { type, message } on REST, a JSON-RPC error on /mcp (whose
// clients read nothing else). It wraps the app's fetch, so it covers every stage.
// Most requests settle at once (Bun.peek sees it) and cost nothing more; the others are
// watched by one shared sweep rather than a timer each.
import { errorBody, isMcpPath, jsonRpcShape } from "./errors";
import { requestInfo } from "./request-context";
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

export function withTimeout(
  handle: FetchHandler,
  seconds: number,
  onTimeout?: (request: Request) => void,
  clock: SweepClock = realClock,
): FetchHandler {
  const ms = seconds * 1000;
  const pending = new Set<Pending>();
  let sweeper: unknown;

  const timeoutResponse = (request: Request) => {
    const body = errorBody(503, `request timed out after ${seconds} s`);
    const info = requestInfo(request);
    // With the rate-limit headers the request had gathered (D16: errors included).
    return jsonResponse(isMcpPath(new URL(request.url).pathname) ? jsonRpcShape(503, body, info.rpcId) : body, 503, info, {
      "retry-after": "1",
    });
  };

  const sweep = () => {
    const now = clock.now();
    for (const p of pending) {
      if (p.deadline > now) continue;
      pending.delete(p);
      onTimeout?.(p.request);
      p.resolve(timeoutResponse(p.request));
    }
    if (pending.size === 0) {
      clock.cancel(sweeper);
      sweeper = undefined;
    }
  };

  return (request) => {
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
