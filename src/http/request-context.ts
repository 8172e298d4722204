// Who asked and under which id: a request id generated here (an incoming X-Request-Id is
// not trusted: ids in our logs are ours) and the client address, with what the stages of one
// request tell each other (rate-limit headers, the principal, the JSON-RPC id...).
//
// Kept on Elysia's context, the object Elysia makes for each request and hands to every hook
// of it (request, transform, handler, mapResponse, error, afterResponse), as `info`: declared
// by the requestContext plugin and set by its request hook, the app's first. Elysia's own
// derive/resolve come too late for this (they run at the transform stage, after the request
// hooks, and never for a 404). Hooks destructure it (`({ request, info }) => infoOf(request, info)`):
// a hook that hands the whole context to a function makes Elysia prepare everything (headers,
// query, cookies) on every route, its inference (sucrose) being unable to tell what is read.
// The listener, which is outside Elysia (app.fetch takes only the Request), hands its part
// (the socket's address, HTTPS) over in a WeakMap keyed by the Request: `beginRequest`.
import { Elysia } from "elysia";
import { requestIdGenerator } from "../ids";
import { clientAddress, type Ranges } from "../limits/client-ip";

interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

const nextRequestId = requestIdGenerator();

export class RequestInfo {
  readonly request_id = nextRequestId();
  /** When the request reached the app; recorded only while requests are logged (access log). */
  started_at = 0;
  /** Set by /mcp once the tool of a tools/call is known, for the logs. */
  tool?: string;
  /** The port the listener is bound to (the real one when CORPUS_PORT=0): a citation's link names it (http/public-url.ts). */
  boundPort?: number;
  /** Set by /mcp once a message's id is read: a JSON-RPC error answering it carries it (a timeout's too). */
  rpcId?: string | number;
  /** Headers for the response that stay the same across many requests (e.g. rate-limit windows). */
  fixedHeaders?: Readonly<Record<string, string>>;
  /** Headers of this response alone (e.g. the remaining counts of a rate limit), errors included. */
  ownHeaders?: Readonly<Record<string, string>>;
  /** The principal the request was authenticated as (set by the guard). */
  verified?: object;
  /** A stored answer to send instead of running the handler (an idempotent replay, D11; set by the guard). */
  replay?: { status: number; body: string };
  /** The status written, for the access log (set by the response writer; 503 once timed out). */
  status?: number;
  /**
   * Answered 503 by the request timeout (D17) while its handler still ran: what the handler
   * would answer is never sent, so it archives nothing and writes no other status to the log.
   */
  timedOut = false;
  /**
   * Refused only after the work a rate limit protects was done (a token revoked while its search
   * ran): the refusal still counts against the limit, where D31 gives back refusals answered
   * before any work.
   */
  refusedAfterWork = false;
  /**
   * A rate limit refused what the request asked though its answer is no 429 (an MCP tool's
   * result, D16): the operator's metrics count it as a refusal all the same (D35).
   */
  rateLimited = false;
  /** Called by the response writer with a JSON body's exact bytes (idempotent requests store them). */
  onJsonWritten?: (status: number, text: string) => void;
  private address?: string;
  private forwarded?: string;
  private overTls?: boolean;
  private failureHandlers?: Array<(status: number) => void>;

  /** `received` is the Request as the socket gave it (the one its peer's address is asked with). */
  constructor(
    private readonly received: Request,
    private readonly peer?: PeerSource | string,
  ) {}

  /** Runs `fn` with the status answered if the request ends in an error (e.g. to give up a claimed resource). */
  onFailure(fn: (status: number) => void): void {
    (this.failureHandlers ??= []).push(fn);
  }

  /** Called once by the error mapper, with the status it answers. */
  failed(status: number): void {
    const handlers = this.failureHandlers;
    this.failureHandlers = undefined;
    for (const fn of handlers ?? []) fn(status);
  }

  /**
   * The client: the socket's address, or, when the socket is a proxy of CORPUS_TRUSTED_PROXIES
   * (`trusted`), the address it forwarded (X-Forwarded-For walked from the right past trusted
   * hops). What the logs and the per-IP limit name; looked up once.
   */
  clientBehind(trusted: Ranges): string {
    if (trusted.size === 0) return this.client_ip;
    return (this.forwarded ??= clientAddress(this.client_ip, this.received.headers.get("x-forwarded-for"), trusted));
  }

  /** Whether the request came over HTTPS: set by the listener, else read from the URL's scheme (in-process). */
  get secure(): boolean {
    return (this.overTls ??= this.received.url.startsWith("https:"));
  }

  set secure(value: boolean) {
    this.overTls = value;
  }

  /** The peer's address as the socket reports it ("unknown" in-process); looked up on first use. */
  get client_ip(): string {
    if (this.address === undefined) {
      const p = this.peer;
      this.address = p === undefined ? "unknown" : typeof p === "string" ? p : (p.requestIP(this.received)?.address ?? "unknown");
    }
    return this.address;
  }
}

// From the listener to the app: the only state kept beside a Request rather than on a context.
const handedOver = new WeakMap<Request, RequestInfo>();

/**
 * Called by the listener (and by tests standing in for it), with the socket's peer, before the
 * app sees `request`; `received` is the Request the socket gave, when `request` wraps it.
 */
export function beginRequest(request: Request, peer?: PeerSource | string, received: Request = request): RequestInfo {
  const info = new RequestInfo(received, peer);
  handedOver.set(request, info);
  return info;
}

/** The info the listener began for `request`, or a new one (a request made in-process). */
export function infoFor(request: Request): RequestInfo {
  return handedOver.get(request) ?? beginRequest(request);
}

/**
 * The request's info: the context's `info`, or, in an app without requestContext (a plugin
 * tested alone), the one kept for the request (the same for every stage of it).
 */
export const infoOf = (request: Request, info: RequestInfo | undefined): RequestInfo => info ?? infoFor(request);

/** Declares `info` on the context of every request and sets it first, before any other stage. */
export const requestContext = new Elysia({ name: "corpus/request-context" })
  .decorate("info", undefined as RequestInfo | undefined)
  .onRequest((context) => {
    context.info = infoFor(context.request);
  });

/** Methods whose requests carry no body. */
export const isBodiless = (method: string) => method === "GET" || method === "HEAD" || method === "OPTIONS";
