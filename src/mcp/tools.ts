// The tools of /mcp (second document part 2; D22): corpus_search runs the same pipeline as
// POST /v1/query (and is archived, and counted against the user's query limit, the same way);
// open_connectors answers with a summary and the connector widget.
import { archiveAnswer } from "../archive/answer";
import type { Archive } from "../archive/store";
import type { AuthService } from "../auth/service";
import type { Scope } from "../auth/scopes";
import { panelClaims } from "../auth/tokens";
import type { Principal } from "../auth/verifier";
import type { ConnectorRegistry } from "../connectors/registry";
import { newId } from "../conversations/store";
import type { RateLimiter } from "../limits/rate-limit";
import type { QueryService } from "../retrieval/search";
import { MAX_RESULTS, QUERY_MAX_LENGTH, WIDGET_MIME, WIDGET_URI } from "./tool-definitions";
import { connectorsWidget, PANEL_META, type PanelAccess } from "./widget";

export const MESSAGES = {
  emptyQuery: "Query cannot be empty",
  queryTooLong: "Query length exceeds maximum",
  toolNotFound: "Tool not found",
  unauthorized: "Unauthorized",
  rateLimited: "Rate limit exceeded",
} as const;

export interface ToolServices {
  query: QueryService;
  archive: Archive;
  connectors: ConnectorRegistry;
  auth: AuthService;
  limiter: RateLimiter;
}

export interface Caller {
  user: string;
  scopes: ReadonlySet<string>;
  /** The verified token, when the caller has one (not with CORPUS_AUTH_DISABLED). */
  principal?: Principal;
}

export type ToolResult = {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
};

const toolError = (label: string, reason: string): ToolResult => ({ content: [{ type: "text", text: `${label}: ${reason}` }], isError: true });

export async function corpusSearch(s: ToolServices, caller: Caller, args: Record<string, unknown>): Promise<ToolResult> {
  if (typeof args.query !== "string") return toolError("Invalid arguments", `${MESSAGES.emptyQuery} (query must be a string)`);
  const query = args.query.trim();
  if (!query) return toolError("Invalid arguments", MESSAGES.emptyQuery);
  if (query.length > QUERY_MAX_LENGTH) return toolError("Invalid arguments", `${MESSAGES.queryTooLong} of ${QUERY_MAX_LENGTH} characters`);
  const max = args.maxResults ?? MAX_RESULTS.default;
  if (typeof max !== "number" || !Number.isInteger(max) || max < MAX_RESULTS.minimum || max > MAX_RESULTS.maximum) {
    return toolError("Invalid arguments", `maxResults must be an integer from ${MAX_RESULTS.minimum} to ${MAX_RESULTS.maximum}`);
  }
  const unknown = Object.keys(args).filter((k) => k !== "query" && k !== "maxResults");
  if (unknown.length) return toolError("Invalid arguments", `unknown argument ${unknown.join(", ")}`);
  // The same per-user windows as POST /v1/query (D16): a search is a search, however it comes.
  const decision = s.limiter.hit(caller.user, "query");
  if (!decision.allowed) return toolError(MESSAGES.rateLimited, `the query limit is reached; retry after ${decision.retryAfter} s`);

  const outcome = await s.query.run({ user: caller.user, question: query, perConnector: max });
  const chosen = outcome.chunks.slice(0, max);
  const queryId = newId("qry_");
  // Not for a user deleted while the search ran (D25): checked in the same step as the write.
  if (caller.principal && s.auth.revoked(caller.principal)) return toolError(MESSAGES.unauthorized, "token has been revoked");
  archiveAnswer(s.archive, caller.user, queryId, query, chosen.map((c) => ({ c, chunkId: newId("") })));
  const results = chosen.map((c) => ({
    title: c.record.title,
    source: `${c.connectorLabel} · ${c.record.path}`,
    source_url: c.record.source_url,
    date: c.record.date,
    snippet: c.text.length > 500 ? `${c.text.slice(0, 497)}...` : c.text,
    score: c.score,
    connector: c.connectorId,
  }));
  const lines = results.length
    ? results.map((r, i) => `${i + 1}. ${r.title}\n   Source: ${r.source} (${r.source_url})\n   Date: ${r.date ?? "unknown"}\n   ${r.snippet.replace(/\s+/g, " ")}`)
    : ["No results."];
  const text = [`Results for "${query}":`, ...lines, ...outcome.notes.map((n) => `Note: ${n}`)].join("\n");
  return { content: [{ type: "text", text }], structuredContent: { query, results, notes: outcome.notes } };
}

