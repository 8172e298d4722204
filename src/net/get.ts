// An HTTP(S) GET (or a POST whose answer is read) to an address that was already checked (the
// pinning of post.ts), reading at most `maxBytes` of the answer: how the authorization server
// fetches a client's metadata document (D27), and connectors redeem OAuth grants (issue 38),
// without being turned against the internal network. Redirects are not followed.
import http from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import type { Pinned } from "./pin";
import { PostTimeout } from "./post";

export interface GetOptions {
  timeoutMs: number;
  maxBytes: number;
  headers?: Record<string, string>;
  /** Extra trusted CA certificates (tests with their own certificate). */
  ca?: string;
}

export class BodyTooLarge extends Error {}

export interface PinnedAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** GETs `url` at `pinned`; resolves with the status code, content type and body text. */
export function getPinned(url: URL, pinned: Pinned, options: GetOptions): Promise<PinnedAnswer> {
  return requestPinned(url, pinned, options);
}

/** POSTs `body` to `url` at `pinned` and reads the answer as getPinned does. */
export function postPinnedForAnswer(url: URL, pinned: Pinned, options: GetOptions & { body: string }): Promise<PinnedAnswer> {
  return requestPinned(url, pinned, options);
}

function requestPinned(url: URL, pinned: Pinned, options: GetOptions & { body?: string }): Promise<PinnedAnswer> {
  const lookup: LookupFunction = (_host, opts, callback) => {
    const cb = callback as (e: Error | null, a: string | Array<{ address: string; family: number }>, f?: number) => void;
    if ((opts as { all?: boolean }).all) cb(null, [{ address: pinned.address, family: pinned.family }]);
    else cb(null, pinned.address, pinned.family);
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      {
        host: pinned.name ?? pinned.address,
        port: url.port || (url.protocol === "https:" ? 443 : 80),
        path: `${url.pathname}${url.search}`,
        method: options.body === undefined ? "GET" : "POST",
        headers: {
          accept: "application/json",
          ...options.headers,
          host: url.host,
          ...(options.body === undefined ? {} : { "content-length": String(Buffer.byteLength(options.body)) }),
        },
        lookup,
        agent: false,
        ...(options.ca ? { ca: options.ca } : {}),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > options.maxBytes) {
            request.destroy(new BodyTooLarge(`the answer is larger than ${options.maxBytes} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => {
          clearTimeout(timer);
          resolve({
            status: response.statusCode ?? 0,
            contentType: String(response.headers["content-type"] ?? ""),
            body: Buffer.concat(chunks).toString("utf8"),
          });
        });
        response.on("error", (error) => {
          clearTimeout(timer);
          reject(error);
        });
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
