// One error mapper for the whole app (D15): every REST error is { type, message } with `type`
// the Code column of the first document's status table. Nothing internal leaks: unexpected
// errors are logged and answered with a generic message, never a stack trace. A feature whose
// clients read another body (the MCP endpoint: JSON-RPC error objects) gives its own shape for
// its path (ErrorShapes); the mapper knows no feature by name.
import { Elysia, ValidationError } from "elysia";
import { DomainError, type DomainErrorKind } from "../errors";
import type { Ranges } from "../limits/client-ip";
import type { Logger } from "../log";
import { isStorageError, STORAGE_FULL_MESSAGE } from "../store/storage-errors";
import { infoOf, type RequestInfo, requestContext } from "./request-context";

export const ERROR_TYPES = {
  400: "bad_request",
  401: "unauthorized",
  403: "forbidden",
  404: "not_found",
  405: "method_not_allowed",
  409: "conflict",
  413: "payload_too_large",
  415: "unsupported_media_type",
  429: "rate_limited",
  500: "server_error",
  503: "service_unavailable",
  507: "insufficient_storage",
} as const;

export type ErrorStatus = keyof typeof ERROR_TYPES;

/** The one place where what a room's error means becomes an HTTP status (src/errors.ts). */
export const DOMAIN_ERROR_STATUS = {
  invalid: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  unavailable: 503,
} as const satisfies Record<DomainErrorKind, ErrorStatus>;

/** An error meant for the client: its message is shown as it is. */
export class HttpError extends Error {
  constructor(
    readonly status: ErrorStatus,
    message: string,
    readonly headers: Record<string, string> = {},
    /** A body other than { type, message }, where the specification gives one (429). */
    readonly body?: unknown,
  ) {
    super(message);
  }
  get type(): string {
    return ERROR_TYPES[this.status];
  }
}

/** D15: the 429 body of the REST interface. */
export function rateLimitedError(retryAfterSeconds: number, headers: Record<string, string> = {}): HttpError {
  const message = `Rate limit exceeded; retry after ${retryAfterSeconds} s`;
  return new HttpError(
    429,
    message,
    { ...headers, "retry-after": String(retryAfterSeconds) },
    {
      error: { type: "rate_limited", message, retry_after_seconds: retryAfterSeconds },
    },
  );
}

export const errorBody = (status: ErrorStatus, message: string) => ({ type: ERROR_TYPES[status], message });

/** The message of a body that is not JSON. */
export const NOT_JSON = "body: not valid JSON";

interface ValueErrorLike {
  path?: string;
  message?: string;
  value?: unknown;
  schema?: { error?: string; type?: string; enum?: unknown[] };
  errors?: Array<{ First(): ValueErrorLike | undefined }>;
}

const jsonType = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v === "number" ? "number" : typeof v);
const fits = (schemaType: string | undefined, v: unknown) =>
  schemaType === jsonType(v) || (schemaType === "integer" && typeof v === "number");

/**
 * The most specific error. A union's own message ("Expected union value") says nothing; of
 * its branches, the one of the value's own type names the rule that was broken (a number
 * over its maximum, rather than "expected string").
 */
function specific(error: ValueErrorLike): ValueErrorLike {
  const branches = (error.errors ?? []).map((it) => it.First()).filter((e): e is ValueErrorLike => !!e);
  if (branches.length === 0) return error;
  return specific(branches.find((b) => fits(b.schema?.type, b.value)) ?? branches[0]!);
}

