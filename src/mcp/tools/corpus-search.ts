// corpus_search (second document part 2; D22): the same pipeline as POST /v1/query, archived
// (D12) and counted against the user's query limit (D16) the same way; text content with
// title, source, date and snippet per result, and the same results in structuredContent.
import { Type } from "@sinclair/typebox";
import { type Asked, AskRefused, ask } from "../../questions/ask";
import { cutText } from "../../text";
import { defineTool, MESSAGES, toolError } from "../tool-record";

export const QUERY_MAX_LENGTH = 1000;
export const MAX_RESULTS = { default: 5, minimum: 1, maximum: 20 } as const;
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
      "Search across all of the user's connected data sources (mail, files, commerce and accounting data) and return ranked, cited results with title, source, date and snippet.",
    inputSchema: CorpusSearchInput,
    outputSchema: CorpusSearchOutput,
    // Reads the user's sources, never writes to them (D19); they are systems outside corpus.
    // destructiveHint stated for hosts that read it without readOnlyHint (its default is true).
    annotations: { readOnlyHint: true, destructiveHint: false, openWorldHint: true },
  },
  scope: "corpus:search",
  // "trimmed automatically" (second document part 2): "  " is then empty.
  normalize: (args) => (typeof args.query === "string" ? { ...args, query: args.query.trim() } : args),
  messages: {
    "/query": {
      minLength: MESSAGES.emptyQuery,
      maxLength: `${MESSAGES.queryTooLong} of ${QUERY_MAX_LENGTH} characters`,
      other: `${MESSAGES.emptyQuery} (query must be a string)`,
    },
    "/maxResults": `maxResults must be an integer from ${MAX_RESULTS.minimum} to ${MAX_RESULTS.maximum}`,
  },
  async run({ query, maxResults }, { services: s, caller, requestId, timedOut }) {
    const max = maxResults ?? MAX_RESULTS.default;
    // The same per-user windows as POST /v1/query (D16): a search is a search, however it comes.
    const decision = s.limiter.hit(caller.user, "query");
    if (!decision.allowed) return toolError(MESSAGES.rateLimited, `the query limit is reached; retry after ${decision.retryAfter} s`);

    let asked: Asked;
    try {
      asked = await ask(s, {
        user: caller.user,
        principal: caller.principal,
        question: query,
        perConnector: max,
        limit: max,
        requestId,
        timedOut,
      });
    } catch (error) {
      if (!(error instanceof AskRefused)) throw error;
      return toolError(error.reason === "timed_out" ? MESSAGES.internal : MESSAGES.unauthorized, error.message);
    }
    const { outcome } = asked;
    const chosen = asked.chosen.map(({ c }) => c);
    const results = chosen.map((c) => ({
      title: c.record.title,
      source: `${c.connectorLabel} · ${c.record.path}`,
      source_url: c.record.source_url,
      date: c.record.date,
      snippet: cutText(c.text, SNIPPET_MAX),
      score: c.score,
      connector: c.connectorId,
    }));
    // A document's only date is its file's: said so, or an assistant takes it for the invoice's date (outside walkthrough).
    const dateOf = (r: (typeof results)[number], i: number) =>
      r.date ? `${r.date}${chosen[i]!.record.type === "file" ? " (file modified)" : ""}` : "unknown";
    const lines = results.length
      ? results.map(
          (r, i) =>
            `${i + 1}. ${r.title}\n   Source: ${r.source} (${r.source_url})\n   Date: ${dateOf(r, i)}\n   ${r.snippet.replace(/\s+/g, " ")}`,
        )
      : ["No results."];
    const text = [`Results for "${query}":`, ...lines, ...outcome.notes.map((n) => `Note: ${n}`)].join("\n");
    return { content: [{ type: "text", text }], structuredContent: { query, results, notes: outcome.notes } };
  },
});
