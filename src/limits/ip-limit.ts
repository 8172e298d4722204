// The per-IP limit of /mcp (second document parts 7, 8): a token bucket per client address,
// with X-RateLimit-Limit, -Remaining, -Reset on every response of the route and, when it
// is exhausted, 429 { error: "Rate limit exceeded", retry_after } with Retry-After.
import { Elysia } from "elysia";
import { HttpError } from "../http/errors";
import { requestInfo } from "../http/request-context";
import { clientAddress, parseRanges } from "./client-ip";
import type { TokenBuckets } from "./token-bucket";

export const RATE_LIMIT_MESSAGE = "Rate limit exceeded";

export const ipLimit = (buckets: TokenBuckets, trustedProxiesCsv: string) => {
  const trusted = parseRanges(trustedProxiesCsv);
  return new Elysia({ name: "corpus/ip-limit" }).macro({
    ipLimit: {
      transform({ request, set }) {
        const ip = clientAddress(requestInfo(request).client_ip, trusted.length ? request.headers.get("x-forwarded-for") : null, trusted);
        const d = buckets.take(ip);
        set.headers["x-ratelimit-limit"] = String(d.limit);
        set.headers["x-ratelimit-remaining"] = String(d.remaining);
        set.headers["x-ratelimit-reset"] = String(d.reset);
        if (!d.allowed) {
          throw new HttpError(429, RATE_LIMIT_MESSAGE, { "retry-after": String(d.retryAfter) }, { error: RATE_LIMIT_MESSAGE, retry_after: d.retryAfter });
        }
      },
    },
  });
};