const PANEL_TOKEN_SECONDS = 900;
const MIN_PANEL_TOKEN_SECONDS = 60;
class PanelRefused extends Error {}

/**
 * The panel's access: a token for the caller's connector scopes, tied to the caller's own token
 * (revoked with it, never outliving it) and usable only on the connector routes (PANEL_ROUTES),
 * so it can neither open a panel of its own nor delete the user.
 */
async function panelAccess(s: ToolServices, caller: Caller, apiBase: string, scopes: Scope[]): Promise<PanelAccess | ToolResult> {
  const canWrite = scopes.includes("connectors:write");
  // Without a token (CORPUS_AUTH_DISABLED) there is nothing to derive one from: read-only.
  if (!caller.principal) return { apiBase, canWrite: false };
  const parent = caller.principal;
  const left = s.auth.secondsLeft(parent);
  if (left < MIN_PANEL_TOKEN_SECONDS) return toolError(MESSAGES.unauthorized, "your token expires within a minute: sign in again to open the panel");
  try {
    const issued = await s.auth.issuer.issue(
      caller.user,
      scopes,
      Math.min(PANEL_TOKEN_SECONDS, left),
      () => {
        // Not for a user deleted (or a token revoked) while the panel was being prepared (D25).
        if (s.auth.revoked(parent)) throw new PanelRefused();
      },
      panelClaims(parent.jti),
    );
    return { apiBase, token: issued.token, expiresAt: issued.expiresAt, canWrite };
  } catch (error) {
    if (error instanceof PanelRefused) return toolError(MESSAGES.unauthorized, "token has been revoked");
    throw error;
  }
}

export async function openConnectors(s: ToolServices, caller: Caller, apiBase: string): Promise<ToolResult> {
  const connectors = await s.connectors.list(caller.user);
  const scopes = (["connectors:read", "connectors:write"] as Scope[]).filter((x) => caller.scopes.has(x));
  const access = await panelAccess(s, caller, apiBase, scopes);
  if ("content" in access) return access;
  const summary = connectors.length
    ? connectors.map((c) => `- ${c.label} (${c.id}, ${c.kind}): ${c.status}${c.reason ? ` (${c.reason})` : ""}${c.records !== undefined ? `, ${c.records} records` : ""}`).join("\n")
    : "No connectors yet.";
  return {
    // What the model reads: the summary and the (static) page; never the token.
    content: [
      { type: "text", text: `Connectors (${connectors.length}):\n${summary}\nThe connector panel lets you add, configure and remove them.` },
      { type: "resource", resource: { uri: WIDGET_URI, mimeType: WIDGET_MIME.mcpApp, text: connectorsWidget() } },
    ],
    structuredContent: { connectors },
    // For the page only: hosts hand _meta to it and keep it from the model.
    _meta: { ui: { resourceUri: WIDGET_URI }, "openai/outputTemplate": WIDGET_URI, [PANEL_META]: access },
  };
}

/** The page for resources/read, with the one origin it may call declared for the host's CSP. */
export function widgetResource(html: string, apiBase: string) {
  const origin = new URL(apiBase).origin;
  return {
    contents: [
      { uri: WIDGET_URI, mimeType: WIDGET_MIME.mcpApp, text: html, _meta: { ui: { csp: { connectDomains: [origin] } } } },
      { uri: WIDGET_URI, mimeType: WIDGET_MIME.appsSdk, text: html, _meta: { "openai/widgetCSP": { connect_domains: [origin], resource_domains: [] } } },
    ],
  };
}
