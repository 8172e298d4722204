// /mcp: the Model Context Protocol over Streamable HTTP (second document; D6, D21, D22, D28).
// The official SDK serves the protocol: 2026-07-28 (stateless: server/discover, the `_meta`
// envelope, header validation, caching hints) through createMcpHandler, the 2025 revisions and
// the seed's 1.0 through the legacy leg (./legacy.ts), both from one per-request McpServer
// factory (./server.ts); the SDK is loaded with the first /mcp request (./engine.ts). Before either, corpus does what the SDK leaves to its host, in its own
// shapes: the bearer token (D6) and the panel token's refusal, the per-IP bucket (one token per
// message of a batch, at most MAX_BATCH of them), 406 for a client that cannot read JSON, the
// tool's scope (403 insufficient_scope, so a client can step up) and the tool's existence, and
// the 2025 sessions of their own user. Host and Origin are checked for every route before this
// (http/host-check). Every JSON-RPC error carries the request's id when it could be read.
import type { AuthInfo, McpRequestContext } from "@modelcontextprotocol/server";
import { Elysia } from "elysia";
import { SCOPES } from "../auth/scopes";
import { AuthFailure, type AuthService } from "../auth/service";
import { ANONYMOUS_USER } from "../auth/subjects";
import type { Config } from "../config";
import { DOCUMENT_URI_PREFIX } from "../documents/open";
import { HttpError, NOT_JSON } from "../http/errors";
import { parseJsonText } from "../http/json-body";
import { publicUrlOf, reachedHost } from "../http/public-url";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { parseRanges } from "../limits/client-ip";
import { chargeIp, ipLimit } from "../limits/ip-limit";
import type { IpBuckets } from "../limits/token-bucket";
import type { Logger } from "../log";
import type { Engine } from "./engine";
import { MCP_PATH } from "./errors";
import { PANEL_SCOPE, WIDGET_URI } from "./panel-resource";
import {
  allowsBatches,
  checkMessage,
  isClientResponse,
  isNotification,
  isSupportedVersion,
  JSONRPC,
  type JSONRPCRequest,
  MAX_BATCH,
  type RequestId,
  readableId,
  rpcError,
} from "./protocol";
import type { ServerContext } from "./server";
import { type McpSessionStore, McpSessions } from "./sessions";
import { type Caller, MESSAGES, mayUse, type ToolServices } from "./tool-record";
import { toolNamed } from "./tools";
import { fetchDocument } from "./tools/fetch";

export interface McpServices extends ToolServices {
  config: Config;
  buckets: IpBuckets;
  log: Logger;
  now?: () => number;
  /** Where MCP sessions are kept (services.ts: shared when CORPUS_DATABASE_URL is set); this node's memory when not given. */
  mcpSessions?: McpSessionStore;
}

export const PARSE_ERROR_MESSAGE = "Parse error: the body is not JSON";
/** Open `subscriptions/listen` streams at once (2026-07-28): nothing is ever announced on them, so few are needed. */
export const MAX_SUBSCRIPTIONS = 100;
const JSON_HEADERS = { "content-type": "application/json" };
const ANONYMOUS: Caller = { user: ANONYMOUS_USER, scopes: new Set(SCOPES) };
const CALLER_KEY = "corpus/caller";
const INFO_KEY = "corpus/request-info";

const MCP_SUMMARY =
  "JSON-RPC 2.0 endpoint of the Model Context Protocol (Streamable HTTP; revisions 2026-07-28, 2025-11-25 to 2024-11-05, and 1.0)";

type Parsed = { ok: true; value: unknown } | { ok: false; error: ReturnType<typeof rpcError>; status: number };

/** The body as the route got it: text, or already parsed when it came in chunks (http/body-limit). */
function parse(body: unknown): Parsed {
  if (typeof body !== "string" && body !== undefined && body !== null) return { ok: true, value: body };
  const text = String(body ?? "");
  try {
    return { ok: true, value: parseJsonText(text) };
  } catch (error) {
    // Too deep, or a `__proto__` key anywhere (tool arguments included): the same refusals as REST bodies.
    if (error instanceof HttpError && error.message !== NOT_JSON)
      return { ok: false, status: 400, error: rpcError(null, JSONRPC.INVALID_REQUEST, `Invalid Request: ${error.message}`) };
    return { ok: false, status: 400, error: rpcError(null, JSONRPC.PARSE_ERROR, PARSE_ERROR_MESSAGE) };
  }
}

