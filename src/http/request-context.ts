// Who asked and under which id: a request id generated here (an incoming X-Request-Id is
// not trusted: ids in our logs are ours) and the client address. Kept per Request object,
// so that every later stage, error and log line (404s and parse errors included) sees the
// same values.
import { Elysia } from "elysia";

interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

// Unique without a random draw per request: a random prefix per process and a counter.
const ID_PREFIX = `req_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
let counter = 0;

export class RequestInfo {
  readonly request_id = `${ID_PREFIX}${(counter++).toString(16).padStart(8, "0")}`;
  readonly started_at = performance.now();
  /** Set by /mcp once the tool of a tools/call is known, for the logs. */
  tool?: string;
  private address?: string;
  private failureHandlers?: Array<() => void>;

  constructor(
    private readonly request: Request,
    private readonly peer?: PeerSource | string,
  ) {}

  /** Runs `fn` if the request ends in an error (e.g. to give up a claimed resource). */
  onFailure(fn: () => void): void {
    (this.failureHandlers ??= []).push(fn);
  }

  /** Called once by the error mapper. */
  failed(): void {
    const handlers = this.failureHandlers;
    this.failureHandlers = undefined;
    for (const fn of handlers ?? []) fn();
  }

  /** The peer's address as the socket reports it ("unknown" in-process); looked up on first use. */
  get client_ip(): string {
    if (this.address === undefined) {
      const p = this.peer;
      this.address = p === undefined ? "unknown" : typeof p === "string" ? p : (p.requestIP(this.request)?.address ?? "unknown");
    }
    return this.address;
  }
}

const infos = new WeakMap<Request, RequestInfo>();

/** Called by the server, with the socket's peer, before the app sees the request. */
export function beginRequest(request: Request, peer?: PeerSource | string): RequestInfo {
  const info = new RequestInfo(request, peer);
  infos.set(request, info);
  return info;
}

export function requestInfo(request: Request): RequestInfo {
  return infos.get(request) ?? beginRequest(request);
}

export const requestContext = new Elysia({ name: "corpus/request-context" }).onRequest(({ request, set }) => {
  set.headers["x-request-id"] = requestInfo(request).request_id;
});