/** "field: rule" from the first TypeBox error of a validation failure. */
export function validationMessage(error: ValidationError): string {
  const top = error.all[0] as ValueErrorLike | undefined;
  const where = error.type === "body" ? "body" : error.type;
  if (!top) return `${where}: invalid`;
  const first = specific(top);
  const path = first.path || top.path;
  const field = path ? path.replace(/^\//, "").replaceAll("/", ".") : where;
  // An enumeration (Elysia's UnionEnum, which TypeBox reports as "expected kind 'UnionEnum'") names its values.
  const allowed = first.schema?.enum;
  const rule = first.schema?.error ?? (allowed ? `must be one of ${allowed.join(", ")}` : (first.message ?? "invalid"));
  return `${field}: ${rule.charAt(0).toLowerCase()}${rule.slice(1)}`;
}

/**
 * What the log may say of a PostgreSQL error (D33): its SQLSTATE, message and where it arose, so
 * a 500 of the shared database is understood from the node's log. Never its detail (it quotes the
 * row's values) nor anything to the client.
 */
function databaseErrorOf(error: unknown): Record<string, string> {
  if (!(error instanceof Error) || error.name !== "PostgresError") return {};
  const e = error as Error & { code?: unknown; constraint_name?: unknown; table_name?: unknown; routine?: unknown };
  const fields: Record<string, string> = { pg_code: String(e.code), pg_message: error.message.slice(0, 200) };
  if (typeof e.table_name === "string") fields.pg_table = e.table_name;
  if (typeof e.constraint_name === "string") fields.pg_constraint = e.constraint_name;
  if (typeof e.routine === "string") fields.pg_routine = e.routine;
  return fields;
}

export function toErrorResponse(code: string | number, error: unknown, log: Logger, context: { request_id?: string; client_ip?: string }) {
  // Errors thrown while parsing a body (e.g. the body limit) arrive wrapped.
  if (code === "PARSE" && error instanceof Error && error.cause instanceof HttpError) error = error.cause;
  if (error instanceof HttpError)
    return { status: error.status, headers: error.headers, body: error.body ?? errorBody(error.status, error.message) };
  if (error instanceof DomainError) {
    const status = DOMAIN_ERROR_STATUS[error.kind];
    return { status, headers: { ...error.headers }, body: errorBody(status, error.message) };
  }
  if (error instanceof ValidationError) return { status: 400 as const, headers: {}, body: errorBody(400, validationMessage(error)) };
  // D29: a write the disk refused is a state to report, not an internal error.
  if (isStorageError(error)) {
    log.warning("write refused: storage full", { ...context, error: error instanceof Error ? error.name : "unknown" });
    return { status: 507 as const, headers: {}, body: errorBody(507, STORAGE_FULL_MESSAGE) };
  }
  switch (code) {
    case "NOT_FOUND":
      return { status: 404 as const, headers: {}, body: errorBody(404, "no such route or resource") };
    case "PARSE":
      return { status: 400 as const, headers: {}, body: errorBody(400, NOT_JSON) };
    case "INVALID_COOKIE_SIGNATURE":
      return { status: 400 as const, headers: {}, body: errorBody(400, "cookie: invalid signature") };
  }
  log.error("unhandled error", { ...context, error: error instanceof Error ? error.name : String(code), ...databaseErrorOf(error) });
  return { status: 500 as const, headers: {}, body: errorBody(500, "internal error; retry with backoff") };
}

/** A feature's own error body, made from the app's (status, { type, message } or the spec's own). */
export type ErrorShape = (status: number, body: unknown, info: RequestInfo) => unknown;

/**
 * Error bodies of their own, by path (that path and those under it). By path, not by route: an
 * error may come before any route is found (403 Host, 413, the 503 timeout), and Elysia runs a
 * global error hook before a plugin's own, so a route's onError would never be asked.
 */
export type ErrorShapes = ReadonlyArray<readonly [path: string, shape: ErrorShape]>;

/** The body of an error answered on `path`: the REST one, or the shape its feature gave. */
export function shapedErrorBody(shapes: ErrorShapes, path: string, status: number, body: unknown, info: RequestInfo): unknown {
  for (const [prefix, shape] of shapes) {
    if (path === prefix || (path.startsWith(prefix) && path.charCodeAt(prefix.length) === 0x2f)) return shape(status, body, info);
  }
  return body;
}

/** A path routed under other methods only: 405 naming them (Allow), not 404. */
function methodNotAllowed(method: string, allowed: string[]): HttpError {
  const list = allowed.join(", ");
  return new HttpError(405, `${method} is not allowed on this path; use ${list}`, { allow: list });
}

/**
 * `methodsFor` names the methods a path is routed under (a 404 for one of them is a 405);
 * `shapes` gives the features' own error bodies.
 */
export const errorMapper = (log: Logger, methodsFor?: (path: string) => string[], trusted?: Ranges, shapes: ErrorShapes = []) =>
  new Elysia({ name: "corpus/errors" })
    .use(requestContext)
    .onError({ as: "global" }, ({ code, error: thrown, set, request, path, info: scoped }) => {
      let error: unknown = thrown;
      if (code === "NOT_FOUND" && methodsFor) {
        const allowed = methodsFor(path);
        if (allowed.length) error = methodNotAllowed(request.method, allowed);
      }
      const info = infoOf(request, scoped);
      const mapped = toErrorResponse(code, error, log, {
        request_id: info.request_id,
        client_ip: trusted ? info.clientBehind(trusted) : info.client_ip,
      });
      info.failed(mapped.status);
      set.status = mapped.status;
      Object.assign(set.headers, mapped.headers);
      return shapedErrorBody(shapes, path, mapped.status, mapped.body, info);
    });
