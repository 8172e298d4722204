// A question asked by a tool (corpus_search, search): its filters checked as POST /v1/query
// checks them (the same schemas and date rules, unknown connector ids named with the valid
// ones, D10) before it counts, then the same per-user query limit (D16), pipeline and archive
// (questions/ask.ts, D12), refusals as the model reads them. Each tool then says the chosen
// chunks in its own shape.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { Type } from "@sinclair/typebox";
import { RECORD_KINDS, type RecordKind, recordKind } from "../../documents/kinds";
import { DomainError } from "../../errors";
import { HttpError } from "../../http/errors";
import { type Asked, AskRefused, ask } from "../../questions/ask";
import { dateRange } from "../../rest/dates";
import { QueryFilters } from "../../rest/model";
import { MESSAGES, type ToolContext, toolError } from "../tool-record";

/** The label of a filter the tool refused (a tool result with isError). */
export const INVALID_FILTER = "Invalid filter";

/** The tools' filters: REST's own schemas for connectors and dates (rest/model.ts), and the kinds of record. */
export const ToolFilters = {
  connectors: QueryFilters.properties.connectors,
  kinds: Type.Optional(
    Type.Array(Type.Union(RECORD_KINDS.map((k) => Type.Literal(k))), {
      minItems: 1,
      maxItems: RECORD_KINDS.length,
      uniqueItems: true,
      description: "kinds of record: mail, document, row (a table's), books (a transaction); omitted means all",
    }),
  ),
  date_from: QueryFilters.properties.date_from,
  date_to: QueryFilters.properties.date_to,
};

export interface ToolQuestion {
  question: string;
  /** How many results are returned (and asked of each connector). */
  max: number;
  connectors?: string[];
  kinds?: RecordKind[];
  date_from?: string;
  date_to?: string;
}

/** Mail is a source type of its own (D8): kinds that are all mail, or none, narrow the search at the sources. */
const sourceTypeOf = (kinds: RecordKind[] | undefined) =>
  !kinds ? undefined : kinds.every((k) => k === "mail") ? ("email" as const) : kinds.includes("mail") ? undefined : ("file" as const);

/** Candidates asked per result when only some kinds are kept (the others are dropped after ranking). */
const KIND_WIDENING = 3;

/** The question's chunks, or the result to answer with instead. */
export async function askAsTool(ctx: ToolContext, q: ToolQuestion): Promise<{ asked: Asked } | { refused: CallToolResult }> {
  const { services: s, caller, requestId, timedOut } = ctx;
  // A refused filter is the caller's mistake: it does not count against the limit (D31).
  let range: { from?: Date; to?: Date };
  try {
    range = dateRange(q.date_from, q.date_to);
    if (q.connectors) await s.connectors.active(caller.user, q.connectors);
  } catch (error) {
    if (error instanceof HttpError || (error instanceof DomainError && error.kind === "invalid"))
      return { refused: toolError(INVALID_FILTER, error.message) };
    throw error;
  }
  // The same per-user windows as POST /v1/query (D16): a search is a search, however it comes.
  const decision = await s.limiter.hit(caller.user, "query");
  if (!decision.allowed) {
    ctx.rateLimited?.();
    return { refused: toolError(MESSAGES.rateLimited, `the query limit is reached; retry after ${decision.retryAfter} s`) };
  }
  const kinds = q.kinds && q.kinds.length < RECORD_KINDS.length ? new Set(q.kinds) : undefined;
  try {
    return {
      asked: await ask(s, {
        user: caller.user,
        principal: caller.principal,
        question: q.question,
        connectorIds: q.connectors,
        sourceType: sourceTypeOf(q.kinds),
        dateFrom: range.from,
        dateTo: range.to,
        perConnector: kinds ? q.max * KIND_WIDENING : q.max,
        limit: q.max,
        requestId,
        timedOut,
        ...(kinds ? { keep: (c) => kinds.has(recordKind(c.record)) } : {}),
      }),
    };
  } catch (error) {
    if (!(error instanceof AskRefused)) throw error;
    return { refused: toolError(error.reason === "timed_out" ? MESSAGES.internal : MESSAGES.unauthorized, error.message) };
  }
}
