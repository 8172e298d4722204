// The scopes of the specification (first document part 5, second document part 5) and D5: one
// declarative table of what each REST route requires, and one of what each MCP tool requires
// (its record, mcp/tools/*, takes its scope from it). README's table of scopes says the same.
export const SCOPES = ["corpus:read", "corpus:search", "connectors:read", "connectors:write"] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * Opening a cited document whole (D36) takes the scope of the wire: on MCP (the tool fetch,
 * resources/read of corpus://doc/<id>) that of the search tools, corpus:search, so that an
 * assistant's search then fetch is one flow under the same scopes as corpus_search; through REST
 * (GET /v1/documents/{id}) and the page /d/<id> with a bearer token, corpus:read, the scope of
 * reading what corpus keeps (deep_search reads the archive the ids open).
 */
export const MCP_OPEN_DOCUMENT_SCOPE = "corpus:search" satisfies Scope;

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

/** What each MCP tool requires (D5; second document part 5 names the scopes, not which tool needs which). */
export const TOOL_SCOPE = {
  corpus_search: "corpus:search",
  corpus_answer: "corpus:search",
  search: "corpus:search",
  fetch: MCP_OPEN_DOCUMENT_SCOPE,
  open_connectors: "connectors:read",
} as const satisfies Record<string, Scope>;

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
