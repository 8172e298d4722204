// `fetch` in the shape OpenAI documents for ChatGPT's deep research and company knowledge
// connectors ("Building MCP servers for ChatGPT and API integrations",
// https://platform.openai.com/docs/mcp, fetch tool; D36): one argument, `id` (from search or
// corpus_search); the document `{ id, title, text, url, metadata }`, as structuredContent and
// as exactly one text content item holding it as JSON. `text` is the whole record exactly as it
// was ranked (kept in the user's archive), `metadata` says where it comes from, its kind, dates
// and connector, and for a chunk's id the cited passage with its sha256 (documents/open.ts).
// Only the user's own ids open: any other is "not found".
import { Type } from "@sinclair/typebox";
import { TOOL_SCOPE } from "../../auth/scopes";
import { OPENABLE_ID_MAX } from "../../documents/ids";
import { DOCUMENT_NOT_FOUND, documentView, openDocument } from "../../documents/open";
import { defineTool, toolError } from "../tool-record";

export const FetchInput = Type.Object(
  { id: Type.String({ description: "a result's id, from search or corpus_search", minLength: 1, maxLength: OPENABLE_ID_MAX }) },
  { additionalProperties: false },
);

const MetadataValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const FetchOutput = Type.Object({
  id: Type.String(),
  title: Type.String(),
  text: Type.String({ description: "the whole document, as it was ranked" }),
  url: Type.String({ description: "the document's page (/d/<id>), opened only for its signed-in owner" }),
  metadata: Type.Record(Type.String(), MetadataValue, {
    description: "source, connector, kind, type, path, date; for a cited chunk: cited_text and chunk_sha256",
  }),
});

export const fetchDocument = defineTool({
  definition: {
    name: "fetch",
    title: "Fetch",
    description:
      "Open a search result whole: the full text of the mail, document, table row or transaction, with its title, citation url and metadata (source, kind, date, connector; the cited passage and its sha256).",
    inputSchema: FetchInput,
    outputSchema: FetchOutput,
    // Reads what corpus kept of an answer it gave, nothing outside it.
    annotations: { title: "Fetch", readOnlyHint: true, destructiveHint: false, openWorldHint: false },
  },
  scope: TOOL_SCOPE.fetch,
  normalize: (args) => (typeof args.id === "string" ? { ...args, id: args.id.trim() } : args),
  messages: { "/id": `id must be a result's id of at most ${OPENABLE_ID_MAX} characters` },
  async run({ id }, { services: s, caller, publicUrl }) {
    const opened = await openDocument(s.archive, caller.user, id);
    if (!opened) return toolError(DOCUMENT_NOT_FOUND, `no document ${JSON.stringify(id)} among those returned to you`);
    const document = documentView(opened, publicUrl);
    return { content: [{ type: "text", text: JSON.stringify(document) }], structuredContent: document };
  },
});
