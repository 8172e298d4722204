// Every CORPUS_* variable (DECISIONS D1; second document part 8), read and validated once at
// start. Each variable is one TypeBox schema: its type, bounds, default and the text a user
// sees when a value is refused all live here.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { allowList } from "./net/pin";

const Int = (def: number, minimum: number, maximum: number, description: string) =>
  Type.Integer({ default: def, minimum, maximum, description });
const Bool = (description: string) => Type.Boolean({ default: false, description });
const HttpUrl = (description: string) =>
  Type.Optional(Type.String({ pattern: "^https?://[^\\s/?#]+[^\\s]*$", allowed: "an http:// or https:// URL", description }));

export const LOG_LEVELS = ["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] as const;

export const ConfigSchema = Type.Object({
  CORPUS_HOST: Type.String({
    default: "127.0.0.1",
    minLength: 1,
    allowed: "a host name or IP address",
    description: "Address to listen on; loopback unless configured.",
  }),
  CORPUS_PORT: Int(8080, 0, 65535, "TCP port to listen on (0 picks a free one)."),
  CORPUS_DATA_DIR: Type.String({
    default: "./corpus-data",
    minLength: 1,
    allowed: "a folder path",
    description: "Folder for the database and keys (created 0700).",
  }),
  CORPUS_MASTER_KEY: Type.Optional(
    Type.String({
      pattern: "^[A-Za-z0-9+/]{43}=$",
      allowed: "32 bytes in base64 (44 characters)",
      description: "Master key; when unset, read from CORPUS_MASTER_KEY_FILE.",
    }),
  ),
  CORPUS_MASTER_KEY_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      allowed: "a file path",
      description:
        "Master key file, generated (0600) on first start; default DATA_DIR.master.key, beside the data folder (never inside it).",
    }),
  ),
  CORPUS_DATABASE_URL: Type.Optional(
    Type.String({
      pattern: "^postgres(ql)?://[^\\s]+$",
      allowed: "a postgres:// or postgresql:// URL",
      description:
        "PostgreSQL (15+, pgvector 0.8+) shared by several corpus nodes (D33); unset, the embedded SQLite database of CORPUS_DATA_DIR. Partial: `corpus serve` refuses it until every room is kept there.",
    }),
  ),
  CORPUS_CORS_ALLOW_ORIGINS_CSV: Type.String({
    default: "",
    pattern: "^(\\s*https?://[^\\s,/]+\\s*(,\\s*https?://[^\\s,/]+\\s*)*)?$",
    allowed: "comma-separated origins such as https://app.example.com",
    description: "Origins allowed cross-origin access; empty allows none.",
  }),
  CORPUS_ALLOWED_HOSTS: Type.String({
    default: "",
    pattern: "^(\\s*(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)\\s*(,\\s*(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+)\\s*)*)?$",
    allowed: "comma-separated host names or IP addresses (IPv6 in brackets), without ports",
    description:
      "Host names this server answers to besides loopback and the hosts of CORPUS_OAUTH_RESOURCE_URL and CORPUS_CORS_ALLOW_ORIGINS_CSV; any other Host header is 403 (DNS rebinding).",
  }),
  CORPUS_DEBUG_MODE: Bool("Enables /debug/* routes and debug logging."),
  CORPUS_LOG_LEVEL: Type.Union(
    LOG_LEVELS.map((l) => Type.Literal(l)),
    { default: "INFO", description: "Lowest level logged." },
  ),
  CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: Int(60, 1, 1_000_000, "Requests per minute per IP on /mcp (token bucket)."),
  CORPUS_RATE_LIMIT_MAX_TRACKED_IPS: Int(
    100_000,
    100,
    10_000_000,
    "Most client addresses whose /mcp bucket is kept; refilled buckets are dropped every minute, and past this the least recently seen address is forgotten.",
  ),
  CORPUS_OAUTH_RESOURCE_URL: HttpUrl(
    "Public URL of this server (default http://HOST:PORT, https:// when serving HTTPS: the port bound when CORPUS_PORT=0, loopback for a wildcard CORPUS_HOST); the tokens' audience.",
  ),
  CORPUS_OAUTH_ISSUER: HttpUrl("Token issuer (default http://HOST:PORT, https:// when serving HTTPS)."),
  CORPUS_OAUTH_AUTHORIZATION_ENDPOINT: HttpUrl(
    "Authorization endpoint of an external identity provider; with CORPUS_OAUTH_TOKEN_ENDPOINT it turns the built-in authorization server off.",
  ),
  CORPUS_OAUTH_TOKEN_ENDPOINT: HttpUrl("Token endpoint of an external identity provider (see CORPUS_OAUTH_AUTHORIZATION_ENDPOINT)."),
  CORPUS_OAUTH_JWKS_URI: Type.Optional(
    Type.String({
      pattern: "^(https?://[^\\s]+|file://[^\\s]+)$",
      allowed: "an http(s):// URL or a file:// path",
      description: "JWKS of an external identity provider.",
    }),
  ),
  CORPUS_OIDC_ISSUER: HttpUrl(
    "Issuer of an upstream OpenID Connect provider (Keycloak, Authentik, Entra ID...): sign-in at the built-in authorization server goes there instead of corpus's own user list; https unless on loopback; with CORPUS_OIDC_CLIENT_ID and CORPUS_OIDC_CLIENT_SECRET.",
  ),
  CORPUS_OIDC_CLIENT_ID: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      allowed: "the client id registered at the provider (1 to 255 characters)",
      description: "corpus's client id at the upstream OpenID Connect provider.",
    }),
  ),
  CORPUS_OIDC_CLIENT_SECRET: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 1024,
      allowed: "the client secret the provider gave (1 to 1024 characters)",
      description:
        "corpus's client secret at the upstream OpenID Connect provider (sent with HTTP Basic, or in the form when the provider only takes that).",
    }),
  ),
  CORPUS_AUTH_DISABLED: Bool("Development only: /mcp without a token."),
  CORPUS_MAX_REQUEST_SIZE: Int(2_097_152, 1024, 1_073_741_824, "Largest request body in bytes."),
  CORPUS_REQUEST_TIMEOUT: Int(30, 1, 3600, "Seconds before a request is ended with 503."),
  CORPUS_LIMIT_QUERY_PER_MINUTE: Int(60, 1, 1_000_000, "POST /v1/query per user per minute."),
  CORPUS_LIMIT_QUERY_PER_DAY: Int(6000, 1, 100_000_000, "POST /v1/query per user per UTC day."),
  CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE: Int(30, 1, 1_000_000, "POST /v1/deep_search per user per minute."),
  CORPUS_LIMIT_DEEP_SEARCH_PER_DAY: Int(3000, 1, 100_000_000, "POST /v1/deep_search per user per UTC day."),
  CORPUS_LIMIT_DELETE_PER_MINUTE: Int(10, 1, 1_000_000, "DELETE /v1/delete_my_data per user per minute."),
  CORPUS_LIMIT_DELETE_PER_DAY: Int(100, 1, 100_000_000, "DELETE /v1/delete_my_data per user per UTC day."),
  CORPUS_LIMIT_CONNECTORS_PER_MINUTE: Int(30, 1, 1_000_000, "POST /v1/connectors per user per minute."),
  CORPUS_LIMIT_CONNECTORS_PER_DAY: Int(1000, 1, 100_000_000, "POST /v1/connectors per user per UTC day."),
  CORPUS_LIMIT_WEBHOOKS_PER_MINUTE: Int(30, 1, 1_000_000, "POST /v1/webhooks per user per minute."),
  CORPUS_LIMIT_WEBHOOKS_PER_DAY: Int(1000, 1, 100_000_000, "POST /v1/webhooks per user per UTC day."),
  CORPUS_TRUSTED_PROXIES: Type.String({
    default: "",
    pattern: "^[0-9a-fA-F.:/,\\s]*$",
    allowed: "comma-separated IP addresses or CIDR ranges",
    description: "Proxies whose X-Forwarded-For is trusted.",
  }),
  CORPUS_MAX_CONNECTORS_PER_USER: Int(
    50,
    1,
    100_000,
    "Most connectors one user may add (the operator's not counted); one more is 409 conflict.",
  ),
  CORPUS_MAX_WEBHOOKS_PER_USER: Int(20, 1, 100_000, "Most webhooks one user may register; one more is 409 conflict."),
  CORPUS_EMBED_THREADS: Int(
    1,
    1,
    64,
    "Threads onnxruntime uses for one model run in the embedding worker; 1 leaves the other core of a two-core machine to requests, more embeds faster on a machine with more cores.",
  ),
  CORPUS_MIN_FREE_BYTES: Int(
    268_435_456,
    0,
    Number.MAX_SAFE_INTEGER,
    "Free bytes the data folder's disk should keep: below it the service warns, starts no new indexing and reports /api/connectors/health unhealthy; a quarter of it is held as a reserve file in the data folder, freed so that deletions succeed on a full disk (0 turns both off).",
  ),
  // Each is a whole copy of the compacted database on the data folder's own disk (D29): the
  // newest and two to fall back on, at most three times the database; copy them off to keep more.
  CORPUS_BACKUP_KEEP: Int(
    3,
    1,
    1000,
    "Backups the console keeps in DATA_DIR/backups: once a new one verifies, the oldest beyond this many are removed (never the new one).",
  ),
  CORPUS_BACKUP_KEEP_DAYS: Int(
    0,
    0,
    36_500,
    "Days the console keeps a backup: once a new one verifies, older ones are removed (never the new one); 0 bounds them by CORPUS_BACKUP_KEEP alone.",
  ),
  CORPUS_VECTOR_INDEX_THRESHOLD: Int(
    50_000,
    1,
    1_000_000_000,
    "Vectors of one user's connector past which they get an HNSW index beside the database (built in the background; searched in a few milliseconds where sqlite-vec reads every vector).",
  ),
  CORPUS_CONNECTORS_FILE: Type.Optional(
    Type.String({ minLength: 1, allowed: "a file path", description: "JSON array of operator connectors visible to every user." }),
  ),
  CORPUS_IMAP_OAUTH_PROVIDERS_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      allowed: "a file path",
      description:
        "JSON array of the OAuth 2.0 providers users' IMAP connectors may sign in with instead of a password (Microsoft 365, Gmail, an own identity provider): endpoints, client id and secret, scopes and the IMAP hosts each provider's tokens may go to; checked at start.",
    }),
  ),
  CORPUS_CONNECTOR_ROOTS: Type.String({
    default: "",
    pattern: "^(\\s*/[^,]*(,\\s*/[^,]*)*)?$",
    allowed: "comma-separated absolute folder paths",
    description:
      "Folders under which users may add local connectors (maildir, files, books, SQLite); {user} in an entry stands for the token's subject, an entry without it is shared by every user; empty allows none.",
  }),
  CORPUS_WEBHOOK_URL: HttpUrl("Operator webhook that receives user.deleted."),
  CORPUS_WEBHOOK_SECRET: Type.Optional(
    Type.String({ minLength: 16, allowed: "at least 16 characters", description: "Secret signing the operator webhook." }),
  ),
  CORPUS_WEBHOOK_ALLOW_PRIVATE: Bool("Allow webhooks to private, link-local and loopback addresses."),
  CORPUS_TLS_CERT_FILE: Type.Optional(
    Type.String({
      minLength: 1,
      allowed: "a file path",
      description: "PEM certificate (chain) to serve HTTPS with, together with CORPUS_TLS_KEY_FILE; both files are read again on SIGHUP.",
    }),
  ),
  CORPUS_TLS_KEY_FILE: Type.Optional(
    Type.String({ minLength: 1, allowed: "a file path", description: "PEM private key of CORPUS_TLS_CERT_FILE." }),
  ),
  CORPUS_METRICS_LISTEN: Type.Optional(
    Type.String({
      pattern: "^(127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}|\\[::1\\]|localhost):\\d{1,5}$",
      allowed: "a loopback address and port, as 127.0.0.1:9464 or [::1]:9464",
      description: "Serves Prometheus metrics at /metrics on this loopback address, for the operator only (D35); none unless set.",
    }),
  ),
  CORPUS_CONNECTOR_ALLOW_HOSTS: Type.String({
    default: "",
    pattern: "^[0-9A-Za-z_.:/\\[\\],\\s-]*$",
    allowed: "comma-separated host names, IP addresses or CIDR ranges",
    description:
      "Private, loopback and other non-public hosts users may connect IMAP and PostgreSQL connectors to (operator connectors are not bound); empty allows only public addresses.",
  }),
});

