// POST /mcp: JSON-RPC 2.0 over the Model Context Protocol's Streamable HTTP transport
// (second document; D6, D21, D22). Answers are JSON (no stream is needed: every method
// answers at once); GET /mcp is 405 since no server-initiated stream is offered. Host and
// Origin are checked for every route before this (http/host-check). A batch costs one token
// of the per-IP bucket per message and holds at most MAX_BATCH of them (issue 13 item 10).
import { Elysia } from "elysia";
import type { AuthService } from "../auth/service";
import { AuthFailure } from "../auth/service";
import { REQUIRED_SCOPE } from "../auth/scopes";
import { ANONYMOUS_USER } from "../auth/subjects";
import type { Principal } from "../auth/verifier";
import type { Config } from "../config";
import { HttpError } from "../http/errors";
import { MAX_JSON_DEPTH, nestsDeeperThan, TOO_DEEP_MESSAGE } from "../http/json-body";
import { requestInfo } from "../http/request-context";
import { parseRanges } from "../limits/client-ip";
import { chargeIp, ipLimit } from "../limits/ip-limit";
import type { TokenBuckets } from "../limits/token-bucket";
import type { Logger } from "../log";
import { SERVICE_NAME, SERVICE_VERSION } from "../version";
import { allowsBatches, checkMessage, isSupportedVersion, JSONRPC, MAX_BATCH, negotiate, rpcError, rpcResult, type JsonRpcId, type JsonRpcRequest } from "./protocol";
import { McpSessions } from "./sessions";
import { toolDefinitionsJson, WIDGET_MIME, WIDGET_URI } from "./tool-definitions";
import { corpusSearch, MESSAGES, openConnectors, widgetResource, type Caller, type ToolServices } from "./tools";
import { connectorsWidget } from "./widget";

export interface McpServices extends ToolServices {
  config: Config;
  buckets: TokenBuckets;
  log: Logger;
  now?: () => number;
}

export const PARSE_ERROR_MESSAGE = "Parse error: the body is not JSON";
const JSON_HEADERS = { "content-type": "application/json" };
const ANONYMOUS: Caller = { user: ANONYMOUS_USER, scopes: new Set(["corpus:search", "corpus:read", "connectors:read", "connectors:write"]) };

class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export const mcpRoutes = (s: McpServices) => {
  const sessions = new McpSessions(s.now);
  const log = s.log.child("mcp");
  const auth: AuthService = s.auth;
  const trusted = parseRanges(s.config.CORPUS_TRUSTED_PROXIES);

  const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    new Response(body === undefined ? null : JSON.stringify(body), { status, headers: body === undefined ? headers : { ...JSON_HEADERS, ...headers } });

  async function caller(request: Request): Promise<Caller> {
    if (s.config.CORPUS_AUTH_DISABLED) return ANONYMOUS;
    try {
      // A connector panel's token is refused here: it cannot open a panel (mint) of its own.
      const p: Principal = auth.confine(await auth.authenticate(request.headers.get("authorization"), null), "POST /mcp");
      return { user: p.user, scopes: p.scopes, principal: p };
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      const message = error.status === 401 ? `${MESSAGES.unauthorized}: ${error.message.replace(/^Unauthorized: /, "")}` : error.message;
      throw new HttpError(error.status, error.status === 401 ? MESSAGES.unauthorized : error.message, { "www-authenticate": error.challenge }, rpcError(null, JSONRPC.INVALID_REQUEST, message));
    }
  }

  function requireScope(c: Caller, route: keyof typeof REQUIRED_SCOPE, id: JsonRpcId): void {
    if (s.config.CORPUS_AUTH_DISABLED) return;
    try {
      auth.authorize({ user: c.user, scopes: c.scopes, expiresAt: 0 }, REQUIRED_SCOPE[route]);
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      throw new HttpError(403, error.message, { "www-authenticate": error.challenge }, rpcError(id, JSONRPC.INVALID_REQUEST, error.message));
    }
  }

