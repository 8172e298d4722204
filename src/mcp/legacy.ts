// The 2025-era leg of /mcp (revisions 2024-11-05 to 2025-11-25 and the seed's 1.0; D21): one
// message at a time through the SDK's own building blocks, a fresh McpServer from the shared
// factory on its stateless Streamable HTTP transport, answering JSON. (The SDK's built-in
// fallback answers in SSE and cannot keep corpus's per-user sessions or the seed's version.)
// The thin shim around it: `initialize` params a seed client may leave out are filled in, and
// the seed's `1.0` is answered with `1.0`, which the SDK does not know.
import {
  type AuthInfo,
  type JSONRPCMessage,
  LATEST_PROTOCOL_VERSION,
  type McpServer,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";
import { isSeedVersion, type JSONRPCRequest, readableId, SEED_VERSION } from "./protocol";

/** What the SDK answered one message, as JSON text (nothing for a notification), and parsed where corpus reads it. */
export interface LegacyAnswer {
  status: number;
  text?: string;
  /** Present for `initialize` (its negotiated version opens the session) and for the transport's own refusals. */
  message?: JSONRPCMessage;
}

/** The headers the SDK's transport reads, as a 2025 client sends them (the seed's 1.0 names no revision it knows). */
function sdkHeaders(request: Request): Headers {
  const headers = new Headers({ "content-type": "application/json", accept: "application/json, text/event-stream" });
  const version = request.headers.get("mcp-protocol-version");
  if (version !== null && !isSeedVersion(version)) headers.set("mcp-protocol-version", version);
  return headers;
}

/**
 * `initialize` as the SDK's schema requires it: the seed's clients send only `protocolVersion`
 * and maybe `clientInfo` (second document part 4); an unknown or missing version asks for the
 * newest (D21).
 */
export function completeInitialize(m: JSONRPCRequest): JSONRPCRequest {
  const p = (m.params ?? {}) as Record<string, unknown>;
  const info = p.clientInfo as { name?: unknown; version?: unknown } | undefined;
  const params = {
    ...p,
    protocolVersion: typeof p.protocolVersion === "string" ? p.protocolVersion : LATEST_PROTOCOL_VERSION,
    capabilities: p.capabilities !== null && typeof p.capabilities === "object" ? p.capabilities : {},
    clientInfo: info && typeof info.name === "string" && typeof info.version === "string" ? info : { name: "unknown", version: "0" },
  };
  return { ...m, params };
}

/** Answers one 2025-era message with `server`, which it closes. */
export async function serveLegacy(
  server: McpServer,
  message: JSONRPCRequest,
  request: Request,
  authInfo: AuthInfo | undefined,
): Promise<LegacyAnswer> {
  const seed =
    message.method === "initialize" && isSeedVersion((message.params as { protocolVersion?: unknown } | undefined)?.protocolVersion);
  const parsedBody = message.method === "initialize" ? completeInitialize(message) : message;
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(new Request(request.url, { method: "POST", headers: sdkHeaders(request) }), {
      parsedBody,
      ...(authInfo ? { authInfo } : {}),
    });
    if (response.status === 202) return { status: 202 };
    // Most answers go out as the SDK wrote them; parsed only where a field must change or be read.
    if (response.status === 200 && message.method !== "initialize") return { status: 200, text: await response.text() };
    const answer = (await response.json()) as JSONRPCMessage & { id?: unknown; result?: { protocolVersion?: string } };
    // The transport's own refusals carry id null; the id was readable (JSON-RPC 2.0 section 5).
    if ("error" in answer && answer.id === null) answer.id = readableId(message) as never;
    if (seed && "result" in answer && answer.result) answer.result.protocolVersion = SEED_VERSION;
    return { status: response.status, text: JSON.stringify(answer), message: answer };
  } finally {
    await transport.close();
    await server.close();
  }
}