export type Config = Static<typeof ConfigSchema> & {
  /** Resolved defaults that depend on other variables. */
  resourceUrl: string;
  issuer: string;
  corsOrigins: string[];
  /** CORPUS_ALLOWED_HOSTS, lower case. */
  allowedHosts: string[];
  connectorRoots: string[];
};

export class ConfigError extends Error {}

/** Addresses that mean "every interface": bound to, never reached. */
const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", "[::]", "::0", "[::0]"]);

export const isWildcardHost = (host: string) => WILDCARD_HOSTS.has(host.toLowerCase());

/** A host as it is written in a URL (an IPv6 address in brackets). */
export const urlHost = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);

/**
 * The resource URL and issuer (D4): the variables when set, else this server's own address with
 * `port`. That address must open for an assistant (the 401's resource_metadata, the OAuth
 * metadata's endpoints, the connector callback are built on it), so a wildcard CORPUS_HOST, which
 * no client can go to, stands for this machine's loopback: a start on 0.0.0.0 (the container
 * image) signs in from this machine, where a refusal would stop a server that serves, and its
 * citation links already follow the Host reached (D36). Clients elsewhere need
 * CORPUS_OAUTH_RESOURCE_URL, which serve says at start. With CORPUS_PORT=0 the server calls this
 * again with the port it was given, before anything is built from it.
 */
