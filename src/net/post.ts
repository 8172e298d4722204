// An HTTP(S) POST to an address that was already checked (issue 13 item 5). The request is
// sent to `pinned.address` whatever the name resolves to now: the name is looked up by nobody
// here (the lookup hook answers the pinned address), and still goes out as Host header and TLS
// server name, so certificates are verified against it. Redirects are not followed (a 3xx is
// an answer like any other), no connection is reused, and the answer's body is not read.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Pinned } from "./pin";

export class PostTimeout extends Error {
  override name = "TimeoutError";
}

export interface PostOptions {
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Extra trusted CA certificates (tests with their own certificate). */
  ca?: string;
}

/** POSTs `body` to `url` at `pinned`; resolves with the status code. */
export function postPinned(url: URL, pinned: Pinned, options: PostOptions): Promise<number> {
  const lookup: LookupFunction = (_host, opts, callback) => {
    const cb = callback as (e: Error | null, a: string | Array<{ address: string; family: number }>, f?: number) => void;
    if ((opts as { all?: boolean }).all) cb(null, [{ address: pinned.address, family: pinned.family }]);
    else cb(null, pinned.address, pinned.family);
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise<number>((resolve, reject) => {
    const request = client.request(
      {
        // The name when there is one (its lookup is the hook), else the checked address itself.
        host: pinned.name ?? pinned.address,
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: "POST",
        headers: { ...options.headers, host: url.host, "content-length": String(Buffer.byteLength(options.body)) },
        lookup,
        agent: false,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (response) => {
        clearTimeout(timer);
        resolve(response.statusCode ?? 0);
        response.destroy();
      },
    );
    const timer = setTimeout(() => request.destroy(new PostTimeout(`no answer within ${options.timeoutMs / 1000} s`)), options.timeoutMs);
    request.on("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.end(options.body);
  });
}
