// A postgres:// URL read by corpus itself (D26; issue 13 item 6), so that the connection is
// made of what the connector's config says and nothing else: one host, its port, the user,
// the password (possibly empty) and the database. The driver is never handed the URL: it would
// fill a missing user or password from the server's PGUSER/PGPASSWORD and let query
// parameters (?options=, ?host=, ?target_session_attrs=, ?sslmode=disable …) change the
// connection's settings. Only `sslmode` may be given, and only as below.
import { HostInvalid, normalizeHost } from "../../net/pin";

export const SSL_MODES = ["disable", "require", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

export interface PostgresTarget {
  /** Normalized host name or address (never a socket path, never several hosts). */
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
  /** disable (the default), require (TLS, certificate not checked) or verify-full (checked against the host). */
  sslmode: SslMode;
}

/** The URL is malformed or asks for something not allowed; the message names what. */
export class PostgresUrlError extends Error {}

const PREFIX = "config.url: ";

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new PostgresUrlError(`${PREFIX}the ${what} is not valid percent-encoding`);
  }
}

export function parsePostgresUrl(text: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new PostgresUrlError(`${PREFIX}not a valid URL (postgres://user:password@host:port/database)`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:")
    throw new PostgresUrlError(`${PREFIX}must start with postgres:// or postgresql://`);
  if (url.hash) throw new PostgresUrlError(`${PREFIX}must not have a #fragment`);
  // "h1,h2" (several hosts) and "%2Fvar%2Frun" (a socket path) are both refused here.
  let host: string;
  try {
    if (!url.hostname || url.hostname.includes("%")) throw new HostInvalid("");
    host = normalizeHost(url.hostname);
  } catch {
    throw new PostgresUrlError(`${PREFIX}the host must be one host name or IP address`);
  }
  const user = decode(url.username, "user name");
  if (!user) throw new PostgresUrlError(`${PREFIX}must name the user (postgres://user:password@host/database)`);
  const path = decode(url.pathname.replace(/^\//, ""), "database name");
  if (path.includes("/")) throw new PostgresUrlError(`${PREFIX}the path must be just the database name`);
  let sslmode: SslMode = "disable";
  for (const [name, value] of url.searchParams) {
    if (name !== "sslmode") {
      throw new PostgresUrlError(
        `${PREFIX}the parameter ${JSON.stringify(name.slice(0, 64))} is not allowed; only sslmode (${SSL_MODES.join(", ")}) may be given`,
      );
    }
    if (!SSL_MODES.includes(value as SslMode)) throw new PostgresUrlError(`${PREFIX}sslmode must be one of ${SSL_MODES.join(", ")}`);
    sslmode = value as SslMode;
  }
  return {
    host,
    port: url.port ? Number(url.port) : 5432,
    user,
    password: decode(url.password, "password"),
    // What PostgreSQL itself assumes when none is named: the user's own database.
    database: path || user,
    sslmode,
  };
}