export function ownUrls(
  base: Pick<Config, "CORPUS_HOST" | "CORPUS_TLS_CERT_FILE" | "CORPUS_OAUTH_RESOURCE_URL" | "CORPUS_OAUTH_ISSUER">,
  port: number,
): { resourceUrl: string; issuer: string } {
  const host = isWildcardHost(base.CORPUS_HOST) ? (base.CORPUS_HOST.includes(":") ? "::1" : "127.0.0.1") : base.CORPUS_HOST;
  const local = `${base.CORPUS_TLS_CERT_FILE ? "https" : "http"}://${urlHost(host)}:${port}`;
  return {
    resourceUrl: (base.CORPUS_OAUTH_RESOURCE_URL ?? local).replace(/\/+$/, ""),
    issuer: (base.CORPUS_OAUTH_ISSUER ?? local).replace(/\/+$/, ""),
  };
}

/** The name of one CORPUS_* variable. */
export type ConfigVariable = keyof Static<typeof ConfigSchema>;

/** The lowest level logged: DEBUG in debug mode ("verbose logging", second document part 8), else CORPUS_LOG_LEVEL. */
export const effectiveLogLevel = (c: Pick<Config, "CORPUS_DEBUG_MODE" | "CORPUS_LOG_LEVEL">): (typeof LOG_LEVELS)[number] =>
  c.CORPUS_DEBUG_MODE ? "DEBUG" : c.CORPUS_LOG_LEVEL;

