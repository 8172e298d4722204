// Which redirect URIs a client may register, and when a request's matches (OAuth 2.1 section
// 2.3, RFC 8252). An allow-list (issue 35): `https` anywhere, `http` on loopback only (section
// 7.3), and a native app's private-use scheme in reverse-DNS form (section 7.1, such as
// `com.example.app:/callback`); never a fragment. Everything else (`view-source:`, `jar:`,
// `mailto:`, `javascript:`, `data:`, `file:`, a bare `myapp:`) is refused.

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);
/** A reverse domain name: two labels at least, the form RFC 8252 section 7.1 requires of a private-use scheme. */
const REVERSE_DNS_SCHEME = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+:$/;

/** Why a redirect URI may not be registered, or undefined. */
export function redirectUriProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not an absolute URI`;
  }
  if (url.hash || text.includes("#")) return `${text} has a fragment`;
  if (url.username || url.password) return `${text} carries credentials`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return LOOPBACK.has(url.hostname) ? undefined : `${text}: http is allowed only for loopback redirects (127.0.0.1, [::1], localhost)`;
  if (REVERSE_DNS_SCHEME.test(url.protocol)) return undefined;
  return `${text}: scheme ${url.protocol} is not allowed (https, loopback http, or an app's own scheme in reverse-DNS form such as com.example.app:)`;
}

/** Exact match; a loopback http redirect matches on any port (RFC 8252 section 7.3). */
export function redirectMatches(registered: string[], asked: string): boolean {
  if (registered.includes(asked)) return true;
  let a: URL;
  try {
    a = new URL(asked);
  } catch {
    return false;
  }
  if (a.protocol !== "http:" || !LOOPBACK.has(a.hostname)) return false;
  return registered.some((r) => {
    const u = new URL(r);
    if (u.protocol !== "http:" || u.hostname !== a.hostname) return false;
    u.port = a.port;
    return u.href === a.href;
  });
}

/**
 * Where a redirect URI sends the person, as the consent page names it: a web site by its host
 * (`https`, loopback `http`), else the app that claims its private-use scheme. Such a URI's
 * "host" is whatever the app wrote (`com.evil.app://accounts.google.com/cb`): never shown.
 */
export function redirectDestination(uri: string): { site: string } | { appScheme: string } {
  const url = new URL(uri);
  if (url.protocol === "https:" || url.protocol === "http:") return { site: url.host };
  return { appScheme: url.protocol };
}
