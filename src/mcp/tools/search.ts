// `search` in the shape OpenAI documents for ChatGPT's deep research and company knowledge
// connectors ("Building MCP servers for ChatGPT and API integrations",
// https://platform.openai.com/docs/mcp, search tool; D36): one argument, `query`; a result
// object `{ results: [{ id, title, url, text }] }`, as structuredContent and as exactly one text
// content item holding it as JSON. ChatGPT cites a result only when its `url` is a non-empty
// string: here corpus's own page of the cited chunk (/d/<id>). `text` is the cited passage,
// `sha256` its hash (D36). The same pipeline, limit, isolation and archive as corpus_search.
// No filters: OpenAI's pages give search "a single query string" as its argument, and ChatGPT
// refuses a server whose search and fetch are not of their shape ("This MCP server doesn't
// implement our specification"); that extra optional inputs are tolerated is written nowhere.
// The filters (connectors, kinds, dates, count) are corpus_search's and corpus_answer's.
import { Type } from "@sinclair/typebox";
import { TOOL_SCOPE } from "../../auth/scopes";
import { documentPageUrl } from "../../documents/open";
import { ID_PREFIX } from "../../ids";
import { cutText } from "../../text";
import { defineTool } from "../tool-record";
import { askAsTool } from "./asking";
import { MAX_RESULTS, QUERY_MAX_LENGTH, QUERY_MESSAGES, trimQuery } from "./corpus-search";

/** Characters of the cited passage a result carries (fetch gives it whole). */
export const SEARCH_TEXT_MAX = 1000;

export const SearchInput = Type.Object(
  {
    query: Type.String({
      description: "What to look for in the user's mail, documents and business data; trimmed, at most 1000 characters.",
      minLength: 1,
      maxLength: QUERY_MAX_LENGTH,
    }),
  },
  { additionalProperties: false },
);

export const SearchOutput = Type.Object({
  results: Type.Array(
    Type.Object({
      id: Type.String({ description: "the cited chunk's id, for fetch" }),
      title: Type.String(),
      url: Type.String({ description: "the citation's page (/d/<id>), opened only for its signed-in owner" }),
      text: Type.String({ description: "the cited passage (cut at 1000 characters)" }),
      sha256: Type.String({ description: "sha256 (hex) of the whole cited passage, kept in the archive" }),
    }),
  ),
});

export const search = defineTool({
  definition: {
    name: "search",
    title: "Search",
    description:
      "Search the user's connected mail, documents, tables and accounting books. Returns results with an id, title, citation url and the matching passage; open a result whole with fetch.",
    inputSchema: SearchInput,
    outputSchema: SearchOutput,
    annotations: { title: "Search", readOnlyHint: true, destructiveHint: false, openWorldHint: true },
  },
  scope: TOOL_SCOPE.search,
  normalize: trimQuery,
  messages: { "/query": QUERY_MESSAGES },
  async run({ query }, ctx) {
    const got = await askAsTool(ctx, { question: query, max: MAX_RESULTS.default });
    if ("refused" in got) return got.refused;
    const results = got.asked.chosen.map(({ c, chunkId, sha256 }) => {
      const id = `${ID_PREFIX.chunk}${chunkId}`;
      return { id, title: c.record.title, url: documentPageUrl(ctx.publicUrl, id), text: cutText(c.text, SEARCH_TEXT_MAX), sha256 };
    });
    const structured = { results };
    return { content: [{ type: "text", text: JSON.stringify(structured) }], structuredContent: structured };
  },
});
