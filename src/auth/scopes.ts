// The scopes of the specification (first document part 5, second document part 5); D5 maps
// routes and tools to them.
export const SCOPES = ["corpus:read", "corpus:search", "connectors:read", "connectors:write"] as const;
export type Scope = (typeof SCOPES)[number];
