// An HTTP(S) GET to an address that was already checked (the pinning of post.ts), reading at
// most `maxBytes` of the answer: how the authorization server fetches a client's metadata
// document (D27) without being turned against the internal network. Redirects are not followed.
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

/** GETs `url` at `pinned`; resolves with the status code, content type and body text. */
export function getPinned(url: URL, pinned: Pinned, options: GetOptions): Promise<{ status: number; contentType: string; body: string }> {
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
        method: "GET",
        headers: { accept: "application/json", ...options.headers, host: url.host },
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
    request.end();
  });
}
