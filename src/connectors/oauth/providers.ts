// The OAuth 2.0 providers users' IMAP connectors may sign in with instead of a password
// (issue 38: Microsoft 365 takes no password for IMAP, Gmail asks for OAuth too). The operator
// lists them in CORPUS_IMAP_OAUTH_PROVIDERS_FILE, a JSON array read once at start; a bad file
// stops the start with the provider and field at fault (D1). None is built in: the README shows
// Microsoft 365's and Gmail's rows as examples.
import { readFileSync } from "node:fs";
import { type Static, Type } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ConfigError } from "../../config";
import { CONNECTOR_ID_PATTERN } from "../../ids";
import { parseIp, specialRange, unwrapMapped } from "../../net/addresses";
import { HostInvalid, normalizeHost } from "../../net/pin";

export const PROVIDERS_VARIABLE = "CORPUS_IMAP_OAUTH_PROVIDERS_FILE";

/** Where the provider sends the browser back with the code: `<public URL><CALLBACK_PATH>`, registered at the provider. */
export const CALLBACK_PATH = "/connectors/oauth/callback";

/** Parameters of the authorization request corpus sets itself: a provider's extra ones may not replace them. */
const OWN_PARAMETERS = ["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method"];

export const ProviderSchema = Type.Object(
  {
    id: Type.String({ pattern: CONNECTOR_ID_PATTERN, description: "what users name in an IMAP connector's config.oauth" }),
    title: Type.String({ minLength: 1, maxLength: 100, description: "the provider as users are shown it" }),
    authorization_endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
    token_endpoint: Type.String({ minLength: 1, maxLength: 2048 }),
    client_id: Type.String({ minLength: 1, maxLength: 255 }),
    client_secret: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "absent for a public client (PKCE only)" })),
    // RFC 6749 section 3.3: scope tokens are printable ASCII without space, '"' or '\'.
    scopes: Type.Array(Type.String({ minLength: 1, maxLength: 512, pattern: "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+$" }), {
      minItems: 1,
      maxItems: 20,
    }),
    imap_hosts: Type.Array(Type.String({ minLength: 1, maxLength: 253 }), {
      minItems: 1,
      maxItems: 50,
      description: "the IMAP servers this provider's access tokens may be sent to",
    }),
    authorization_parameters: Type.Optional(
      Type.Record(Type.String({ pattern: "^[A-Za-z_][A-Za-z0-9_.-]{0,39}$" }), Type.String({ maxLength: 200 }), {
        description: "added to the authorization request, e.g. Gmail's access_type=offline and prompt=consent",
      }),
    ),
  },
  { additionalProperties: false },
);
export type Provider = Static<typeof ProviderSchema>;

/** `localhost`, or an address in 127.0.0.0/8 or ::1. */
const isLoopback = (hostname: string) => {
  if (hostname === "localhost") return true;
  const ip = parseIp(hostname.replace(/^\[(.*)\]$/, "$1"));
  return !!ip && specialRange(unwrapMapped(ip)) === "loopback";
};

/** Why an endpoint URL is refused, or undefined: https (http only on loopback), no credentials, no fragment. */
function endpointProblem(raw: string): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "expected an https:// URL";
  }
  if (url.protocol !== "https:" && !(url.protocol === "http:" && isLoopback(url.hostname)))
    return "expected https:// (http only on loopback)";
  if (url.username || url.password || url.hash) return "expected a URL without credentials or fragment";
  return undefined;
}

/** The providers of `path`, by id; throws ConfigError naming the provider and the field at fault. */
export function loadProviders(path: string): Map<string, Provider> {
  const refused = (why: string) => new ConfigError(`${PROVIDERS_VARIABLE}=${JSON.stringify(path)} is not allowed: ${why}`);
  let list: unknown;
  try {
    list = JSON.parse(readFileSync(path, "utf8"));
  } catch {
    throw refused("expected a readable JSON file");
  }
  if (!Array.isArray(list)) throw refused("expected a JSON array of providers");
  const providers = new Map<string, Provider>();
  list.forEach((item: unknown, i) => {
    const named = item && typeof item === "object" && typeof (item as { id?: unknown }).id === "string";
    const fail = (why: string) => refused(`provider ${i + 1}${named ? ` (${(item as { id: string }).id})` : ""}: ${why}`);
    const error = Value.Errors(ProviderSchema, item).First();
    if (error) {
      const field = error.path.replace(/^\//, "").replaceAll("/", ".") || "the entry";
      throw fail(`${field}: ${error.message.charAt(0).toLowerCase()}${error.message.slice(1)}`);
    }
    const p = item as Provider;
    if (providers.has(p.id)) throw fail(`id ${p.id} is listed twice`);
    for (const field of ["authorization_endpoint", "token_endpoint"] as const) {
      const problem = endpointProblem(p[field]);
      if (problem) throw fail(`${field}: ${problem}`);
    }
    const reserved = Object.keys(p.authorization_parameters ?? {}).filter((k) => OWN_PARAMETERS.includes(k));
    if (reserved.length) throw fail(`authorization_parameters: ${reserved.join(", ")} is set by corpus itself`);
    const hosts = p.imap_hosts.map((h) => {
      try {
        return normalizeHost(h);
      } catch (e) {
        if (e instanceof HostInvalid) throw fail(`imap_hosts: ${e.message}`);
        throw e;
      }
    });
    providers.set(p.id, { ...p, imap_hosts: hosts });
  });
  return providers;
}
