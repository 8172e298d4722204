// Who asked and under which id: a request id generated here (an incoming X-Request-Id is
// not trusted: ids in our logs are ours) and the client address. Kept on the Request object,
// so that every later stage, error and log line (404s and parse errors included) sees the
// same values; the response writer (./response.ts) puts the id on error responses.
import { clientAddress, type Ranges } from "../limits/client-ip";

interface PeerSource {
  requestIP(request: Request): { address: string } | null;
}

// Unique without a random draw per request: a random prefix per process and a counter.
const ID_PREFIX = `req_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
let counter = 0;

export class RequestInfo {
  private readonly serial = counter++;
  private id?: string;
  /** When the request reached the app; recorded only while requests are logged (access log). */
  started_at = 0;
  /** Set by /mcp once the tool of a tools/call is known, for the logs. */
  tool?: string;
  /** Set by /mcp once a message's id is read: a JSON-RPC error answering it carries it (a timeout's too). */
  rpcId?: string | number;
  /** Headers for the response that stay the same across many requests (e.g. rate-limit windows). */
  fixedHeaders?: Readonly<Record<string, string>>;
  /** Headers of this response alone (e.g. the remaining counts of a rate limit), errors included. */
  ownHeaders?: Readonly<Record<string, string>>;
  /** The principal the request was authenticated as (set by the guard; a pass run again reuses it). */
  verified?: object;
  /** Whether the access log has written this request's line (a request run again is logged once). */
  logged = false;
  /** The status written, for the access log (set by the response writer). */
  status?: number;
  /** Called by the response writer with a JSON body's exact bytes (idempotent requests store them). */
  onJsonWritten?: (status: number, text: string) => void;
  private address?: string;
  private forwarded?: string;
  private overTls?: boolean;
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

  /** Written out on first use: most successful requests never need it (it is in logs and errors). */
  get request_id(): string {
    return (this.id ??= `${ID_PREFIX}${this.serial.toString(16).padStart(8, "0")}`);
  }

  /**
   * The client: the socket's address, or, when the socket is a proxy of CORPUS_TRUSTED_PROXIES
   * (`trusted`), the address it forwarded (X-Forwarded-For walked from the right past trusted
   * hops). What the logs and the per-IP limit name; looked up once.
   */
  clientBehind(trusted: Ranges): string {
    if (trusted.size === 0) return this.client_ip;
    return (this.forwarded ??= clientAddress(this.client_ip, this.request.headers.get("x-forwarded-for"), trusted));
  }

  /** Whether the request came over HTTPS: set by the listener, else read from the URL's scheme (in-process). */
  get secure(): boolean {
    return (this.overTls ??= this.request.url.startsWith("https:"));
  }

  set secure(value: boolean) {
    this.overTls = value;
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

// A property under a private symbol: a tenth of the cost of a WeakMap entry per request.
const INFO = Symbol("corpus.requestInfo");
type WithInfo = Request & { [INFO]?: RequestInfo };

/** Called by the server, with the socket's peer, before the app sees the request. */
export function beginRequest(request: Request, peer?: PeerSource | string): RequestInfo {
  const info = new RequestInfo(request, peer);
  (request as WithInfo)[INFO] = info;
  return info;
}

export function requestInfo(request: Request): RequestInfo {
  return (request as WithInfo)[INFO] ?? beginRequest(request);
}

/** `to` stands for `from` from now on (e.g. with its body wrapped): same id, address, handlers. */
export function carryRequestInfo(from: Request, to: Request): void {
  (to as WithInfo)[INFO] = requestInfo(from);
}

/** Methods whose requests carry no body. */
export const isBodiless = (method: string) => method === "GET" || method === "HEAD" || method === "OPTIONS";
