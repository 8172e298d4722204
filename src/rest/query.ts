// POST /v1/query (first document part 4; D7-D12): a question in, ranked and cited chunks out,
// in the shape the body asked for; every answer archived before it is sent.
import { Elysia, type Static, t } from "elysia";
import type { Archive } from "../archive/store";
import { type GuardServices, guard, REVOKED_MESSAGE } from "../auth/guard";
import type { Config } from "../config";
import type { Conversations } from "../conversations/store";
import { documentPageUrl } from "../documents/open";
import type { EmbeddingService } from "../embedding/service";
import { HttpError } from "../http/errors";
import { JSON_PARSE } from "../http/json-body";
import { ErrorBody } from "../http/model";
import { publicUrlOf } from "../http/public-url";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { ID_PREFIX } from "../ids";
import { AskRefused, type AskRequest, ask } from "../questions/ask";
import type { QuestionStageTimes } from "../questions/stages";
import { ANSWER_SOURCES, answerText } from "../questions/typed-answer";
import type { QueryService } from "../retrieval/search";
import { cutText } from "../text";
import { dateRange } from "./dates";
import { type ChunkB, QueryBody, QueryResponseA, QueryResponseB, QueryResponseC } from "./model";
import { QUERY_FIELDS, queryShapeOf, refuseForeignFields } from "./shapes";

type Answer = Static<typeof QueryResponseA> | Static<typeof QueryResponseB> | Static<typeof QueryResponseC>;

export interface QueryRouteServices extends GuardServices {
  config: Config;
  query: QueryService;
  /** How long each stage took (the operator's metrics, D35). */
  questionStages?: QuestionStageTimes;
  archive: Archive;
  conversations: Conversations;
  embeddings: EmbeddingService;
}

const DEFAULTS = { max_results: 10, top_k: 8, shapeC: ANSWER_SOURCES };

const snippet = (text: string) => cutText(text, 600);

/** The question asked as corpus_search asks it (questions/ask.ts); its refusals in REST's shapes. */
async function askOrRefuse(s: QueryRouteServices, request: AskRequest, info: RequestInfo) {
  try {
    return await ask(s, request);
  } catch (error) {
    if (!(error instanceof AskRefused)) throw error;
    // Refused after the search ran: it counts against the limit, as corpus_search's does.
    info.refusedAfterWork = true;
    throw error.reason === "timed_out" ? new HttpError(503, error.message) : new HttpError(401, REVOKED_MESSAGE);
  }
}