  async function dispatch(m: JsonRpcRequest, c: Caller, request: Request, newSession: (v: string) => string | undefined): Promise<unknown> {
    const params = m.params ?? {};
    switch (m.method) {
      case "initialize": {
        const protocolVersion = negotiate(params.protocolVersion);
        const sessionId = newSession(protocolVersion);
        return {
          result: {
            protocolVersion,
            serverInfo: { name: SERVICE_NAME, version: SERVICE_VERSION },
            capabilities: { tools: { listChanged: false }, resources: { subscribe: false, listChanged: false } },
            instructions: "Search the user's connected mail, documents and business data with corpus_search; manage sources with open_connectors.",
          },
          sessionId,
        };
      }
      case "ping":
        return { result: {} };
      case "tools/list":
        return { result: { tools: toolDefinitionsJson() } };
      case "tools/call": {
        const name = params.name;
        const args = (params.arguments ?? {}) as Record<string, unknown>;
        if (typeof name !== "string") throw new RpcFailure(JSONRPC.INVALID_PARAMS, "params.name must be the tool's name");
        if (args === null || typeof args !== "object" || Array.isArray(args)) throw new RpcFailure(JSONRPC.INVALID_PARAMS, "params.arguments must be an object");
        requestInfo(request).tool = name;
        if (name === "corpus_search") {
          requireScope(c, "tool corpus_search", m.id ?? null);
          return { result: await corpusSearch(s, c, args) };
        }
        if (name === "open_connectors") {
          requireScope(c, "tool open_connectors", m.id ?? null);
          return { result: await openConnectors(s, c, apiBase(request)) };
        }
        throw new RpcFailure(JSONRPC.INVALID_PARAMS, MESSAGES.toolNotFound);
      }
      case "resources/list":
        return { result: { resources: [{ uri: WIDGET_URI, name: "connectors", title: "Connectors", description: "The connector panel", mimeType: WIDGET_MIME.mcpApp }] } };
      case "resources/templates/list":
        return { result: { resourceTemplates: [] } };
      case "resources/read": {
        if (params.uri !== WIDGET_URI) throw new RpcFailure(JSONRPC.INVALID_PARAMS, `no resource ${String(params.uri)}`);
        requireScope(c, "tool open_connectors", m.id ?? null);
        // The template alone, the same for everyone: the data and the token come with the tool result.
        return { result: widgetResource(connectorsWidget(), apiBase(request)) };
      }
      default:
        if (m.method.startsWith("notifications/")) return { result: undefined };
        throw new RpcFailure(JSONRPC.METHOD_NOT_FOUND, `Method not found: ${m.method}`);
    }
  }

  function apiBase(request: Request): string {
    const url = new URL(request.url);
    return s.config.CORPUS_OAUTH_RESOURCE_URL ? s.config.resourceUrl : `${url.protocol}//${request.headers.get("host") ?? url.host}`;
  }

