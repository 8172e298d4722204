// Which redirect URIs a client may register, and when a request's matches (OAuth 2.1 section
// 2.3, RFC 8252).

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why a redirect URI may not be registered, or undefined. */
export function redirectUriProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return `${JSON.stringify(text)} is not an absolute URI`;
  }
  if (url.hash || text.includes("#")) return `${text} has a fragment`;
  if (url.protocol === "https:") return undefined;
  if (url.protocol === "http:")
    return LOOPBACK.has(url.hostname) ? undefined : `${text}: http is allowed only for loopback redirects (127.0.0.1, [::1], localhost)`;
  // A native app's private-use scheme (RFC 8252 section 7.1): never one a browser runs itself.
  if (["javascript:", "data:", "file:", "blob:", "vbscript:", "about:", "ftp:", "ws:", "wss:"].includes(url.protocol))
    return `${text}: scheme ${url.protocol} is not allowed`;
  return undefined;
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
