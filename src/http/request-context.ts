// Who asked and under which id: a request id (a safe incoming X-Request-Id is kept) and the
// client address. Kept per Request object, so that every later stage, error and log line
// (404s and parse errors included) sees the same values.
import { Elysia } from "elysia";

export interface RequestInfo {
  request_id: string;
  client_ip: string;
  started_at: number;
  /** Set by /mcp once the tool of a tools/call is known, for the logs. */
  tool?: string;
}

const socketAddress = new WeakMap<Request, string>();
const infos = new WeakMap<Request, RequestInfo>();

/** Called by the server with the peer address before the app sees the request. */
export function rememberSocketAddress(request: Request, address: string | undefined): void {
  if (address) socketAddress.set(request, address);
}

const SAFE_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export function requestInfo(request: Request): RequestInfo {
  let info = infos.get(request);
  if (!info) {
    const incoming = request.headers.get("x-request-id");
    info = {
      request_id: incoming && SAFE_ID.test(incoming) ? incoming : `req_${crypto.randomUUID().replaceAll("-", "")}`,
      client_ip: socketAddress.get(request) ?? "unknown",
      started_at: performance.now(),
    };
    infos.set(request, info);
  }
  return info;
}

export const requestContext = new Elysia({ name: "corpus/request-context" })
  .onRequest(({ request, set }) => {
    set.headers["x-request-id"] = requestInfo(request).request_id;
  })
  .resolve({ as: "global" }, ({ request }) => ({ ...requestInfo(request) }));