function allowedText(schema: TSchema): string {
  if (schema.allowed) return schema.allowed as string;
  if (schema.type === "integer") return `an integer from ${schema.minimum} to ${schema.maximum}`;
  if (schema.type === "boolean") return "true or false";
  if (schema.anyOf) return `one of ${(schema.anyOf as TSchema[]).map((s) => s.const).join(", ")}`;
  return "a string";
}

function convert(raw: string, schema: TSchema): unknown {
  if (schema.type === "integer") return /^[+-]?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw;
  if (schema.type === "boolean") {
    const v = raw.trim().toLowerCase();
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    return raw;
  }
  if (schema.anyOf) return raw.trim().toUpperCase();
  return raw.trim();
}

/** The upstream OpenID Connect variables (issue 17) go together, with the built-in authorization server, and https off loopback. */
function oidcProblem(base: Static<typeof ConfigSchema>): void {
  const issuer = base.CORPUS_OIDC_ISSUER;
  if (!issuer) {
    for (const name of ["CORPUS_OIDC_CLIENT_ID", "CORPUS_OIDC_CLIENT_SECRET"] as const)
      if (base[name]) throw new ConfigError(`${name} is set but CORPUS_OIDC_ISSUER is not: expected the provider's issuer URL too`);
    return;
  }
  for (const name of ["CORPUS_OIDC_CLIENT_ID", "CORPUS_OIDC_CLIENT_SECRET"] as const)
    if (!base[name]) throw new ConfigError(`${name} is not set: expected it whenever CORPUS_OIDC_ISSUER is set`);
  const url = new URL(issuer);
  if (url.search || url.hash || url.username || url.password)
    throw new ConfigError(
      `CORPUS_OIDC_ISSUER=${JSON.stringify(issuer)} is not allowed: expected an issuer URL without query, fragment or credentials`,
    );
  const loopback = ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
  if (url.protocol !== "https:" && !loopback)
    throw new ConfigError(`CORPUS_OIDC_ISSUER=${JSON.stringify(issuer)} is not allowed: expected https:// (http only on loopback)`);
  if (base.CORPUS_OAUTH_AUTHORIZATION_ENDPOINT || base.CORPUS_OAUTH_TOKEN_ENDPOINT)
    throw new ConfigError(
      "CORPUS_OIDC_ISSUER is set together with CORPUS_OAUTH_AUTHORIZATION_ENDPOINT/CORPUS_OAUTH_TOKEN_ENDPOINT: the upstream provider signs people in to the built-in authorization server, which those variables turn off; set one or the other",
    );
}

