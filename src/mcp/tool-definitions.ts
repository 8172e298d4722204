// The two tools of the second document (part 2). Their input schemas are TypeBox, so the
// same objects describe `tools/list`, `/debug/tools` and the validation of arguments.
import { Type } from "@sinclair/typebox";

export const QUERY_MAX_LENGTH = 1000;
export const MAX_RESULTS = { default: 5, minimum: 1, maximum: 20 } as const;

export const CorpusSearchInput = Type.Object(
  {
    query: Type.String({
      description: "Natural-language question; trimmed, must not be empty, at most 1000 characters.",
      maxLength: QUERY_MAX_LENGTH,
    }),
    maxResults: Type.Optional(
      Type.Integer({ description: "How many results to return.", default: MAX_RESULTS.default, minimum: MAX_RESULTS.minimum, maximum: MAX_RESULTS.maximum }),
    ),
  },
  { additionalProperties: false },
);

export const OpenConnectorsInput = Type.Object({}, { additionalProperties: false });

export const SearchResult = Type.Object({
  title: Type.String(),
  source: Type.String({ description: "connector label and location inside it" }),
  source_url: Type.String(),
  date: Type.Union([Type.String(), Type.Null()]),
  snippet: Type.String(),
  score: Type.Number(),
  connector: Type.String(),
});

export const CorpusSearchOutput = Type.Object({
  query: Type.String(),
  results: Type.Array(SearchResult),
  notes: Type.Array(Type.String(), { description: "partial results, connectors still indexing" }),
});

export const WIDGET_URI = "ui://corpus/connectors.html";
export const WIDGET_MIME = { mcpApp: "text/html;profile=mcp-app", appsSdk: "text/html+skybridge" } as const;

export const TOOL_DEFINITIONS = [
  {
    name: "corpus_search",
    title: "Search Corpus",
    description:
      "Search across all of the user's connected data sources (mail, files, commerce and accounting data) and return ranked, cited results with title, source, date and snippet.",
    inputSchema: CorpusSearchInput,
    outputSchema: CorpusSearchOutput,
  },
  {
    name: "open_connectors",
    title: "Open Connectors",
    description: "Open the connector management interface: list the user's connectors and their status, add, configure or remove them.",
    inputSchema: OpenConnectorsInput,
    _meta: { ui: { resourceUri: WIDGET_URI }, "openai/outputTemplate": WIDGET_URI, "openai/widgetAccessible": true },
  },
] as const;

/** Plain JSON of the definitions, as clients receive them. */
export function toolDefinitionsJson() {
  return TOOL_DEFINITIONS.map((d) => JSON.parse(JSON.stringify(d)) as Record<string, unknown>);
}
