// JSON-RPC 2.0 and the MCP revisions /mcp speaks (second document parts 2, 7, 9; D21).
export const JSONRPC = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
} as const;

/** MCP revisions, newest first. */
export const MCP_REVISIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"] as const;
/** The second document's own protocol version. */
export const LEGACY_VERSION = "1.0";

/** D21: 1.0 / 1.0.0 -> 1.0; a known revision -> itself; anything else -> the newest. */
export function negotiate(requested: unknown): string {
  if (requested === "1.0" || requested === "1.0.0") return LEGACY_VERSION;
  if (typeof requested === "string" && (MCP_REVISIONS as readonly string[]).includes(requested)) return requested;
  return MCP_REVISIONS[0];
}

/** A version a client may state in the MCP-Protocol-Version header. */
export const isSupportedVersion = (v: string) => v === LEGACY_VERSION || v === "1.0.0" || (MCP_REVISIONS as readonly string[]).includes(v);

/** The most messages one JSON-RPC batch may hold (issue 13 item 10): each is work, and each costs a token of the per-IP bucket. */
export const MAX_BATCH = 32;

/** Revisions from 2025-06-18 on forbid JSON-RPC batches. */
export const allowsBatches = (version: string | undefined) => version === undefined || version === LEGACY_VERSION || version < "2025-06-18";

export type JsonRpcId = string | number | null;

export interface JsonRpcRequest {
  jsonrpc: "2.0";
  id?: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

export const rpcError = (id: JsonRpcId, code: number, message: string, data?: unknown) => ({
  jsonrpc: "2.0" as const,
  id,
  error: { code, message, ...(data === undefined ? {} : { data }) },
});

export const rpcResult = (id: JsonRpcId, result: unknown) => ({ jsonrpc: "2.0" as const, id, result });

/** A message that is a well-formed request or notification, or why it is not. */
export function checkMessage(m: unknown): { ok: true; message: JsonRpcRequest } | { ok: false; id: JsonRpcId; reason: string } {
  if (m === null || typeof m !== "object" || Array.isArray(m)) return { ok: false, id: null, reason: "a JSON-RPC message must be an object" };
  const o = m as Record<string, unknown>;
  const id = typeof o.id === "string" || typeof o.id === "number" ? o.id : null;
  if (o.jsonrpc !== "2.0") return { ok: false, id, reason: 'jsonrpc must be "2.0"' };
  if ("id" in o && o.id !== null && typeof o.id !== "string" && typeof o.id !== "number") return { ok: false, id: null, reason: "id must be a string or a number" };
  if (typeof o.method !== "string" || o.method === "") return { ok: false, id, reason: "method must be a non-empty string" };
  if (o.params !== undefined && (o.params === null || typeof o.params !== "object" || Array.isArray(o.params))) return { ok: false, id, reason: "params must be an object" };
  return { ok: true, message: o as unknown as JsonRpcRequest };
}
