// Host and Origin on every route (issue 13 item 9: DNS rebinding). A page on attacker.example
// whose name is made to resolve to this server sends `Host: attacker.example` and a matching
// `Origin`: comparing the two proves nothing, since the page controls both. So the Host must
// name this server (loopback, the host of CORPUS_OAUTH_RESOURCE_URL, of a configured CORS
// origin, or one of CORPUS_ALLOWED_HOSTS), and an Origin, when sent, must be this server's own
// or a configured CORS origin. Anything else is 403 before any other stage runs.
import { Elysia } from "elysia";
import type { Config } from "../config";
import { HttpError } from "./errors";

/** Names of the loopback interface, always allowed: a local assistant reaches corpus by them. */
export const LOOPBACK_HOSTS = ["localhost", "127.0.0.1", "[::1]"] as const;

export const HOST_REFUSED = "Forbidden: the Host header does not name this server (see CORPUS_ALLOWED_HOSTS)";
export const ORIGIN_REFUSED = "Forbidden: requests from this Origin are not allowed (see CORPUS_CORS_ALLOW_ORIGINS_CSV)";

// A host name or IPv4 address, or an IPv6 address in brackets, and an optional port: nothing
// else (no user info, no path) can pass for a host.
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?)(?::\d{1,5})?$/;

/** The host names (lower case, IPv6 in brackets) under which this server may be reached. */
export function allowedHostNames(config: Config): Set<string> {
  const hosts = new Set<string>(LOOPBACK_HOSTS);
  hosts.add(new URL(config.resourceUrl).hostname);
  for (const origin of config.corsOrigins) hosts.add(new URL(origin).hostname);
  for (const host of config.allowedHosts) hosts.add(host);
  return hosts;
}

/** The host name of a Host header value (lower case), or undefined when it is not one. */
export function hostNameOf(header: string): string | undefined {
  const m = HOST_HEADER.exec(header.toLowerCase());
  return m ? m[1] : undefined;
}

/**
 * An HTTP/1.0 request may leave out Host; the listener then gives it a URL of the path alone
 * ("/x"), which nothing after it can parse (every route answered 500). A browser always sends
 * Host, so such a request is no rebinding page's: it is addressed to this server, under the
 * origin of CORPUS_OAUTH_RESOURCE_URL. Any other request is returned as it is.
 */
export function withDefaultHost(request: Request, resourceUrl: string): Request {
  const url = request.url;
  if (url.charCodeAt(0) !== 0x2f) return request;
  const hosted = new Request(new URL(url, resourceUrl).href, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: request.signal,
    // @ts-expect-error: Bun and the fetch standard need it for a streamed body
    duplex: "half",
  });
  return hosted;
}

export function hostCheck(config: Config) {
  const hosts = allowedHostNames(config);
  const origins = new Set([...config.corsOrigins, new URL(config.resourceUrl).origin]);
  return new Elysia({ name: "corpus/host-check", seed: [...hosts, ...origins].join(",") }).onRequest(({ request }) => {
    // The listener writes the Host header into the URL; in-process requests may carry only the URL.
    const host = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
    const name = hostNameOf(host);
    if (name === undefined || !hosts.has(name)) throw new HttpError(403, HOST_REFUSED);
    const origin = request.headers.get("origin");
    if (origin === null || origins.has(origin)) return;
    // The server's own pages (the API docs) call it from its own origin, under an allowed Host.
    if (origin.toLowerCase() !== `http://${host}` && origin.toLowerCase() !== `https://${host}`) throw new HttpError(403, ORIGIN_REFUSED);
  });
}
