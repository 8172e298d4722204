// corpus_search (second document part 2; D22): the same pipeline as POST /v1/query, archived
// (D12) and counted against the user's query limit (D16) the same way; text content with
// title, source, date and snippet per result, and the same results in structuredContent.
import { Type } from "@sinclair/typebox";
import { TOOL_SCOPE } from "../../auth/scopes";
import { documentPageUrl, documentUri } from "../../documents/open";
import { ID_PREFIX } from "../../ids";
import { cutText } from "../../text";
import { defineTool, MESSAGES, supportsResourceLinks } from "../tool-record";
import { askAsTool, ToolFilters } from "./asking";

export const QUERY_MAX_LENGTH = 1000;
export const MAX_RESULTS = { default: 5, minimum: 1, maximum: 20 } as const;
/** A tool's query "trimmed automatically" (second document part 2): "  " is then empty. */
export const trimQuery = (args: Record<string, unknown>) => (typeof args.query === "string" ? { ...args, query: args.query.trim() } : args);
/** What a tool says of a refused query. */
export const QUERY_MESSAGES = {
  minLength: MESSAGES.emptyQuery,
  maxLength: `${MESSAGES.queryTooLong} of ${QUERY_MAX_LENGTH} characters`,
  other: `${MESSAGES.emptyQuery} (query must be a string)`,
};
const SNIPPET_MAX = 500;

export const CorpusSearchInput = Type.Object(
  {
    query: Type.String({
      description: "Natural-language question; trimmed, must not be empty, at most 1000 characters.",
      minLength: 1,
      maxLength: QUERY_MAX_LENGTH,
    }),
    maxResults: Type.Optional(
      Type.Integer({
        description: "How many results to return.",
        default: MAX_RESULTS.default,
        minimum: MAX_RESULTS.minimum,
        maximum: MAX_RESULTS.maximum,
      }),
    ),
    ...ToolFilters,
  },
  { additionalProperties: false },
);

export const SearchResult = Type.Object({
  title: Type.String(),
  source: Type.String({ description: "connector label and location inside it" }),
  source_url: Type.String(),
  date: Type.Union([Type.String(), Type.Null()]),
  snippet: Type.String(),
  score: Type.Number(),
  connector: Type.String(),
  id: Type.String({ description: "the cited chunk's stable id: fetch, GET /v1/documents/{id} and /d/<id> open it" }),
  url: Type.String({ description: "the citation's page (/d/<id>), opened only for its signed-in owner" }),
  sha256: Type.String({ description: "sha256 (hex) of the cited chunk's text, kept in the archive" }),
});

export const CorpusSearchOutput = Type.Object({
  query: Type.String(),
  results: Type.Array(SearchResult),
  notes: Type.Array(Type.String(), { description: "partial results, connectors still indexing" }),
});

export const corpusSearch = defineTool({
  definition: {
    name: "corpus_search",
    title: "Search Corpus",
    description:
      "Search across all of the user's connected data sources (mail, files, commerce and accounting data) and return ranked, cited results with title, source, date and snippet. Optional filters: connectors (ids), kinds (mail, document, row, books), date_from and date_to (ISO 8601 dates), maxResults.",
    inputSchema: CorpusSearchInput,
    outputSchema: CorpusSearchOutput,
    // Reads the user's sources, never writes to them (D19); they are systems outside corpus.
    // destructiveHint stated for hosts that read it without readOnlyHint (its default is true).
    annotations: { title: "Search Corpus", readOnlyHint: true, destructiveHint: false, openWorldHint: true },
  },
  scope: TOOL_SCOPE.corpus_search,
  normalize: trimQuery,
  messages: {
    "/query": QUERY_MESSAGES,
    "/maxResults": `maxResults must be an integer from ${MAX_RESULTS.minimum} to ${MAX_RESULTS.maximum}`,
    "/kinds": "kinds must be a list of distinct kinds among mail, document, row, books",
  },
  async run({ query, maxResults, ...filters }, ctx) {
    const got = await askAsTool(ctx, { question: query, max: maxResults ?? MAX_RESULTS.default, ...filters });
    if ("refused" in got) return got.refused;
    const { outcome, chosen } = got.asked;
    const results = chosen.map(({ c, chunkId, sha256 }) => ({
      title: c.record.title,
      source: `${c.connectorLabel} · ${c.record.path}`,
      source_url: c.record.source_url,
      date: c.record.date,
      snippet: cutText(c.text, SNIPPET_MAX),
      score: c.score,
      connector: c.connectorId,
      id: `${ID_PREFIX.chunk}${chunkId}`,
      url: documentPageUrl(ctx.publicUrl, `${ID_PREFIX.chunk}${chunkId}`),
      sha256,
    }));
    // A document's only date is its file's: said so, or an assistant takes it for the invoice's date (outside walkthrough).
    const dateOf = (r: (typeof results)[number], i: number) =>
      r.date ? `${r.date}${chosen[i]!.c.record.type === "file" ? " (file modified)" : ""}` : "unknown";
    const lines = results.length
      ? results.map(
          (r, i) =>
            `${i + 1}. ${r.title}\n   Source: ${r.source} (${r.source_url})\n   Date: ${dateOf(r, i)}\n   ${r.snippet.replace(/\s+/g, " ")}`,
        )
      : ["No results."];
    const text = [`Results for "${query}":`, ...lines, ...outcome.notes.map((n) => `Note: ${n}`)].join("\n");
    // 2025-06-18 and later clients: each result also as a link that resources/read opens (documents/open.ts).
    const links = supportsResourceLinks(ctx.protocolVersion)
      ? results.map((r) => ({
          type: "resource_link" as const,
          uri: documentUri(r.id),
          name: r.title,
          description: `${r.source}; the cited passage's sha256 ${r.sha256}`,
          mimeType: "text/plain",
        }))
      : [];
    return { content: [{ type: "text", text }, ...links], structuredContent: { query, results, notes: outcome.notes } };
  },
});
