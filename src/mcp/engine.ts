// The official SDK's side of /mcp, loaded with the first /mcp request rather than at start (its
// schemas cost tens of milliseconds of start-up CPU in the executable; README, MCP): the
// 2026-07-28 handler, the SDK's own classification of a request's era, the legacy leg, and
// the revisions `initialize` negotiates.
import {
  type AuthInfo,
  createMcpHandler,
  isLegacyRequest,
  type McpRequestContext,
  SUPPORTED_PROTOCOL_VERSIONS,
} from "@modelcontextprotocol/server";
import { type LegacyAnswer, serveLegacy } from "./legacy";
import type { JSONRPCRequest } from "./protocol";
import { mcpServerFor, type ServerContext } from "./server";

export interface EngineOptions {
  /** The context of the server for one request, from what the SDK passes its factory. */
  contextOf: (ctx: McpRequestContext) => ServerContext;
  maxRequestBodySize: number;
  maxSubscriptions: number;
  onerror: (error: Error) => void;
}

export function createEngine(o: EngineOptions) {
  // The modern wire only: 2025-era traffic goes to the legacy leg, routed by the SDK's own predicate.
  const modern = createMcpHandler((ctx) => mcpServerFor(o.contextOf(ctx)), {
    legacy: "reject",
    maxSubscriptions: o.maxSubscriptions,
    maxRequestBodySize: o.maxRequestBodySize,
    onerror: o.onerror,
  });
  return {
    modern,
    /** Whether the SDK would serve this request on the 2025 wire (no `_meta` envelope claim). */
    isLegacy: (request: Request, parsed: unknown) => isLegacyRequest(request, parsed, { maxRequestBodySize: o.maxRequestBodySize }),
    serveLegacy: (ctx: ServerContext, message: JSONRPCRequest, request: Request, authInfo: AuthInfo | undefined): Promise<LegacyAnswer> =>
      serveLegacy(mcpServerFor(ctx), message, request, authInfo),
    /** The revisions negotiated with `initialize`, newest first. */
    legacyRevisions: SUPPORTED_PROTOCOL_VERSIONS as readonly string[],
  };
}

export type Engine = ReturnType<typeof createEngine>;
