// Request and response schemas of POST /v1/query and POST /v1/deep_search (first document
// part 2 and 4; D7-D9, D12). One request schema per endpoint accepts the fields of every
// shape; the shape is decided from the body (D7).
import { Type } from "@sinclair/typebox";
import { t } from "elysia";
import { CONNECTOR_ID_PATTERN } from "../connectors/model";

const Question = t.String({ maxLength: 4000, description: "natural-language question" });
const IsoDate = t.String({ maxLength: 40, description: "ISO 8601 date or date-time" });
const ConnectorIds = t.Array(t.String({ pattern: CONNECTOR_ID_PATTERN }), {
  maxItems: 100,
  description: "connector ids; omitted means all",
});

export const QueryFilters = t.Object(
  {
    connectors: t.Optional(ConnectorIds),
    date_from: t.Optional(IsoDate),
    date_to: t.Optional(IsoDate),
    source_type: t.Optional(t.UnionEnum(["email", "file"])),
  },
  { additionalProperties: false, description: "shape A filters: connectors, a date range, a source type" },
);

export const QueryBody = t.Object(
  {
    query: t.Optional(Question),
    q: t.Optional(Question),
    connectors: t.Optional(ConnectorIds),
    max_results: t.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "shape B: results per connector (default 10)" })),
    conversation_id: t.Optional(
      t.Union([t.String({ pattern: "^conv_[A-Za-z0-9]{1,64}$" }), t.Null(), t.Literal("")], {
        description: "shape C: a follow-up; null or empty starts a conversation",
      }),
    ),
    top_k: t.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "shape A: number of results (default 8)" })),
    filters: t.Optional(QueryFilters),
  },
  { additionalProperties: false },
);

export const DeepSearchBody = t.Object(
  {
    query: t.Optional(Question),
    q: t.Optional(Question),
    max_results: t.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "shape B (default 20)" })),
    date_from: t.Optional(IsoDate),
    date_to: t.Optional(IsoDate),
    top_k: t.Optional(Type.Integer({ minimum: 1, maximum: 50, description: "shape A default 12; shape C default 5" })),
    time_range: t.Optional(
      t.String({ pattern: "^\\d{4}-\\d{2}-\\d{2}\\.\\.\\d{4}-\\d{2}-\\d{2}$", description: "shape A: <start_date>..<end_date>" }),
    ),
    filters: t.Optional(QueryFilters),
  },
  { additionalProperties: false },
);

export const ChunkA = t.Object({
  id: t.String({ description: "prefix chk_" }),
  source: t.Object({ type: t.UnionEnum(["email", "file"]), path: t.String(), message_id: t.Optional(t.String()) }),
  snippet: t.String(),
  score: Type.Number(),
});

export const ChunkB = t.Object({
  chunk_id: t.String({ description: "prefix chnk_" }),
  content: t.String(),
  source_url: t.String(),
  relevance_score: Type.Number(),
  metadata: t.Record(t.String(), t.Unknown()),
});

export const SearchSummary = t.Object({
  connectors_searched: Type.Integer(),
  total_chunks_found: Type.Integer(),
  duration_ms: Type.Integer(),
  notes: t.Optional(t.Array(t.String(), { description: "partial results, connectors still indexing" })),
});

export const QueryResponseA = t.Object({ results: t.Array(ChunkA), latency_ms: Type.Number(), usage: t.Object({ tokens: Type.Number() }) });
export const QueryResponseB = t.Object({
  query_id: t.String({ description: "prefix qry_" }),
  query: t.String(),
  results: t.Array(t.Object({ connector: t.String(), source_label: t.String(), chunks: t.Array(ChunkB) })),
  search_summary: SearchSummary,
});
export const QueryResponseC = t.Object({
  answer: t.String(),
  sources: t.Array(
    t.Object({
      n: Type.Integer(),
      chunk_id: t.String(),
      connector: t.String(),
      title: t.String(),
      source_url: t.String(),
      snippet: t.String(),
      relevance_score: Type.Number(),
      url: t.String({ description: "the citation's page /d/<chunk_id> opened only for its owner" }),
      sha256: t.String({ description: "sha256 (hex) of the cited chunk's whole text, kept in the archive" }),
    }),
  ),
  conversation_id: t.String({ description: "prefix conv_" }),
});

export const DeepSearchResponseA = t.Object({
  results: t.Array(ChunkA),
  latency_ms: Type.Number(),
  usage: t.Object({ tokens: Type.Number(), archive_units: Type.Number() }),
});
export const DeepSearchResponseB = t.Object({
  query_id: t.String({ description: "prefix ds_" }),
  query: t.String(),
  archive_results: t.Array(
    t.Object({
      original_query_id: t.String(),
      original_query: t.String(),
      matched_chunk: t.Object({
        content: t.String(),
        source_connector: t.String(),
        queried_at: t.String(),
        chunk_id: t.Optional(t.String({ description: "the chunk's id when it was returned: GET /v1/documents/{id} opens it" })),
        sha256: t.Optional(t.String({ description: "sha256 (hex) of content, as it was returned" })),
      }),
      similarity_score: Type.Number(),
    }),
  ),
  total_matches: Type.Integer(),
  duration_ms: Type.Integer(),
});
