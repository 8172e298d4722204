// POST /v1/deep_search (first document part 4; D12): the user's archive only, by embedding
// similarity, filtered by when the archived query was asked; never a call to a connector.

import { Elysia, t } from "elysia";
import type { Archive } from "../archive/store";
import { assertNotRevoked, type GuardServices, guard } from "../auth/guard";
import { EmbeddingClosed, type EmbeddingService } from "../embedding/service";
import { HttpError } from "../http/errors";
import { JSON_PARSE } from "../http/json-body";
import { ErrorBody } from "../http/model";
import { infoOf } from "../http/request-context";
import { ID_PREFIX, newId } from "../ids";
import { isStorageError } from "../store/storage-errors";
import { dateRange, timeRange } from "./dates";
import { DeepSearchBody, DeepSearchResponseA, DeepSearchResponseB } from "./model";
import { DEEP_SEARCH_FIELDS, refuseForeignFields } from "./shapes";

export interface DeepSearchServices extends GuardServices {
  archive: Archive;
  embeddings: EmbeddingService;
}

/**
 * The archive is searched by meaning alone: without the model (it could not be loaded) there is
 * no answer, said as D29 says a full disk when there is no room for the model's copies (507),
 * else 503 to retry; never a 500.
 */
async function questionVector(embeddings: EmbeddingService, user: string, question: string): Promise<Float32Array> {
  try {
    const [vector] = await embeddings.embed(user, [question], "urgent");
    return vector!;
  } catch (error) {
    if (error instanceof EmbeddingClosed) throw error;
    if (isStorageError(error))
      throw new HttpError(
        507,
        "the server's storage has no room to load the embedding model, which deep search needs; retry once space is freed",
      );
    throw new HttpError(503, "the embedding model, which deep search needs, could not be loaded; retry later");
  }
}

export const deepSearchRoutes = (s: DeepSearchServices) =>
  new Elysia({ name: "corpus/deep-search" }).use(guard(s)).post(
    "/v1/deep_search",
    async ({ body, principal, request, info }) => {
      const started = performance.now();
      const shapeA = body.q !== undefined;
      refuseForeignFields(body, shapeA ? "A" : "B", DEEP_SEARCH_FIELDS[shapeA ? "A" : "B"]);
      const question = (shapeA ? body.q : body.query)?.trim();
      if (!question) throw new HttpError(400, `${shapeA ? "q" : "query"}: must not be empty`);
      if (body.time_range && (body.filters?.date_from || body.filters?.date_to))
        throw new HttpError(400, "time_range: give either time_range or filters.date_from/date_to, not both");
      let range: { from?: Date; to?: Date };
      if (shapeA && body.time_range) range = timeRange(body.time_range);
      else if (shapeA) range = dateRange(body.filters?.date_from, body.filters?.date_to, "filters.");
      else range = dateRange(body.date_from, body.date_to);
      // Shape C asks with top_k (default 5), shape B with max_results (default 20).
      const limit = shapeA ? (body.top_k ?? 12) : (body.max_results ?? body.top_k ?? 20);
      const vector = await questionVector(s.embeddings, principal.user, question);
      await s.archive.prepareRotation(principal.user);
      // A user deleted while the question was embedded gets no answer (D25).
      await assertNotRevoked(s.auth, principal, infoOf(request, info));
      let matches = await s.archive.search(principal.user, vector, {
        from: range.from,
        to: range.to,
        limit: Math.min(50, limit * (shapeA && body.filters ? 3 : 1)),
      });
      if (shapeA && body.filters) {
        const f = body.filters;
        matches = matches.filter(
          (m) => (!f.connectors || f.connectors.includes(m.chunk.connector)) && (!f.source_type || m.chunk.type === f.source_type),
        );
      }
      matches = matches.slice(0, limit);
      if (shapeA) {
        const results = matches.map((m) => ({
          id: `${ID_PREFIX.result}${m.chunk.chunk_id}`,
          source: { type: m.chunk.type, path: m.chunk.path, ...(m.chunk.message_id ? { message_id: m.chunk.message_id } : {}) },
          snippet: m.chunk.content,
          score: m.similarity,
        }));
        const tokens = results.reduce((n, r) => n + s.embeddings.countTokens(r.snippet), 0);
        return { results, latency_ms: Math.round(performance.now() - started), usage: { tokens, archive_units: tokens / 1000 } };
      }
      return {
        query_id: newId(ID_PREFIX.deepSearch),
        query: question,
        archive_results: matches.map((m) => ({
          original_query_id: m.query_id,
          original_query: m.question,
          matched_chunk: {
            content: m.chunk.content,
            source_connector: m.chunk.connector,
            queried_at: m.queried_at,
            // D36: the quote as it was returned, to check and to open (chunks archived before have neither).
            ...(m.chunk.sha256 ? { chunk_id: `${ID_PREFIX.chunk}${m.chunk.chunk_id}`, sha256: m.chunk.sha256 } : {}),
          },
          similarity_score: m.similarity,
        })),
        total_matches: matches.length,
        duration_ms: Math.round(performance.now() - started),
      };
    },
    {
      guard: { route: "POST /v1/deep_search" },
      parse: [...JSON_PARSE],
      body: DeepSearchBody,
      response: {
        200: t.Union([DeepSearchResponseB, DeepSearchResponseA]),
        400: ErrorBody,
        401: ErrorBody,
        403: ErrorBody,
        409: ErrorBody,
        413: ErrorBody,
        507: ErrorBody,
      },
      detail: {
        tags: ["search"],
        summary: "Search the archive of earlier answers by meaning: shape A (q) or B (query)",
        security: [{ bearer: [] }],
      },
    },
  );
