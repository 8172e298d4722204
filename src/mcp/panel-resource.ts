// The connector panel as an MCP App (@modelcontextprotocol/ext-apps 2.x; D22): the resource
// `ui://corpus/connectors.html`, whose `_meta.ui` declares what the host's sandbox must allow
// (CSP: the one origin the page calls, the REST API's; no device permissions), served in the
// MCP Apps MIME type and, for hosts of the OpenAI Apps format, in theirs with `openai/widgetCSP`.
// The page is a static template, the same for everyone: the data and the token come with the
// open_connectors result (widget.ts).

import type { McpUiResourceMeta } from "@modelcontextprotocol/ext-apps";
import { RESOURCE_MIME_TYPE, RESOURCE_URI_META_KEY } from "@modelcontextprotocol/ext-apps/server";
import type { ReadResourceResult } from "@modelcontextprotocol/server";
import { TOOL_SCOPE } from "../auth/scopes";
import { connectorsWidget } from "./widget";

export const WIDGET_URI = "ui://corpus/connectors.html";
/** The scope that reads the page: the one of open_connectors. */
export const PANEL_SCOPE = TOOL_SCOPE.open_connectors;
export const WIDGET_MIME = { mcpApp: RESOURCE_MIME_TYPE, appsSdk: "text/html+skybridge" } as const;

/** The tool `_meta` that points a host at the panel, in both keys ext-apps defines and the OpenAI Apps one. */
export const PANEL_TOOL_META = {
  ui: { resourceUri: WIDGET_URI },
  [RESOURCE_URI_META_KEY]: WIDGET_URI,
  "openai/outputTemplate": WIDGET_URI,
  "openai/widgetAccessible": true,
} as const;

/** What the host's sandbox must allow the page: fetch and load from the REST API's origin, nothing else. */
export function panelUiMeta(apiBase: string): McpUiResourceMeta {
  const origin = new URL(apiBase).origin;
  return { csp: { connectDomains: [origin], resourceDomains: [origin] }, permissions: {}, prefersBorder: true };
}

/** The same policy in the OpenAI Apps format. */
export function openAiWidgetCsp(apiBase: string) {
  const origin = new URL(apiBase).origin;
  return { connect_domains: [origin], resource_domains: [origin] };
}

/** resources/read of the panel: the page in both MIME types, each with its host's metadata. */
export function readPanel(apiBase: string): ReadResourceResult {
  const html = connectorsWidget();
  return {
    contents: [
      { uri: WIDGET_URI, mimeType: WIDGET_MIME.mcpApp, text: html, _meta: { ui: panelUiMeta(apiBase) } },
      {
        uri: WIDGET_URI,
        mimeType: WIDGET_MIME.appsSdk,
        text: html,
        _meta: { "openai/widgetCSP": openAiWidgetCsp(apiBase), "openai/widgetPrefersBorder": true },
      },
    ],
  };
}
