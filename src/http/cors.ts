// CORS only for the origins in CORPUS_CORS_ALLOW_ORIGINS_CSV; with none configured, no
// Access-Control-* header is ever sent and no origin is reflected.
import { cors as elysiaCors } from "@elysiajs/cors";
import { Elysia } from "elysia";
import { infoOf, requestContext } from "./request-context";
import { securityHeaders } from "./response";

// The specification's GET, POST, OPTIONS, and DELETE: the REST control plane removes
// connectors and webhooks with it, and the connector widget calls it from the assistant.
export const CORS_METHODS = ["GET", "POST", "PATCH", "DELETE", "OPTIONS"];

/**
 * What a browser client may send beyond the safelisted headers: the specification's two, the
 * REST replay key (D11), and what MCP over Streamable HTTP sends (the session, the revision,
 * the 2026-07-28 method and name headers, and Last-Event-ID to resume a stream).
 */
export const CORS_HEADERS = [
  "Content-Type",
  "Authorization",
  "Idempotency-Key",
  "Mcp-Session-Id",
  "MCP-Protocol-Version",
  "Mcp-Method",
  "Mcp-Name",
  "Last-Event-ID",
];

/**
 * What a browser client may read of a response beyond the safelisted headers: the limits
 * (D16: the REST per-minute and per-day ones and the /mcp bucket's), Retry-After, the MCP
 * session, the request id of an error, a replayed answer's mark, and WWW-Authenticate (where
 * an MCP client finds the protected-resource metadata). A fixed list: never the names of the
 * request's own headers, which the plugin echoes by default.
 */
export const CORS_EXPOSED_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-RateLimit-Limit-Minute",
  "X-RateLimit-Remaining-Minute",
  "X-RateLimit-Reset-Minute",
  "X-RateLimit-Limit-Day",
  "X-RateLimit-Remaining-Day",
  "X-RateLimit-Reset-Day",
  "Retry-After",
  "Mcp-Session-Id",
  "X-Request-Id",
  "Idempotent-Replayed",
  "WWW-Authenticate",
];

export function cors(origins: string[]) {
  if (origins.length === 0) return new Elysia({ name: "corpus/cors-off" });
  return (
    new Elysia({ name: "corpus/cors" })
      // The plugin answers a preflight from its request hook, a Response that no later stage
      // (the response writer) sees: the security headers go into `set` first, which that
      // Response is given with the plugin's own.
      .use(requestContext)
      .onRequest(({ request, set, info: scoped }) => {
        if (request.method !== "OPTIONS") return;
        const info = infoOf(request, scoped);
        Object.assign(set.headers, securityHeaders(info.secure), { "x-request-id": info.request_id });
      })
      .use(
        elysiaCors({
          origin: origins,
          methods: CORS_METHODS,
          allowedHeaders: CORS_HEADERS,
          exposeHeaders: CORS_EXPOSED_HEADERS,
          credentials: false,
          preflight: true,
        }),
      )
  );
}
