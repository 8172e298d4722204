// A question asked by a tool (corpus_search, search): the same per-user query limit as POST
// /v1/query (D16), the same pipeline and archive (questions/ask.ts, D12), refusals as the
// model reads them. Each tool then says the chosen chunks in its own shape.
import type { CallToolResult } from "@modelcontextprotocol/server";
import { type Asked, AskRefused, type AskRequest, ask } from "../../questions/ask";
import { MESSAGES, type ToolContext, toolError } from "../tool-record";

export type ToolQuestion = Pick<AskRequest, "question" | "connectorIds" | "sourceType" | "dateFrom" | "dateTo"> & {
  /** How many results are returned (and asked of each connector). */
  max: number;
};

/** The question's chunks, or the result to answer with instead. */
export async function askAsTool(
  { services: s, caller, requestId, timedOut }: ToolContext,
  { max, ...question }: ToolQuestion,
): Promise<{ asked: Asked } | { refused: CallToolResult }> {
  // The same per-user windows as POST /v1/query (D16): a search is a search, however it comes.
  const decision = s.limiter.hit(caller.user, "query");
  if (!decision.allowed)
    return { refused: toolError(MESSAGES.rateLimited, `the query limit is reached; retry after ${decision.retryAfter} s`) };
  try {
    return {
      asked: await ask(s, {
        user: caller.user,
        principal: caller.principal,
        perConnector: max,
        limit: max,
        requestId,
        timedOut,
        ...question,
      }),
    };
  } catch (error) {
    if (!(error instanceof AskRefused)) throw error;
    return { refused: toolError(error.reason === "timed_out" ? MESSAGES.internal : MESSAGES.unauthorized, error.message) };
  }
}