const reply = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: body === undefined ? headers : { ...JSON_HEADERS, ...headers },
  });

/** The caller as the SDK carries it to the server factory: validated, passed through (never read from headers). */
function authInfoOf(c: Caller, resourceMetadataUrl: string, info: RequestInfo): AuthInfo {
  return {
    token: "",
    clientId: c.user,
    scopes: [...c.scopes],
    ...(c.principal ? { expiresAt: c.principal.expiresAt } : {}),
    resourceMetadataUrl,
    extra: { [CALLER_KEY]: c, [INFO_KEY]: info },
  };
}

function callerOf(info: AuthInfo | undefined): Caller {
  const c = info?.extra?.[CALLER_KEY];
  if (!c) throw new Error("an MCP server was asked for without its caller");
  return c as Caller;
}

/** The request's info, carried through the SDK beside the caller. */
function requestInfoOf(info: AuthInfo | undefined): RequestInfo {
  const r = info?.extra?.[INFO_KEY];
  if (!(r instanceof Object)) throw new Error("an MCP server was asked for without its request");
  return r as RequestInfo;
}

export const mcpRoutes = (s: McpServices) => {
  const sessions = s.mcpSessions ?? new McpSessions(s.now);
  const log = s.log.child("mcp");
  const auth: AuthService = s.auth;
  const trusted = parseRanges(s.config.CORPUS_TRUSTED_PROXIES);
  const resourceMetadataUrl = `${s.config.resourceUrl}/.well-known/oauth-protected-resource`;

  /** Where the connector panel calls the API: the origin the request reached (a validated Host), unless a public URL is configured. */
  function apiBase(request: Request, info: RequestInfo): string {
    const reached = s.config.CORPUS_OAUTH_RESOURCE_URL ? undefined : reachedHost(request);
    return reached ? `${new URL(request.url).protocol}//${reached}` : publicUrlOf(s.config, request, info);
  }

  const contextOf = (caller: Caller, request: Request, info: RequestInfo): ServerContext => ({
    services: s,
    caller,
    apiBase: apiBase(request, info),
    publicUrl: publicUrlOf(s.config, request, info),
    protocolVersion: request.headers.get("mcp-protocol-version") ?? undefined,
    log,
    requestId: info.request_id,
    timedOut: () => info.timedOut,
    rateLimited: () => {
      info.rateLimited = true;
    },
  });
  let loaded: Engine | undefined;
  let loading: Promise<Engine> | undefined;
  const engine = async (): Promise<Engine> =>
    (loaded ??= await (loading ??= import("./engine").then((m) =>
      m.createEngine({
        contextOf: (ctx: McpRequestContext) => contextOf(callerOf(ctx.authInfo), ctx.requestInfo!, requestInfoOf(ctx.authInfo)),
        maxRequestBodySize: s.config.CORPUS_MAX_REQUEST_SIZE,
        maxSubscriptions: MAX_SUBSCRIPTIONS,
        onerror: (error) => log.debug("request refused by the MCP SDK", { error: error.message }),
      }),
    )));

  /** The authenticated caller, their data key made present on this node before any tool seals or opens with it (D33). */
  async function caller(request: Request, id: RequestId | null): Promise<Caller> {
    const c = await authenticated(request, id);
    await s.userKeys.ready(c.user, { create: true });
    return c;
  }

  async function authenticated(request: Request, id: RequestId | null): Promise<Caller> {
    if (s.config.CORPUS_AUTH_DISABLED) return ANONYMOUS;
    try {
      // A connector panel's token is refused here: it cannot open a panel (mint) of its own.
      const p = auth.confine(await auth.authenticate(request.headers.get("authorization"), null), "POST /mcp");
      return { user: p.user, scopes: p.scopes, principal: p };
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      const message = error.status === 401 ? `${MESSAGES.unauthorized}: ${error.message.replace(/^Unauthorized: /, "")}` : error.message;
      throw new HttpError(
        error.status,
        error.status === 401 ? MESSAGES.unauthorized : error.message,
        { "www-authenticate": error.challenge },
        rpcError(id, JSONRPC.INVALID_REQUEST, message),
      );
    }
  }

  /** 403 with the scope to step up to (D5; RFC 6750 insufficient_scope). */
  function requireScope(c: Caller, scope: (typeof SCOPES)[number], id: RequestId | null): void {
    if (s.config.CORPUS_AUTH_DISABLED) return;
    try {
      auth.authorize({ user: c.user, scopes: c.scopes, expiresAt: 0 }, scope);
    } catch (error) {
      if (!(error instanceof AuthFailure)) throw error;
      throw new HttpError(
        403,
        error.message,
        { "www-authenticate": error.challenge },
        rpcError(id, JSONRPC.INVALID_REQUEST, error.message),
      );
    }
  }

  /**
   * What corpus decides before the SDK sees a message: the tool exists (the spec's own words,
   * part 7) and the caller's token allows it, or reading the panel. An answer, or undefined to go on.
   */
  function gate(m: JSONRPCRequest, c: Caller, info: RequestInfo) {
    const id = (m.id ?? null) as RequestId | null;
    const params = (m.params ?? {}) as Record<string, unknown>;
    if (m.method === "tools/call") {
      if (typeof params.name !== "string")
        return rpcError(id, JSONRPC.INVALID_PARAMS, "Invalid params: params.name must be the tool's name");
      const args = params.arguments;
      if (args !== undefined && (args === null || typeof args !== "object" || Array.isArray(args)))
        return rpcError(id, JSONRPC.INVALID_PARAMS, "Invalid params: params.arguments must be an object");
      info.tool = params.name;
      const tool = toolNamed(params.name);
      if (!tool) return rpcError(id, JSONRPC.INVALID_PARAMS, MESSAGES.toolNotFound);
      if (!mayUse(c, tool)) requireScope(c, tool.scope, id);
    }
    if (m.method === "resources/read" && params.uri === WIDGET_URI) requireScope(c, PANEL_SCOPE, id);
    if (m.method === "resources/read" && typeof params.uri === "string" && params.uri.startsWith(DOCUMENT_URI_PREFIX))
      requireScope(c, fetchDocument.scope, id);
    return undefined;
  }

  /** A 2026-07-28 request: one message, answered by the SDK's modern handler. */
  async function serveModern(sdk: Engine, request: Request, info: RequestInfo, value: unknown, c: Caller): Promise<Response> {
    const checked = checkMessage(value);
    if (checked.ok) {
      const refusal = gate(checked.message, c, info);
      if (refusal) return reply(200, refusal);
    }
    return sdk.modern.fetch(request, { authInfo: authInfoOf(c, resourceMetadataUrl, info), parsedBody: value });
  }

  /** 2025-era messages (a batch where the revision allows one), each through the legacy leg. */
  async function serveLegacyMessages(
    sdk: Engine,
    request: Request,
    info: RequestInfo,
    value: unknown,
    c: Caller,
    set: { headers: Record<string, string | number> },
  ): Promise<Response> {
    const id = readableId(value);
    const headerVersion = request.headers.get("mcp-protocol-version") ?? undefined;
    if (headerVersion !== undefined && !isSupportedVersion(headerVersion, sdk.legacyRevisions)) {
      return reply(400, rpcError(id, JSONRPC.INVALID_REQUEST, `Unsupported MCP-Protocol-Version: ${headerVersion}`));
    }
    const sessionHeader = request.headers.get("mcp-session-id");
    const session = sessionHeader ? await sessions.use(sessionHeader, c.user) : undefined;
    if (sessionHeader && !session) return reply(404, rpcError(id, JSONRPC.INVALID_REQUEST, "Session not found: initialize again"));
    const version = headerVersion ?? session?.version;

    const batch = Array.isArray(value);
    const messages = batch ? (value as unknown[]) : [value];
    if (batch && (!allowsBatches(version) || messages.length === 0)) {
      return reply(
        400,
        rpcError(
          null,
          JSONRPC.INVALID_REQUEST,
          messages.length === 0
            ? "Invalid Request: empty batch"
            : `Invalid Request: batches are not supported in protocol version ${version}`,
        ),
      );
    }
    if (messages.length > MAX_BATCH) {
      return reply(
        400,
        rpcError(
          null,
          JSONRPC.INVALID_REQUEST,
          `Invalid Request: a batch holds at most ${MAX_BATCH} messages; this one has ${messages.length}`,
        ),
      );
    }
    // The ipLimit stage took one token for the request; each further message takes its own.
    if (messages.length > 1) await chargeIp(s.buckets, trusted, info, set.headers, messages.length - 1);

    const authInfo = authInfoOf(c, resourceMetadataUrl, info);
    let issuedSession: string | undefined;
    // Answers as JSON text: the SDK's go out as it wrote them.
    const responses: string[] = [];
    const push = (answer: object) => responses.push(JSON.stringify(answer));
    for (const raw of messages) {
      if (isClientResponse(raw)) continue;
      const checked = checkMessage(raw);
      if (!checked.ok) {
        push(rpcError(checked.id, JSONRPC.INVALID_REQUEST, `Invalid Request: ${checked.reason}`));
        continue;
      }
      const m = checked.message;
      const silent = isNotification(m);
      const refusal = gate(m, c, info);
      if (refusal) {
        if (!silent) push(refusal);
        continue;
      }
      try {
        const answer = await sdk.serveLegacy(contextOf(c, request, info), m, request, authInfo);
        if (answer.text === undefined || silent) continue;
        const result = answer.message && "result" in answer.message ? (answer.message.result as { protocolVersion?: string }) : undefined;
        if (m.method === "initialize" && result?.protocolVersion && !batch)
          issuedSession = await sessions.open(c.user, result.protocolVersion);
        responses.push(answer.text);
      } catch (error) {
        if (silent) continue;
        log.error("MCP request failed", {
          request_id: info.request_id,
          tool: info.tool ?? null,
          method: m.method,
          error: error instanceof Error ? error.name : "unknown",
        });
        push(rpcError(m.id ?? null, JSONRPC.INTERNAL_ERROR, MESSAGES.internal));
      }
    }
    const headers: Record<string, string> = issuedSession ? { "mcp-session-id": issuedSession, ...JSON_HEADERS } : JSON_HEADERS;
    if (responses.length === 0) return reply(202, undefined, issuedSession ? { "mcp-session-id": issuedSession } : {});
    return new Response(batch ? `[${responses.join(",")}]` : responses[0], { status: 200, headers });
  }

  return new Elysia({ name: "corpus/mcp" })
    .use(requestContext)
    .use(ipLimit(s.buckets, s.config.CORPUS_TRUSTED_PROXIES))
    .onStop(() => loaded?.modern.close())
    .post(
      MCP_PATH,
      async ({ request, body, set, info: scoped }) => {
        const info = infoOf(request, scoped);
        const parsed = parse(body);
        const id = parsed.ok ? readableId(parsed.value) : null;
        // For the errors answered outside this handler (a timeout, an unexpected failure).
        if (id !== null) info.rpcId = id;
        const accept = request.headers.get("accept");
        if (accept && !/application\/json|\*\/\*|application\/\*/.test(accept)) {
          return reply(406, rpcError(id, JSONRPC.INVALID_REQUEST, "Not Acceptable: the client must accept application/json"));
        }
        const c = await caller(request, id);
        if (!parsed.ok) return reply(parsed.status, parsed.error);
        const sdk = loaded ?? (await engine());
        // The SDK's own classification: a message with the 2026-07-28 envelope (or header) is modern.
        if (!(await sdk.isLegacy(request, parsed.value))) return serveModern(sdk, request, info, parsed.value, c);
        return serveLegacyMessages(sdk, request, info, parsed.value, c, set as { headers: Record<string, string | number> });
      },
      { ipLimit: true, parse: "text", detail: { tags: ["mcp"], summary: MCP_SUMMARY, security: [{ bearer: [] }] } },
    )
    .get(
      MCP_PATH,
      () =>
        reply(
          405,
          rpcError(null, JSONRPC.INVALID_REQUEST, "Method Not Allowed: this server offers no event stream; POST JSON-RPC messages"),
          { allow: "POST, DELETE" },
        ),
      {
        detail: { tags: ["mcp"], summary: "No server-initiated stream: 405 (2026-07-28 clients use subscriptions/listen)" },
      },
    )
    .delete(
      MCP_PATH,
      async ({ request }) => {
        // Only its own user ends a session; another's is as unknown as a made-up id.
        const c = await caller(request, null);
        const id = request.headers.get("mcp-session-id");
        if (!id || !(await sessions.close(id, c.user))) return reply(404, rpcError(null, JSONRPC.INVALID_REQUEST, "Session not found"));
        return new Response(null, { status: 204 });
      },
      { detail: { tags: ["mcp"], summary: "End a 2025 MCP session (its own user's token)", security: [{ bearer: [] }] } },
    );
};