  return new Elysia({ name: "corpus/mcp" })
    .use(ipLimit(s.buckets, s.config.CORPUS_TRUSTED_PROXIES))
    .post(
      "/mcp",
      async ({ request, body, set }) => {
        const accept = request.headers.get("accept");
        if (accept && !/application\/json|\*\/\*|application\/\*/.test(accept)) {
          return reply(406, rpcError(null, JSONRPC.INVALID_REQUEST, "Not Acceptable: the client must accept application/json"));
        }
        const c = await caller(request);
        const headerVersion = request.headers.get("mcp-protocol-version") ?? undefined;
        if (headerVersion !== undefined && !isSupportedVersion(headerVersion)) {
          return reply(400, rpcError(null, JSONRPC.INVALID_REQUEST, `Unsupported MCP-Protocol-Version: ${headerVersion}`));
        }
        const sessionHeader = request.headers.get("mcp-session-id");
        const session = sessionHeader ? sessions.use(sessionHeader, c.user) : undefined;
        if (sessionHeader && !session) {
          return reply(404, rpcError(null, JSONRPC.INVALID_REQUEST, "Session not found: initialize again"));
        }
        const version = headerVersion ?? session?.version;

        // Text as the route asks; already parsed when the body came in chunks (http/body-limit).
        let parsed: unknown = body;
        if (typeof body === "string" || body === undefined || body === null) {
          const text = String(body ?? "");
          if (nestsDeeperThan(text, MAX_JSON_DEPTH)) return reply(400, rpcError(null, JSONRPC.INVALID_REQUEST, `Invalid Request: ${TOO_DEEP_MESSAGE}`));
          try {
            parsed = JSON.parse(text);
          } catch {
            return reply(400, rpcError(null, JSONRPC.PARSE_ERROR, PARSE_ERROR_MESSAGE));
          }
        }
        const batch = Array.isArray(parsed);
        if (batch && (!allowsBatches(version) || (parsed as unknown[]).length === 0)) {
          return reply(400, rpcError(null, JSONRPC.INVALID_REQUEST, (parsed as unknown[]).length === 0 ? "Invalid Request: empty batch" : `Invalid Request: batches are not supported in protocol version ${version}`));
        }
        const messages = batch ? (parsed as unknown[]) : [parsed];
        if (messages.length > MAX_BATCH) {
          return reply(400, rpcError(null, JSONRPC.INVALID_REQUEST, `Invalid Request: a batch holds at most ${MAX_BATCH} messages; this one has ${messages.length}`));
        }
        // The ipLimit stage took one token for the request; each further message takes its own.
        if (messages.length > 1) chargeIp(s.buckets, trusted, request, set.headers, messages.length - 1);
        let issuedSession: string | undefined;
        const newSession = (v: string) => {
          if (batch) return undefined;
          issuedSession = sessions.open(c.user, v);
          return issuedSession;
        };
        const responses: unknown[] = [];
        for (const raw of messages) {
          const checked = checkMessage(raw);
          if (!checked.ok) {
            // Responses from the client (result or error, no method) need no answer.
            const o = raw as Record<string, unknown> | null;
            if (o && typeof o === "object" && !("method" in o) && ("result" in o || "error" in o)) continue;
            responses.push(rpcError(checked.id, JSONRPC.INVALID_REQUEST, `Invalid Request: ${checked.reason}`));
            continue;
          }
          const m = checked.message;
          const isNotification = !("id" in m) || m.id === undefined;
          try {
            const out = (await dispatch(m, c, request, newSession)) as { result: unknown };
            if (!isNotification) responses.push(rpcResult(m.id ?? null, out.result));
          } catch (error) {
            if (error instanceof HttpError) throw error;
            if (isNotification) continue;
            if (error instanceof RpcFailure) responses.push(rpcError(m.id ?? null, error.code, error.message));
            else {
              log.error("tool failed", { request_id: requestInfo(request).request_id, tool: requestInfo(request).tool ?? null, method: m.method });
              responses.push(rpcError(m.id ?? null, JSONRPC.INTERNAL_ERROR, "Internal error"));
            }
          }
        }
        const headers: Record<string, string> = issuedSession ? { "mcp-session-id": issuedSession } : {};
        if (responses.length === 0) return reply(202, undefined, headers);
        return reply(200, batch ? responses : responses[0], headers);
      },
      { ipLimit: true, parse: "text", detail: { tags: ["mcp"], summary: "JSON-RPC 2.0 endpoint of the Model Context Protocol (Streamable HTTP)", security: [{ bearer: [] }] } },
    )
    .get("/mcp", () => reply(405, rpcError(null, JSONRPC.INVALID_REQUEST, "Method Not Allowed: this server offers no event stream; POST JSON-RPC messages"), { allow: "POST, DELETE" }), {
      detail: { tags: ["mcp"], summary: "No server-initiated stream: 405" },
    })
    .delete(
      "/mcp",
      async ({ request }) => {
        // Only its own user ends a session; another's is as unknown as a made-up id.
        const c = await caller(request);
        const id = request.headers.get("mcp-session-id");
        if (!id || !sessions.close(id, c.user)) return reply(404, rpcError(null, JSONRPC.INVALID_REQUEST, "Session not found"));
        return new Response(null, { status: 204 });
      },
      { detail: { tags: ["mcp"], summary: "End an MCP session (its own user's token)", security: [{ bearer: [] }] } },
    );
};
