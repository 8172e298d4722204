// corpus_answer (issue 40): what POST /v1/query's shape C answers (D9, D34), as data with an
// output schema: the value, its currency or unit, the period, how sure it is and the records it
// came from with their citations (id, /d/<id>, sha256), so an assistant receives a number with
// its evidence instead of prose to parse (questions/typed-answer.ts makes both from one answer).
// The same scope, filters, per-user query limit, isolation and archive as corpus_search (asking.ts).
import { Type } from "@sinclair/typebox";
import { TOOL_SCOPE } from "../../auth/scopes";
import { ANSWER_SOURCES, answerText, TypedAnswer, typedAnswer } from "../../questions/typed-answer";
import { defineTool, MESSAGES } from "../tool-record";
import { askAsTool, ToolFilters } from "./asking";
import { QUERY_MAX_LENGTH } from "./corpus-search";

export const CorpusAnswerInput = Type.Object(
  {
    question: Type.String({
      description: "The question, in natural language; trimmed, must not be empty, at most 1000 characters.",
      minLength: 1,
      maxLength: QUERY_MAX_LENGTH,
    }),
    ...ToolFilters,
  },
  { additionalProperties: false },
);

export const corpusAnswer = defineTool({
  definition: {
    name: "corpus_answer",
    title: "Answer from Corpus",
    description:
      "Answer a question from the user's connected sources as data: the value (a sum over accounting books per commodity, or an amount, date or count stated in a source), its currency or unit, the period, how sure the answer is (and why), and the records it came from with their citations (id for fetch, url, sha256). Optional filters: connectors (ids), kinds (mail, document, row, books), date_from and date_to (ISO 8601 dates).",
    inputSchema: CorpusAnswerInput,
    outputSchema: TypedAnswer,
    // Reads the user's sources, never writes to them (D19); they are systems outside corpus.
    annotations: { title: "Answer from Corpus", readOnlyHint: true, destructiveHint: false, openWorldHint: true },
  },
  scope: TOOL_SCOPE.corpus_answer,
  normalize: (args) => (typeof args.question === "string" ? { ...args, question: args.question.trim() } : args),
  messages: {
    "/question": {
      minLength: MESSAGES.emptyQuery,
      maxLength: `${MESSAGES.queryTooLong} of ${QUERY_MAX_LENGTH} characters`,
      other: `${MESSAGES.emptyQuery} (question must be a string)`,
    },
    "/kinds": "kinds must be a list of distinct kinds among mail, document, row, books",
  },
  async run({ question, ...filters }, ctx) {
    const got = await askAsTool(ctx, { question, max: ANSWER_SOURCES, ...filters });
    if ("refused" in got) return got.refused;
    const { outcome, chosen } = got.asked;
    const typed = typedAnswer(
      question,
      answerText(outcome, chosen, ctx.services.questionStages, ctx.services.query.chunkStatements),
      outcome,
      chosen,
      ctx.publicUrl,
    );
    const value = typed.value === null ? "" : `\nValue: ${typed.value}${typed.unit ? ` ${typed.unit}` : ""}`;
    const period = typed.period ? `\nPeriod: ${typed.period.said}` : "";
    const sources = typed.sources.map((s) => `[${s.n}] ${s.title} (${s.url}; sha256 ${s.sha256})`);
    const text = [
      `${typed.answer}${value}${period}\nConfidence: ${typed.confidence}`,
      ...sources,
      ...typed.notes.map((n) => `Note: ${n}`),
    ].join("\n");
    return { content: [{ type: "text", text }], structuredContent: typed };
  },
});
