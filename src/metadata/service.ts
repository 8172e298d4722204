// The two OAuth metadata documents (RFC 9728, RFC 8414) built from the CORPUS_OAUTH_*
// variables. A document that the configuration cannot complete is a configuration error
// (second document part 4: 500), named precisely so an operator can fix it.
import type { Static } from "elysia";
import { SCOPES } from "../auth/scopes";
import type { Config } from "../config";
import type { AuthorizationServerMetadata, ProtectedResourceMetadata } from "../metadata/model";
import { GRANT_TYPES } from "../oauth/grants";
import { AUTH_METHODS } from "../oauth/registration";
import { OAUTH_PATHS } from "../oauth/routes";
import { OAuthServer } from "../oauth/service";

export class MetadataConfigError extends Error {}

/** Where the protected-resource document is (RFC 9728; D6), and with `/mcp` after it (D28). */
export const PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource";

/** Where this server publishes its own signing keys (D4). */
export const JWKS_PATH = "/.well-known/jwks.json";

function requireUrl(name: string, value: string | undefined): string {
  if (!value) throw new MetadataConfigError(`${name} is not set`);
  try {
    const url = new URL(value);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error();
  } catch {
    throw new MetadataConfigError(`${name} is not an http(s) URL`);
  }
  return value;
}

export function protectedResourceMetadata(config: Config): Static<typeof ProtectedResourceMetadata> {
  const resource = requireUrl("CORPUS_OAUTH_RESOURCE_URL", config.resourceUrl);
  return {
    resource,
    authorization_servers: [requireUrl("CORPUS_OAUTH_ISSUER", config.issuer)],
    // The scopes a token for this resource may carry; never offline_access, which only an
    // authorization server grants (MCP authorization, 2026-07-28).
    scopes_supported: [...SCOPES],
    resource_documentation: `${resource}/openapi`,
    bearer_methods_supported: ["header"],
  };
}

export function authorizationServerMetadata(config: Config): Static<typeof AuthorizationServerMetadata> {
  const issuer = requireUrl("CORPUS_OAUTH_ISSUER", config.issuer);
  if (OAuthServer.builtIn(config)) {
    // The built-in authorization server (D27, D28): its endpoints are this server's.
    return {
      issuer,
      authorization_endpoint: `${issuer}${OAUTH_PATHS.authorize}`,
      token_endpoint: `${issuer}${OAUTH_PATHS.token}`,
      registration_endpoint: `${issuer}${OAUTH_PATHS.register}`,
      revocation_endpoint: `${issuer}${OAUTH_PATHS.revoke}`,
      jwks_uri: `${issuer}${JWKS_PATH}`,
      response_types_supported: ["code"],
      response_modes_supported: ["query"],
      grant_types_supported: [...GRANT_TYPES],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: [...AUTH_METHODS],
      revocation_endpoint_auth_methods_supported: [...AUTH_METHODS],
      scopes_supported: OAuthServer.grantableScopes(config),
      authorization_response_iss_parameter_supported: true,
      client_id_metadata_document_supported: true,
      service_documentation: `${config.resourceUrl}/openapi`,
    };
  }
  const jwks = config.CORPUS_OAUTH_JWKS_URI;
  return {
    issuer,
    authorization_endpoint: requireUrl("CORPUS_OAUTH_AUTHORIZATION_ENDPOINT", config.CORPUS_OAUTH_AUTHORIZATION_ENDPOINT),
    token_endpoint: requireUrl("CORPUS_OAUTH_TOKEN_ENDPOINT", config.CORPUS_OAUTH_TOKEN_ENDPOINT),
    // A file:// JWKS is read by this server only; clients are pointed at the local copy.
    jwks_uri: jwks?.startsWith("http") ? jwks : `${issuer}${JWKS_PATH}`,
    response_types_supported: ["code"],
    grant_types_supported: ["authorization_code"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["client_secret_basic"],
    scopes_supported: [...SCOPES],
  };
}
