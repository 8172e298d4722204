// A database server's URL (postgres://, mysql://, mariadb://) read by corpus itself (D26; issue
// 13 item 6), so that the connection is made of what the connector's config says and nothing
// else: one host, its port, the user, the password (possibly empty) and the database. No driver
// is ever handed the URL: it would fill a missing user, password or database from the server's
// environment (PGUSER, PGPASSWORD, MYSQL_DATABASE, DATABASE_URL …) and let query parameters
// (?options=, ?host=, ?socket=, ?sslmode=disable …) change the connection's settings. Only
// `sslmode` may be given, and only as below. Anything else with a scheme is named as such:
// `mysql://` was once taken for a SQLite path and refused as a relative one.
import { HostInvalid, normalizeHost } from "../../net/pin";

export const SSL_MODES = ["disable", "require", "verify-full"] as const;
export type SslMode = (typeof SSL_MODES)[number];

/** The servers' protocols: what a scheme speaks and the port it is on unless the URL says. */
const SCHEMES = {
  postgres: { engine: "postgres", port: 5432 },
  postgresql: { engine: "postgres", port: 5432 },
  mysql: { engine: "mysql", port: 3306 },
  mariadb: { engine: "mysql", port: 3306 },
} as const;
export type Engine = (typeof SCHEMES)[keyof typeof SCHEMES]["engine"];

const SCHEME_LIST = Object.keys(SCHEMES)
  .map((s) => `${s}://`)
  .join(", ");

export interface ServerTarget {
  engine: Engine;
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
export class ServerUrlError extends Error {}

const PREFIX = "config.url: ";

/** A `scheme://` at the start: a URL, never a SQLite path. */
const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

/** A URL of any scheme, known or not (its password is masked wherever it is shown). */
export const hasScheme = (url: string) => SCHEME.test(url);

/**
 * The engine of a database server's URL; undefined for a SQLite file path. Throws, naming it,
 * for a scheme that is neither.
 */
export function serverEngine(url: string): Engine | undefined {
  const scheme = SCHEME.exec(url)?.[1]?.toLowerCase();
  if (scheme === undefined) return undefined;
  if (Object.hasOwn(SCHEMES, scheme)) return SCHEMES[scheme as keyof typeof SCHEMES].engine;
  throw new ServerUrlError(
    `${PREFIX}the scheme ${JSON.stringify(`${scheme.slice(0, 32)}://`)} is not supported: give a SQLite file path or a ${SCHEME_LIST} URL`,
  );
}

/** A database server's URL, not a SQLite path (an unknown scheme is neither: false). */
export const isServerUrl = (url: string) => {
  try {
    return serverEngine(url) !== undefined;
  } catch {
    return false;
  }
};

function decode(part: string, what: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new ServerUrlError(`${PREFIX}the ${what} is not valid percent-encoding`);
  }
}

export function parseServerUrl(text: string): ServerTarget {
  const engine = serverEngine(text);
  const example = engine === "mysql" ? "mysql://user:password@host:3306/database" : "postgres://user:password@host:5432/database";
  let url: URL;
  try {
    if (!engine) throw new TypeError();
    url = new URL(text);
  } catch {
    throw new ServerUrlError(`${PREFIX}not a valid URL (${example})`);
  }
  if (url.hash) throw new ServerUrlError(`${PREFIX}must not have a #fragment`);
  // "h1,h2" (several hosts) and "%2Fvar%2Frun" (a socket path) are both refused here.
  let host: string;
  try {
    if (!url.hostname || url.hostname.includes("%")) throw new HostInvalid("");
    host = normalizeHost(url.hostname);
  } catch {
    throw new ServerUrlError(`${PREFIX}the host must be one host name or IP address`);
  }
  const user = decode(url.username, "user name");
  if (!user) throw new ServerUrlError(`${PREFIX}must name the user (${example})`);
  const path = decode(url.pathname.replace(/^\//, ""), "database name");
  if (path.includes("/")) throw new ServerUrlError(`${PREFIX}the path must be just the database name`);
  // MySQL and MariaDB select no database unless told: the tables' names would mean nothing.
  if (!path && engine === "mysql") throw new ServerUrlError(`${PREFIX}must name the database (${example})`);
  let sslmode: SslMode = "disable";
  for (const [name, value] of url.searchParams) {
    if (name !== "sslmode") {
      throw new ServerUrlError(
        `${PREFIX}the parameter ${JSON.stringify(name.slice(0, 64))} is not allowed; only sslmode (${SSL_MODES.join(", ")}) may be given`,
      );
    }
    if (!SSL_MODES.includes(value as SslMode)) throw new ServerUrlError(`${PREFIX}sslmode must be one of ${SSL_MODES.join(", ")}`);
    sslmode = value as SslMode;
  }
  return {
    engine: engine!,
    host,
    port: url.port ? Number(url.port) : SCHEMES[url.protocol.slice(0, -1).toLowerCase() as keyof typeof SCHEMES].port,
    user,
    password: decode(url.password, "password"),
    // What PostgreSQL itself assumes when none is named: the user's own database.
    database: path || user,
    sslmode,
  };
}
