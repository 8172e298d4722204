// open_connectors (second document part 2; D22): a summary for the model and the connector
// panel (an MCP App, ../panel-resource.ts) for the person. It changes nothing by itself: the
// panel does, through the REST control plane, with a short-lived token of its own that the
// result hands to the page in `_meta`, never in what the model reads (issue 13 item 8).
import type { CallToolResult } from "@modelcontextprotocol/server";
import { Type } from "@sinclair/typebox";
import type { Scope } from "../../auth/scopes";
import { TOOL_SCOPE } from "../../auth/scopes";
import { panelClaims } from "../../auth/tokens";
import { ConnectorView } from "../../connectors/model";
import { andThen } from "../../store/shared";
import { PANEL_TOOL_META, WIDGET_MIME, WIDGET_URI } from "../panel-resource";
import { defineTool, MESSAGES, type ToolContext, toolError } from "../tool-record";
import { connectorsWidget, PANEL_META, type PanelAccess } from "../widget";

export const OpenConnectorsInput = Type.Object({}, { additionalProperties: false });

const oneOf = (values: readonly string[]) => Type.Union(values.map((v) => Type.Literal(v)));

/**
 * The connectors as GET /v1/connectors lists them, in plain JSON Schema (the REST model's
 * integers also accept numeric strings, which an MCP client's validator does not know): the
 * fields the model and the panel read, the others allowed as they come.
 */
export const OpenConnectorsOutput = Type.Object({
  connectors: Type.Array(
    Type.Object({
      id: Type.String(),
      kind: Type.String(),
      label: Type.String(),
      owner: oneOf(ConnectorView.properties.owner.enum),
      status: oneOf(ConnectorView.properties.status.enum),
      reason: Type.Optional(Type.String()),
      records: Type.Optional(Type.Integer({ minimum: 0 })),
      progress: Type.Optional(
        Type.Object({
          phase: Type.String(),
          unit: Type.String(),
          done: Type.Integer({ minimum: 0 }),
          total: Type.Integer({ minimum: 0 }),
          rate_per_second: Type.Union([Type.Number({ minimum: 0 }), Type.Null()]),
          eta_seconds: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
          started_at: Type.String(),
        }),
      ),
    }),
  ),
});

const PANEL_TOKEN_SECONDS = 900;
const MIN_PANEL_TOKEN_SECONDS = 60;
class PanelRefused extends Error {}

/**
 * The panel's access: a token for the caller's connector scopes, tied to the caller's own token
 * (revoked with it, never outliving it) and usable only on the connector routes (PANEL_ROUTES),
 * so it can neither open a panel of its own nor delete the user.
 */
async function panelAccess({ services: s, caller, apiBase }: ToolContext, scopes: Scope[]): Promise<PanelAccess | CallToolResult> {
  const canWrite = scopes.includes("connectors:write");
  // Without a token (CORPUS_AUTH_DISABLED) there is nothing to derive one from: read-only.
  if (!caller.principal) return { apiBase, canWrite: false };
  const parent = caller.principal;
  const left = s.auth.secondsLeft(parent);
  if (left < MIN_PANEL_TOKEN_SECONDS)
    return toolError(MESSAGES.unauthorized, "your token expires within a minute: sign in again to open the panel");
  try {
    const issued = await s.auth.issuer.issue(
      caller.user,
      scopes,
      Math.min(PANEL_TOKEN_SECONDS, left),
      // Not for a user deleted (or a token revoked) while the panel was being prepared (D25).
      () =>
        andThen(s.auth.revoked(parent), (revoked) => {
          if (revoked) throw new PanelRefused();
        }),
      panelClaims(parent.jti),
    );
    return { apiBase, token: issued.token, expiresAt: issued.expiresAt, canWrite };
  } catch (error) {
    if (error instanceof PanelRefused) return toolError(MESSAGES.unauthorized, "token has been revoked");
    throw error;
  }
}

export const openConnectors = defineTool({
  definition: {
    name: "open_connectors",
    title: "Open Connectors",
    description: "Open the connector management interface: list the user's connectors and their status, add, configure or remove them.",
    inputSchema: OpenConnectorsInput,
    outputSchema: OpenConnectorsOutput,
    // Opening the panel lists and changes nothing; the person acts in the panel. destructiveHint
    // is stated although readOnlyHint implies it: its default is true for a host that reads it alone.
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: false },
    _meta: PANEL_TOOL_META,
  },
  scope: TOOL_SCOPE.open_connectors,
  async run(_args, ctx) {
    const connectors = await ctx.services.connectors.list(ctx.caller.user);
    const scopes = (["connectors:read", "connectors:write"] as Scope[]).filter((x) => ctx.caller.scopes.has(x));
    const access = await panelAccess(ctx, scopes);
    if ("content" in access) return access;
    const summary = connectors.length
      ? connectors
          .map(
            (c) =>
              `- ${c.label} (${c.id}, ${c.kind}): ${c.status}${c.reason ? ` (${c.reason})` : ""}${c.records !== undefined ? `, ${c.records} records` : ""}`,
          )
          .join("\n")
      : "No connectors yet.";
    return {
      // What the model reads: the summary and the (static) page; never the token.
      content: [
        {
          type: "text",
          text: `Connectors (${connectors.length}):\n${summary}\nThe connector panel lets you add, configure and remove them.`,
        },
        { type: "resource", resource: { uri: WIDGET_URI, mimeType: WIDGET_MIME.mcpApp, text: connectorsWidget() } },
      ],
      structuredContent: { connectors },
      // For the page only: hosts hand _meta to it and keep it from the model.
      _meta: { ui: { resourceUri: WIDGET_URI }, "openai/outputTemplate": WIDGET_URI, [PANEL_META]: access },
    };
  },
});
