// The MCP server of one request (D21, D22, D28), built by the official SDK's McpServer from the
// tool records: both wires (2026-07-28 through createMcpHandler, 2025 through the legacy leg)
// are served by a fresh instance from this one factory, so they cannot drift apart. It lists
// only the tools the caller's scopes allow, which is why tools/list is cached privately.
import { registerAppResource, registerAppTool } from "@modelcontextprotocol/ext-apps/server";
import { type CallToolResult, McpServer, ResourceNotFoundError, ResourceTemplate } from "@modelcontextprotocol/server";
import { DOCUMENT_NOT_FOUND, DOCUMENT_URI_PREFIX, openDocument } from "../documents/open";
import type { Logger } from "../log";
import { isStorageError, STORAGE_FULL_MESSAGE } from "../store/storage-errors";
import { SERVICE_NAME, SERVICE_VERSION } from "../version";
import { panelUiMeta, readPanel, WIDGET_URI } from "./panel-resource";
import { type AnyTool, MESSAGES, mayUse, standardSchema, type ToolContext, toolError } from "./tool-record";
import { TOOLS } from "./tools";
import { fetchDocument } from "./tools/fetch";

export const INSTRUCTIONS =
  "Search the user's connected mail, documents and business data with corpus_search (or search, then fetch to open a result whole); manage sources with open_connectors.";

export interface ServerContext extends ToolContext {
  log: Logger;
  /** For the log line of a tool that failed. */
  requestId: string;
}

/**
 * Cache hints of the 2026-07-28 results. tools/list depends on the caller's scopes and the
 * panel's CSP on the address it was asked at: private, each client its own. server/discover is
 * the same for everyone. No TTL: a client asks again rather than keep a list a new token changes.
 */
const CACHE_HINTS = {
  "tools/list": { cacheScope: "private", ttlMs: 0 },
  "resources/list": { cacheScope: "private", ttlMs: 0 },
  "resources/templates/list": { cacheScope: "private", ttlMs: 0 },
  "resources/read": { cacheScope: "private", ttlMs: 0 },
  "prompts/list": { cacheScope: "public", ttlMs: 0 },
  "server/discover": { cacheScope: "public", ttlMs: 0 },
} as const;

async function runSafely(tool: AnyTool, args: unknown, ctx: ServerContext): Promise<CallToolResult> {
  try {
    return await tool.run(args as never, ctx);
  } catch (error) {
    // D29: the same words as the REST 507.
    if (isStorageError(error)) return toolError(MESSAGES.insufficientStorage, STORAGE_FULL_MESSAGE);
    // The SDK would put the error's own text in the result; it may name paths or hosts.
    ctx.log.error("tool failed", {
      request_id: ctx.requestId,
      tool: tool.definition.name,
      error: error instanceof Error ? error.name : "unknown",
    });
    return toolError(MESSAGES.internal, `${tool.definition.name} failed; the server log has the details under request id ${ctx.requestId}`);
  }
}

/** What registerTool takes of a record: the same for every request, so made once. */
function configOf(tool: AnyTool) {
  const d = tool.definition;
  return {
    title: d.title,
    description: d.description,
    inputSchema: standardSchema(d.inputSchema, { normalize: tool.normalize, messages: tool.messages }),
    ...(d.outputSchema ? { outputSchema: standardSchema(d.outputSchema) } : {}),
    annotations: d.annotations,
  };
}
const CONFIGS = new Map(TOOLS.map((t) => [t, configOf(t)]));

function register(server: McpServer, tool: AnyTool, ctx: ServerContext): void {
  const d = tool.definition;
  const config = CONFIGS.get(tool) ?? configOf(tool);
  const run = (args: unknown) => runSafely(tool, args, ctx);
  // A tool that opens a page is an MCP App tool (ext-apps): its _meta names the page.
  if (d._meta && "ui" in d._meta)
    registerAppTool(server, d.name, { ...config, _meta: d._meta as Parameters<typeof registerAppTool>[2]["_meta"] }, run);
  else server.registerTool(d.name, { ...config, ...(d._meta ? { _meta: d._meta } : {}) }, run);
}

/** A fresh server for one request of `ctx.caller`. */
export function mcpServerFor(ctx: ServerContext): McpServer {
  const server = new McpServer(
    { name: SERVICE_NAME, version: SERVICE_VERSION },
    // No prompts, but an empty list of them rather than an unknown method: 2026-07-28 clients
    // (and the conformance suite's caching checks) ask every list for its cache hints.
    {
      capabilities: { tools: { listChanged: false }, resources: { listChanged: false }, prompts: { listChanged: false } },
      instructions: INSTRUCTIONS,
      cacheHints: CACHE_HINTS,
    },
  );
  for (const tool of TOOLS) if (mayUse(ctx.caller, tool)) register(server, tool, ctx);
  // Listed to everyone (a static page); reading it needs the panel's scope (routes.ts).
  registerAppResource(
    server,
    "connectors",
    WIDGET_URI,
    {
      title: "Connectors",
      description: "The connector panel: the user's connectors with their status; add, configure and remove them.",
      _meta: { ui: panelUiMeta(ctx.apiBase) },
    },
    async () => readPanel(ctx.apiBase),
  );
  // D36: what search and corpus_search cite, opened as fetch opens it (2025-06-18 and later clients follow resource_link items here).
  if (mayUse(ctx.caller, fetchDocument))
    server.registerResource(
      "document",
      new ResourceTemplate(`${DOCUMENT_URI_PREFIX}{id}`, { list: undefined }),
      {
        title: "A cited document",
        description: "A record a search returned, whole, exactly as it was ranked; the user's own only.",
        mimeType: "text/plain",
      },
      async (uri, variables) => {
        const id = typeof variables.id === "string" ? variables.id : "";
        const opened = await openDocument(ctx.services.archive, ctx.caller.user, id);
        if (!opened) throw new ResourceNotFoundError(uri.href, DOCUMENT_NOT_FOUND);
        return { contents: [{ uri: uri.href, mimeType: "text/plain", text: opened.document.text }] };
      },
    );
  return server;
}
