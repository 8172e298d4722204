// Where a citation's page /d/<id> opens (D36). CORPUS_OAUTH_RESOURCE_URL, when set, is the one
// truth (D4). Without it the configured address may not open at all: CORPUS_PORT=0 means "a free
// port", and a wildcard CORPUS_HOST (0.0.0.0, ::) is no address a browser can go to. So the link
// is built from the address actually bound (the listener's real port), and, for a wildcard host,
// from the origin the request reached (its Host header, as the connector panel does). That Host
// only ever becomes a link's text: tokens, redirects and the OAuth metadata keep resourceUrl.
import { type Config, isWildcardHost as isWildcard, urlHost } from "../config";
import { hostNameOf } from "./host-check";
import type { RequestInfo } from "./request-context";

/**
 * The Host a request reached, lower case, when it is a host[:port] that names an address a
 * browser can open (no wildcard, no port 0); undefined otherwise. The host-check stage has
 * already refused names that are not this server's.
 */
export function reachedHost(request: Request): string | undefined {
  const header = (request.headers.get("host") ?? new URL(request.url).host).toLowerCase();
  const name = hostNameOf(header);
  if (name === undefined || isWildcard(name)) return undefined;
  const port = header.slice(name.length);
  if (port !== "" && !(Number(port.slice(1)) >= 1 && Number(port.slice(1)) <= 65535)) return undefined;
  return header;
}

/** The base of this server's own links for `request`: a citation's url is `${publicUrlOf(...)}/d/<id>`. */
export function publicUrlOf(config: Config, request: Request, info: RequestInfo): string {
  if (config.CORPUS_OAUTH_RESOURCE_URL) return config.resourceUrl;
  const scheme = config.CORPUS_TLS_CERT_FILE ? "https" : "http";
  const port = info.boundPort ?? config.CORPUS_PORT;
  if (!isWildcard(config.CORPUS_HOST)) return `${scheme}://${urlHost(config.CORPUS_HOST)}:${port}`;
  // A request without a usable Host (HTTP/1.0) reached this machine: its loopback opens the page there.
  const reached = reachedHost(request) ?? `${config.CORPUS_HOST.includes(":") ? "[::1]" : "127.0.0.1"}:${port}`;
  return `${scheme}://${reached}`;
}
