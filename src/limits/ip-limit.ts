// The per-IP limit of /mcp (second document parts 7, 8): a token bucket per client address,
// with X-RateLimit-Limit, -Remaining, -Reset on every response of the route and, when it
// is exhausted, 429 { error: "Rate limit exceeded", retry_after } with Retry-After. A request
// costs one token per JSON-RPC message (issue 13 item 10): the route charges a batch the rest.
import { Elysia } from "elysia";
import { HttpError } from "../http/errors";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { limitKey, parseRanges, type Ranges } from "./client-ip";
import type { IpBuckets } from "./token-bucket";

export const RATE_LIMIT_MESSAGE = "Rate limit exceeded";

/**
 * Takes `count` tokens from the client's bucket and writes the three headers; 429 as soon as
 * one is refused (the tokens taken before stay spent: a batch that does not fit is not free).
 */
export async function chargeIp(
  buckets: IpBuckets,
  trusted: Ranges,
  info: RequestInfo,
  headers: Record<string, string | number>,
  count = 1,
): Promise<void> {
  const ip = limitKey(info.clientBehind(trusted));
  let d = await buckets.take(ip);
  for (let i = 1; i < count && d.allowed; i++) d = await buckets.take(ip);
  const own = { "x-ratelimit-limit": String(d.limit), "x-ratelimit-remaining": String(d.remaining), "x-ratelimit-reset": String(d.reset) };
  Object.assign(headers, own);
  // Kept on the request too: an answer written outside the route (the 503 timeout) carries them.
  info.ownHeaders = own;
  if (!d.allowed) {
    throw new HttpError(
      429,
      RATE_LIMIT_MESSAGE,
      { "retry-after": String(d.retryAfter) },
      { error: RATE_LIMIT_MESSAGE, retry_after: d.retryAfter },
    );
  }
}

export const ipLimit = (buckets: IpBuckets, trustedProxiesCsv: string) => {
  const trusted = parseRanges(trustedProxiesCsv);
  return new Elysia({ name: "corpus/ip-limit" }).use(requestContext).macro({
    ipLimit: {
      async transform({ request, info, set }) {
        await chargeIp(buckets, trusted, infoOf(request, info), set.headers);
      },
    },
  });
};
