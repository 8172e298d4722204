// Who a token may name (D24). A subject becomes a key of records, limits and folders
// (`{user}` in CORPUS_CONNECTOR_ROOTS), so it must be a safe identifier, and never one of the
// names the service keeps for itself: the operator's connectors and the anonymous caller.

/** Owner of the operator's connectors (CORPUS_CONNECTORS_FILE) in every room. */
export const OPERATOR_OWNER = "*";
/** The caller of /mcp while CORPUS_AUTH_DISABLED=true (development only). */
export const ANONYMOUS_USER = "local";

/** Letters, digits and `._@+-`, starting with a letter or digit: also a safe path segment. */
export const SAFE_SUBJECT = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

const RESERVED = new Set([OPERATOR_OWNER, ANONYMOUS_USER]);

/** Why `subject` cannot be a user, or undefined when it can. */
export function subjectProblem(subject: string): string | undefined {
  if (!SAFE_SUBJECT.test(subject)) return "token subject is not a safe identifier (letters, digits and ._@+-, at most 128)";
  if (RESERVED.has(subject)) return "token subject is reserved";
  return undefined;
}
