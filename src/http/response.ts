// Every response leaves through here: the security headers of the second document (part 4;
// Strict-Transport-Security only on responses sent over HTTPS, the only ones it may be on),
// the headers that earlier stages put in `set.headers`, the body, and the request id.
//
// The request id is in every log line, and every response carries it (X-Request-Id): an
// operator finds the line of any response, a success as much as an error.
//
// Why a writer of our own rather than Elysia's default headers: Bun turns a plain header object
// into a Headers list at ~150 ns a header, on every response; a prepared Headers list is copied
// at a fraction of that. JSON values (the answers of every REST route) are written
// here; anything else (a Response, a stream, a file) is left to Elysia with the same headers.
import { Elysia } from "elysia";
import { infoOf, type RequestInfo, requestContext } from "./request-context";

export const SECURITY_HEADERS = {
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "x-xss-protection": "1; mode=block",
} as const;

/**
 * HSTS (RFC 6797) on responses served over HTTPS only: a browser ignores it over plain HTTP
 * (section 8.1), and on a server reached by plain HTTP it would promise HTTPS where there is none.
 * Behind a reverse proxy that terminates TLS, the proxy sends it (see the README).
 */
export const HSTS_HEADER = { "strict-transport-security": "max-age=31536000; includeSubDomains" } as const;

/** The security headers of a response over HTTPS (`secure`) or plain HTTP. */
export const securityHeaders = (secure: boolean): Readonly<Record<string, string>> => (secure ? SECURE_HEADERS : SECURITY_HEADERS);
const SECURE_HEADERS = Object.freeze({ ...SECURITY_HEADERS, ...HSTS_HEADER });

export const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

const JSON_BASE = new Headers({ ...SECURITY_HEADERS, "content-type": JSON_CONTENT_TYPE });
const JSON_BASE_TLS = new Headers({ ...SECURE_HEADERS, "content-type": JSON_CONTENT_TYPE });

// Bodies that never change (GET /, metadata documents) are serialised once.
const serialised = new WeakMap<object, string>();

/** Marks a value that is never mutated, so that its JSON is computed once. */
export function constantBody<T extends object>(value: T): T {
  serialised.set(Object.freeze(value), JSON.stringify(value));
  return value;
}

const serialise = (value: unknown): string =>
  (typeof value === "object" && value !== null && serialised.get(value)) || JSON.stringify(value);

// Headers shared by many responses (a rate-limit window's limits and resets) are prepared once
// with the base list; each response starts from a copy of it.
const prepared = new WeakMap<object, Headers>();
const preparedTls = new WeakMap<object, Headers>();

function baseWith(fixed: Readonly<Record<string, string>> | undefined, secure: boolean): Headers {
  const base = secure ? JSON_BASE_TLS : JSON_BASE;
  if (!fixed) return base;
  const cache = secure ? preparedTls : prepared;
  let list = cache.get(fixed);
  if (!list) {
    list = new Headers(base);
    for (const name in fixed) list.set(name, fixed[name]!);
    cache.set(fixed, list);
  }
  return list;
}

/**
 * A JSON response with the security headers, `headers` and the request id; given the
 * request's info, with the headers earlier stages kept there (rate limits) too.
 */
export function jsonResponse(value: unknown, status: number, from: RequestInfo | string, headers?: Record<string, string>): Response {
  return written(serialise(value), status, from, headers);
}

// The Response copies the list it is given, so the prepared list is handed over as it is and
// what is the response's own is set on that copy (a copy of our own first cost ~35 ns a header).
// `from` is the request's info (its shared and own headers, its id, its scheme) or just a
// request id (then no HSTS: the scheme is unknown).
function written(text: string, status: number, from: RequestInfo | string, headers?: Record<string, string>): Response {
  const info = typeof from === "string" ? undefined : from;
  const response = new Response(text, { status, headers: baseWith(info?.fixedHeaders, info?.secure ?? false) });
  const list = response.headers;
  list.set("x-request-id", info ? info.request_id : (from as string));
  const own = info?.ownHeaders;
  for (const name in own) list.set(name, own[name]!);
  for (const name in headers) list.set(name, headers[name]!);
  return response;
}

/**
 * A stored answer sent again (an idempotent replay, D11): a finished Response, so that the
 * route's response schema does not judge the stored text as if it were a new value.
 */
export function replayResponse(info: RequestInfo, status: number, text: string): Response {
  return written(text, status, info, { "idempotent-replayed": "true" });
}

interface SetLike {
  headers: Record<string, string | number>;
  status?: number | string;
}

const isJsonValue = (v: unknown) => {
  if (typeof v !== "object" || v === null) return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === Array.prototype || proto === null;
};

/**
 * The last stage of every route and error (Elysia's mapResponse, global). A JSON value becomes
 * the Response here, and `set` is emptied so that Elysia passes it through untouched; other
 * values get the same headers through `set.headers` and are mapped by Elysia.
 */
export function writeResponse({
  request,
  info: scoped,
  responseValue,
  set,
}: {
  request: Request;
  info: RequestInfo | undefined;
  responseValue: unknown;
  set: SetLike;
}): Response | undefined {
  const info = infoOf(request, scoped);
  const setStatus = set.status === undefined ? 200 : set.status;
  // A Response a route made (a page, a redirect) is sent with its own status, set.status only
  // over a 200 (Elysia's mergeStatus): the access log and the metrics (D35) say what was sent.
  const status = responseValue instanceof Response && responseValue.status !== 200 ? responseValue.status : setStatus;
  if (typeof status === "number" && !info.timedOut) info.status = status;
  if (typeof status === "number" && isJsonValue(responseValue)) {
    const text = serialise(responseValue);
    info.onJsonWritten?.(status, text);
    const response = written(text, status, info, set.headers as Record<string, string>);
    for (const _ in set.headers) {
      set.headers = Object.create(null);
      break;
    }
    set.status = 200;
    return response;
  }
  Object.assign(set.headers, securityHeaders(info.secure), info.fixedHeaders, info.ownHeaders);
  set.headers["x-request-id"] = info.request_id;
  return undefined;
}

export const responseWriter = new Elysia({ name: "corpus/response" })
  .use(requestContext)
  .mapResponse({ as: "global" }, writeResponse as never);
