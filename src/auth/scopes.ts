// The scopes of the specification (first document part 5, second document part 5) and D5:
// one declarative table of what each REST route requires. A tool's scope is in its own record
// (mcp/tools/*).
export const SCOPES = ["corpus:read", "corpus:search", "connectors:read", "connectors:write"] as const;
export type Scope = (typeof SCOPES)[number];

export const REQUIRED_SCOPE = {
  "POST /v1/query": "corpus:search",
  "POST /v1/deep_search": "corpus:read",
  "GET /v1/documents/:id": "corpus:read",
  "GET /v1/connectors": "connectors:read",
  "POST /v1/connectors": "connectors:write",
  "PATCH /v1/connectors/:id": "connectors:write",
  "POST /v1/connectors/:id/oauth": "connectors:write",
  "DELETE /v1/connectors/:id": "connectors:write",
  "GET /v1/webhooks": "connectors:read",
  "POST /v1/webhooks": "connectors:write",
  "DELETE /v1/webhooks/:id": "connectors:write",
  "DELETE /v1/delete_my_data": "connectors:write",
} as const satisfies Record<string, Scope>;

export type ProtectedRoute = keyof typeof REQUIRED_SCOPE;

/**
 * The only routes a connector panel's token serves (issue 13 item 8): the panel lists, adds,
 * configures and removes connectors. It cannot search, open another panel (mint a token), register webhooks
 * or delete the user's data, whatever its scopes.
 */
export const PANEL_ROUTES: ReadonlySet<string> = new Set<ProtectedRoute>([
  "GET /v1/connectors",
  "POST /v1/connectors",
  "PATCH /v1/connectors/:id",
  "POST /v1/connectors/:id/oauth",
  "DELETE /v1/connectors/:id",
]);
