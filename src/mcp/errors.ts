// The error handler of /mcp: its clients read JSON-RPC error objects, so every error answered
// there, whichever stage refused (D17: 413 there too; a 403 Host, a 503 timeout), is one. The
// app's error mapper asks it for the body of any error on this path (http/errors.ts ErrorShapes).
import { type ErrorShape, NOT_JSON } from "../http/errors";

export const MCP_PATH = "/mcp";

/** Whether a path is the MCP endpoint's. */
export const isMcpPath = (path: string) => path === MCP_PATH || path.startsWith(`${MCP_PATH}/`);

/**
 * A JSON-RPC error object, unless the body is one already or the spec gives its own (429). It
 * carries the request's id when /mcp could read one (JSON-RPC: null only if not).
 */
export function jsonRpcShape(status: number, body: unknown, id: string | number | null = null): unknown {
  if (body && typeof body === "object" && ("jsonrpc" in body || "retry_after" in body)) return body;
  const message = (body as { message?: string }).message ?? "error";
  if (message === NOT_JSON) return { jsonrpc: "2.0", id: null, error: { code: -32700, message: "Parse error: the body is not JSON" } };
  return { jsonrpc: "2.0", id, error: { code: status >= 500 ? -32603 : -32600, message } };
}

/** The body of an error on /mcp, answering the message's id when /mcp had read it. */
export const mcpErrorBody: ErrorShape = (status, body, info) => jsonRpcShape(status, body, info.rpcId ?? null);
