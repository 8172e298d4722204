// What every route of a kind can answer, added to the generated OpenAPI document in one place
// (issue 18, gap 4): the statuses the shared stages give (host check, body limit, content type,
// authentication, rate limits, an unexpected failure), the rate-limit and Retry-After headers,
// the Idempotency-Key request header, and OpenAPI 3.0 spellings of what TypeBox writes as
// JSON Schema (`const`, enum defaults that would pre-fill the UI's forms).
import { ERROR_TYPES } from "../http/errors";
import { ErrorBody, IpRateLimitedBody, JsonRpcErrorBody, RateLimitedBody } from "../http/model";
import { IDEMPOTENCY_KEY_PATTERN } from "../limits/idempotency";
import { LIMITED_ROUTES } from "../limits/rate-limit";
import { isMcpPath } from "../mcp/errors";
import { MCP_OPERATIONS } from "../mcp/openapi";

type Json = Record<string, unknown>;
interface Operation extends Json {
  security?: unknown[];
  parameters?: Json[];
  requestBody?: Json;
  responses?: Record<string, Json>;
}

/** Per-user windows (D16): on every response of a limited route. */
export const USER_LIMIT_HEADERS = {
  "X-RateLimit-Limit-Minute": "requests allowed in the current minute window",
  "X-RateLimit-Remaining-Minute": "requests left in the current minute window",
  "X-RateLimit-Reset-Minute": "when the minute window ends (Unix time, seconds)",
  "X-RateLimit-Limit-Day": "requests allowed in the current day window",
  "X-RateLimit-Remaining-Day": "requests left in the current day window",
  "X-RateLimit-Reset-Day": "when the day window ends (Unix time, seconds)",
} as const;

/** The per-address bucket of the MCP endpoint (second document). */
export const IP_LIMIT_HEADERS = {
  "X-RateLimit-Limit": "the bucket's size",
  "X-RateLimit-Remaining": "tokens left in the bucket",
  "X-RateLimit-Reset": "seconds until the bucket is full again",
} as const;

/** Routes limited per client address (by their OpenAPI path and method). */
const IP_LIMITED = new Set(["POST /mcp"]);

const headerObjects = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([name, description]) => [name, { description, schema: { type: "integer" } }]));

const RETRY_AFTER = { "Retry-After": { description: "seconds to wait before retrying", schema: { type: "integer" } } };
const WWW_AUTHENTICATE = {
  "WWW-Authenticate": { description: "Bearer challenge naming the protected-resource metadata", schema: { type: "string" } },
};

const shapedError = (description: string, schema: unknown, headers?: Json): Json => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema } },
});

/** The statuses the shared stages can answer, by what an operation is. */
function sharedResponses(key: string, path: string, op: Operation): Record<string, Json> {
  // On /mcp every error is a JSON-RPC error object (jsonRpcShape), but its own 429.
  const errorResponse = (description: string, schema: unknown = isMcpPath(path) ? JsonRpcErrorBody : ErrorBody, headers?: Json) =>
    shapedError(description, schema, headers);
  const out: Record<string, Json> = {
    403: errorResponse("Forbidden: a Host or Origin not allowed (CORPUS_ALLOWED_HOSTS), or a token without the scope"),
    500: errorResponse("Unexpected failure: retry with backoff"),
    // The request timeout wraps every stage (src/http/timeout.ts).
    503: errorResponse("Service unavailable: no answer within CORPUS_REQUEST_TIMEOUT seconds; retry", undefined, RETRY_AFTER),
  };
  if (op.requestBody) {
    out[400] = errorResponse("Bad request: a field is missing, unknown or out of bounds, or the body is not JSON");
    out[413] = errorResponse("Payload too large: the body is over CORPUS_MAX_REQUEST_SIZE");
    out[415] = errorResponse("Unsupported media type: the body must be application/json");
  }
  if (op.security?.length)
    out[401] = errorResponse("Unauthorized: no token, or an invalid, expired or revoked one", undefined, WWW_AUTHENTICATE);
  if (LIMITED_ROUTES[key])
    out[429] = errorResponse("Rate limited: the user's minute or day window is spent", RateLimitedBody, {
      ...RETRY_AFTER,
      ...headerObjects(USER_LIMIT_HEADERS),
    });
  if (IP_LIMITED.has(key))
    out[429] = errorResponse("Rate limited per client address", IpRateLimitedBody, { ...RETRY_AFTER, ...headerObjects(IP_LIMIT_HEADERS) });
  return out;
}