export const queryRoutes = (s: QueryRouteServices) =>
  new Elysia({ name: "corpus/query" })
    .use(requestContext)
    .use(guard(s))
    .post(
      "/v1/query",
      async ({ body, principal, request, info }): Promise<Answer> => {
        const started = performance.now();
        const shape = queryShapeOf(body);
        refuseForeignFields(body, shape, QUERY_FIELDS[shape]);
        const question = (shape === "A" ? body.q : body.query)?.trim();
        if (!question) throw new HttpError(400, `${shape === "A" ? "q" : "query"}: must not be empty`);
        const filters = shape === "A" ? body.filters : undefined;
        const range = dateRange(filters?.date_from, filters?.date_to, "filters.");
        let turns: Array<{ question: string; answer: string }> = [];
        const conversationId = shape === "C" && body.conversation_id ? body.conversation_id : undefined;
        if (conversationId) {
          const found = await s.conversations.turns(principal.user, conversationId);
          if (!found) throw new HttpError(404, `conversation_id: no conversation ${conversationId} of yours`);
          turns = found;
        }
        const limit = shape === "A" ? (body.top_k ?? DEFAULTS.top_k) : shape === "C" ? DEFAULTS.shapeC : Number.POSITIVE_INFINITY;
        const { queryId, outcome, chosen } = await askOrRefuse(
          s,
          {
            user: principal.user,
            principal,
            question,
            context: turns.map((x) => x.question),
            connectorIds: shape === "A" ? filters?.connectors : body.connectors,
            perConnector:
              shape === "A" ? (body.top_k ?? DEFAULTS.top_k) : shape === "C" ? DEFAULTS.shapeC : (body.max_results ?? DEFAULTS.max_results),
            sourceType: filters?.source_type,
            dateFrom: range.from,
            dateTo: range.to,
            requestId: infoOf(request, info).request_id,
            limit,
            timedOut: () => infoOf(request, info).timedOut,
          },
          infoOf(request, info),
        );

        const publicUrl = publicUrlOf(s.config, request, infoOf(request, info));
        if (shape === "A") {
          const results = chosen.map(({ c, chunkId }) => ({
            id: `${ID_PREFIX.result}${chunkId}`,
            source: {
              type: c.record.type,
              path: c.record.path,
              ...(c.record.type === "email" && c.record.metadata.message_id ? { message_id: String(c.record.metadata.message_id) } : {}),
            },
            snippet: snippet(c.text),
            score: c.score,
          }));
          return {
            results,
            latency_ms: Math.round(performance.now() - started),
            usage: { tokens: results.reduce((n, r) => n + s.embeddings.countTokens(r.snippet), 0) },
          };
        }
        if (shape === "C") {
          const sources = chosen.map(({ c, chunkId, sha256 }, i) => ({
            n: i + 1,
            chunk_id: `${ID_PREFIX.chunk}${chunkId}`,
            connector: c.connectorId,
            title: c.record.title,
            source_url: c.record.source_url,
            snippet: snippet(c.text),
            relevance_score: c.score,
            url: documentPageUrl(publicUrl, `${ID_PREFIX.chunk}${chunkId}`),
            sha256,
          }));
          const answer = answerText(outcome, chosen, s.questionStages, s.query.chunkStatements);
          const conversation_id = await s.conversations.append(principal.user, conversationId, { question, answer });
          return { answer, sources, conversation_id };
        }
        const groups = new Map<string, { connector: string; source_label: string; chunks: Array<Static<typeof ChunkB>> }>();
        for (const { c, chunkId, documentId, sha256 } of chosen) {
          let g = groups.get(c.connectorId);
          if (!g) groups.set(c.connectorId, (g = { connector: c.connectorId, source_label: c.connectorLabel, chunks: [] }));
          g.chunks.push({
            chunk_id: `${ID_PREFIX.chunk}${chunkId}`,
            content: c.text,
            source_url: c.record.source_url,
            relevance_score: c.score,
            metadata: {
              title: c.record.title,
              date: c.record.date,
              path: c.record.path,
              type: c.record.type,
              ...c.record.metadata,
              ...(c.copies ? { copies: c.copies } : {}),
              // D36: the citation, verifiable: its page, its document, the sha256 of `content`.
              citation_url: documentPageUrl(publicUrl, `${ID_PREFIX.chunk}${chunkId}`),
              document_id: documentId,
              sha256,
            },
          });
        }
        return {
          query_id: queryId,
          query: question,
          results: [...groups.values()],
          search_summary: {
            connectors_searched: outcome.connectorsSearched,
            total_chunks_found: outcome.totalFound,
            duration_ms: Math.round(performance.now() - started),
            ...(outcome.notes.length ? { notes: outcome.notes } : {}),
          },
        };
      },
      {
        guard: { route: "POST /v1/query" },
        parse: [...JSON_PARSE],
        body: QueryBody,
        response: {
          200: t.Union([QueryResponseB, QueryResponseA, QueryResponseC]),
          400: ErrorBody,
          401: ErrorBody,
          403: ErrorBody,
          404: ErrorBody,
          409: ErrorBody,
          413: ErrorBody,
          507: ErrorBody,
        },
        detail: {
          tags: ["search"],
          summary: "Search connected data live: shape A (q), B (query), or C (conversation_id)",
          security: [{ bearer: [] }],
        },
      },
    );
