// JSON-RPC 2.0 and the MCP revisions /mcp speaks (second document parts 2, 7, 9; D21, D28).
// The message types are the official SDK's (inferred from @modelcontextprotocol/core's wire
// schemas), so what corpus writes by hand cannot drift from the specification. Types only: the
// SDK itself is loaded with the first /mcp request (./engine.ts).
import type { JSONRPCErrorResponse, JSONRPCRequest, RequestId } from "@modelcontextprotocol/server";

export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** The stateless revision (D28): `server/discover`, a `_meta` envelope on every request, no session. */
export const MODERN_REVISIONS = ["2026-07-28"] as const;
/** The second document's own protocol versions, answered with `1.0` (D21). */
export const SEED_VERSIONS = ["1.0", "1.0.0"] as const;
export const SEED_VERSION = "1.0";

export const isSeedVersion = (v: unknown): boolean => v === "1.0" || v === "1.0.0";

/** A version a client may state in the MCP-Protocol-Version header; `legacy`: the revisions negotiated with `initialize` (the SDK's list). */
export const isSupportedVersion = (v: string, legacy: readonly string[]): boolean =>
  isSeedVersion(v) || legacy.includes(v) || (MODERN_REVISIONS as readonly string[]).includes(v);

/** The most messages one JSON-RPC batch may hold (issue 13 item 10): each is work, and each costs a token of the per-IP bucket. */
export const MAX_BATCH = 32;

/** Revisions from 2025-06-18 on (2026-07-28 included) forbid JSON-RPC batches. */
export const allowsBatches = (version: string | undefined): boolean =>
  version === undefined || isSeedVersion(version) || version < "2025-06-18";

export type { JSONRPCRequest, RequestId };

export const rpcError = (id: RequestId | null, code: number, message: string, data?: unknown): JSONRPCErrorResponse =>
  ({ jsonrpc: "2.0", id, error: { code, message, ...(data === undefined ? {} : { data }) } }) as JSONRPCErrorResponse;

/** The id of a single message, when it can be read (JSON-RPC: null only when it cannot). */
export function readableId(body: unknown): RequestId | null {
  if (body === null || typeof body !== "object" || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/** A message that is a well-formed request or notification, or why it is not. */
export function checkMessage(m: unknown): { ok: true; message: JSONRPCRequest } | { ok: false; id: RequestId | null; reason: string } {
  if (m === null || typeof m !== "object" || Array.isArray(m))
    return { ok: false, id: null, reason: "a JSON-RPC message must be an object" };
  const o = m as Record<string, unknown>;
  const id = readableId(o);
  if (o.jsonrpc !== "2.0") return { ok: false, id, reason: 'jsonrpc must be "2.0"' };
  if ("id" in o && o.id !== null && id === null) return { ok: false, id: null, reason: "id must be a string or a number" };
  if (typeof o.method !== "string" || o.method === "") return { ok: false, id, reason: "method must be a non-empty string" };
  if (o.params !== undefined && (o.params === null || typeof o.params !== "object" || Array.isArray(o.params)))
    return { ok: false, id, reason: "params must be an object" };
  return { ok: true, message: o as unknown as JSONRPCRequest };
}

/** A notification carries no id: it gets no answer. */
export const isNotification = (m: JSONRPCRequest): boolean => (m as { id?: unknown }).id === undefined;

/** A response from the client (result or error, no method): it needs no answer. */
export function isClientResponse(m: unknown): boolean {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return false;
  return !("method" in m) && ("result" in m || "error" in m);
}