/** OpenAPI 3.0 has no `const`, `examples` (it has `example`), `patternProperties` nor a `null` type; a default on an enum pre-fills the UI's forms with it. */
function toOpenApi30(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) toOpenApi30(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Json;
  if ("const" in schema) {
    schema.enum = [schema.const];
    delete schema.const;
  }
  if (Array.isArray(schema.enum) && "default" in schema) delete schema.default;
  // A null member of a union is `nullable` in 3.0.
  for (const union of ["anyOf", "oneOf"] as const) {
    const members = schema[union];
    if (!Array.isArray(members) || !members.some((m: Json) => m?.type === "null")) continue;
    const rest = members.filter((m: Json) => m?.type !== "null");
    schema.nullable = true;
    if (rest.length === 1) {
      delete schema[union];
      Object.assign(schema, rest[0]);
    } else schema[union] = rest;
  }
  // TypeBox's Record(String, X) is patternProperties ^(.*)$, which 3.0 spells additionalProperties.
  const patterns = schema.patternProperties as Json | undefined;
  if (patterns && Object.keys(patterns).length === 1 && "^(.*)$" in patterns) {
    const value = patterns["^(.*)$"] as Json;
    schema.additionalProperties = Object.keys(value).length ? value : true;
    delete schema.patternProperties;
  }
  if (Array.isArray(schema.examples)) {
    schema.example ??= schema.examples[0];
    delete schema.examples;
  }
  for (const value of Object.values(schema)) toOpenApi30(value);
}

/** `/v1/connectors/{id}` → `/v1/connectors/:id`, as routes are named in LIMITED_ROUTES. */
const routeKey = (method: string, path: string) => `${method.toUpperCase()} ${path.replace(/\{([^}]+)\}/g, ":$1")}`;

export function completeDocument<T extends Json>(doc: T): T {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, operations] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const key = routeKey(method, path);
      const own = MCP_OPERATIONS[path]?.[method];
      if (own) Object.assign(op, { ...own, responses: { ...(own.responses as Json), ...op.responses } });
      const responses = (op.responses ??= {});
      for (const [status, response] of Object.entries(sharedResponses(key, path, op))) {
        const declared = responses[status];
        // A route's own declaration keeps its body; the shared stage's headers are added to it.
        if (!declared) responses[status] = response;
        else if (response.headers) declared.headers = { ...(response.headers as Json), ...(declared.headers as Json) };
      }
      for (const [status, response] of Object.entries(responses)) {
        // Generated descriptions say nothing ("Response for status 409"): the status table's code does.
        if (typeof response.description === "string" && response.description.startsWith("Response for status")) {
          response.description =
            ERROR_TYPES[Number(status) as keyof typeof ERROR_TYPES] ?? (status.startsWith("2") ? "OK" : response.description);
        }
      }
      if (LIMITED_ROUTES[key]) {
        for (const [status, response] of Object.entries(responses))
          if (status !== "429") response.headers = { ...headerObjects(USER_LIMIT_HEADERS), ...(response.headers as Json) };
      }
      if (IP_LIMITED.has(key)) {
        for (const [status, response] of Object.entries(responses))
          if (status !== "429") response.headers = { ...headerObjects(IP_LIMIT_HEADERS), ...(response.headers as Json) };
      }
      // D11: a guarded POST answers a repeated key from its record of the first answer.
      if (method === "post" && op.security?.length && path !== "/mcp") {
        op.parameters = [
          ...(op.parameters ?? []).filter((p) => p.name !== "Idempotency-Key"),
          {
            name: "Idempotency-Key",
            in: "header",
            required: false,
            description:
              "Repeating a key within 24 hours returns the first answer and is not counted again; the same key with another body is 409",
            schema: { type: "string", pattern: IDEMPOTENCY_KEY_PATTERN.source },
          },
        ];
      }
    }
  }
  toOpenApi30(doc);
  return doc;
}
