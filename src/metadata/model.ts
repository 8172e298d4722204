import { t } from "elysia";

export const ProtectedResourceMetadata = t.Object({
  resource: t.String(),
  authorization_servers: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  resource_documentation: t.String(),
  bearer_methods_supported: t.Array(t.String()),
});

export const AuthorizationServerMetadata = t.Object({
  issuer: t.String(),
  authorization_endpoint: t.String(),
  token_endpoint: t.String(),
  jwks_uri: t.String(),
  response_types_supported: t.Array(t.String()),
  grant_types_supported: t.Array(t.String()),
  code_challenge_methods_supported: t.Array(t.String()),
  token_endpoint_auth_methods_supported: t.Array(t.String()),
  scopes_supported: t.Array(t.String()),
  registration_endpoint: t.Optional(t.String()),
  revocation_endpoint: t.Optional(t.String()),
  response_modes_supported: t.Optional(t.Array(t.String())),
  revocation_endpoint_auth_methods_supported: t.Optional(t.Array(t.String())),
  authorization_response_iss_parameter_supported: t.Optional(t.Boolean()),
  client_id_metadata_document_supported: t.Optional(t.Boolean()),
  service_documentation: t.Optional(t.String()),
});