/**
 * Reads the configuration; throws ConfigError with one line naming variable, value and what is
 * allowed. With `only`, a command that needs a few variables (`corpus token`) reads those alone:
 * the others keep their defaults, so a value meant for the server cannot stop the command.
 */
export function loadConfig(
  env: Record<string, string | undefined> = process.env,
  overrides: Partial<Record<string, string>> = {},
  only?: readonly ConfigVariable[],
): Config {
  const values: Record<string, unknown> = {};
  for (const [name, schema] of Object.entries(ConfigSchema.properties) as Array<[ConfigVariable, TSchema]>) {
    const raw = only && !only.includes(name) ? undefined : (overrides[name] ?? env[name]);
    if (raw === undefined || raw === "") {
      if (schema.default !== undefined) values[name] = schema.default;
      continue;
    }
    const value = convert(raw, schema);
    if (!Value.Check(schema, value)) {
      const secret =
        name === "CORPUS_MASTER_KEY" ||
        name === "CORPUS_WEBHOOK_SECRET" ||
        name === "CORPUS_OIDC_CLIENT_SECRET" ||
        name === "CORPUS_DATABASE_URL";
      throw new ConfigError(`${name}=${secret ? "(hidden)" : JSON.stringify(raw)} is not allowed: expected ${allowedText(schema)}`);
    }
    values[name] = value;
  }
  const base = values as Static<typeof ConfigSchema>;
  if (base.CORPUS_WEBHOOK_URL && !base.CORPUS_WEBHOOK_SECRET) {
    throw new ConfigError("CORPUS_WEBHOOK_SECRET is not set: expected at least 16 characters whenever CORPUS_WEBHOOK_URL is set");
  }
  if (Boolean(base.CORPUS_TLS_CERT_FILE) !== Boolean(base.CORPUS_TLS_KEY_FILE)) {
    const [set, unset] = base.CORPUS_TLS_CERT_FILE
      ? ["CORPUS_TLS_CERT_FILE", "CORPUS_TLS_KEY_FILE"]
      : ["CORPUS_TLS_KEY_FILE", "CORPUS_TLS_CERT_FILE"];
    throw new ConfigError(`${unset} is not set: expected both CORPUS_TLS_CERT_FILE and CORPUS_TLS_KEY_FILE or neither, and ${set} is set`);
  }
  oidcProblem(base);
  try {
    allowList(base.CORPUS_CONNECTOR_ALLOW_HOSTS);
  } catch (error) {
    throw new ConfigError(
      `CORPUS_CONNECTOR_ALLOW_HOSTS=${JSON.stringify(base.CORPUS_CONNECTOR_ALLOW_HOSTS)} is not allowed: ${(error as Error).message}`,
    );
  }
  return {
    ...base,
    ...ownUrls(base, base.CORPUS_PORT),
    corsOrigins: base.CORPUS_CORS_ALLOW_ORIGINS_CSV.split(",")
      .map((s) => s.trim())
      .filter(Boolean),
    allowedHosts: base.CORPUS_ALLOWED_HOSTS.split(",")
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
    connectorRoots: base.CORPUS_CONNECTOR_ROOTS.split(",")
      .map((s) => s.trim().replace(/\/+$/, ""))
      .filter(Boolean),
  };
}

/** Name, default and meaning of every variable: for `corpus --help` and the README. */
export function describeConfig(): Array<{ name: string; default: unknown; description: string }> {
  return (Object.entries(ConfigSchema.properties) as Array<[string, TSchema]>).map(([name, s]) => ({
    name,
    default: s.default,
    description: s.description ?? "",
  }));
}
