// The query pipeline, in steps of their own files: plan the question, ask every connector in
// parallel (gather.ts), score every candidate by words and by meaning on one scale (score.ts),
// fuse with the question's soft signals (fuse.ts, evidence.ts), collapse copies and keep so
// many per connector (copies.ts), cite each result's best chunk (cite.ts).
import { booksAnswer } from "../connectors/books/answer";
import type { ConnectorRegistry } from "../connectors/registry";
import { controlsAsSpaces } from "../connectors/types";
import { EmbeddingClosed, type EmbeddingService } from "../embedding/service";
import type { Logger } from "../log";
import { timed } from "../questions/stages";
import { isStorageError } from "../store/storage-errors";
import { chunkFitFor } from "./answer";
import type { QuestionMeaning } from "./asked";
import { wordsRemembered } from "./bm25";
import { ChunkCache } from "./chunk-cache";
import { cite } from "./cite";
import { capPerConnector, collapseCopies } from "./copies";
import { countriesIn } from "./countries";
import { DENSE_WEIGHT, fuse } from "./fuse";
import { gather } from "./gather";
import type { QueryPlan } from "./plan";
import { scoreCandidates } from "./score";
import { ChunkStatements } from "./statement-memo";
import { elapsedMs, type QueryOptions, type QueryOutcome, type Question, type RankedChunk } from "./types";

export { CHUNK_CACHE_CHARS } from "./chunk-cache";
export { DENSE_WEIGHT } from "./fuse";
export { CONNECTOR_TIMEOUT_MS } from "./gather";
export { OPERATOR_UNAVAILABLE } from "./score";
export type { QueryOptions, QueryOutcome, RankedChunk } from "./types";

/** How many of the best results the DEBUG line of a ranking lists. */
export const DEBUG_TOP_RESULTS = 10;

export class QueryService {
  private readonly chunkCache: ChunkCache;
  /** The cited chunks' statements, read once per version of each chunk (statement-memo.ts). */
  readonly chunkStatements = new ChunkStatements();

  constructor(
    private readonly connectors: ConnectorRegistry,
    private readonly embeddings: EmbeddingService,
    /**
     * DEBUG lines (CORPUS_DEBUG_MODE): the plan, each connector's time, the scores of the best
     * results. Shapes and numbers only: no word of the question, no text, title, path or id of a
     * record (the data folder keeps those sealed or hashed; a log is no place for them either).
     */
    private readonly log?: Logger,
  ) {
    this.chunkCache = new ChunkCache(() => embeddings.tokenizer);
  }

  /** Characters the chunk cache holds now (tests). */
  get cachedChunkChars(): number {
    return this.chunkCache.chars;
  }

  async run(asked: QueryOptions): Promise<QueryOutcome> {
    const started = performance.now();
    // A control character in the question is a space for every step (the model's tokenizer
    // dropped it, joining "at\u0000Nando's" into one word, while the plan split there).
    const o = { ...asked, question: controlsAsSpaces(asked.question), context: asked.context?.map(controlsAsSpaces) };
    const stages = o.stages;
    const planStarted = performance.now();
    // The question's vector first: the model reads what it asks where the tables read no kind (asked.ts, D32).
    const embedStarted = performance.now();
    const embedText = [...(o.context ?? []).slice(-2), o.question].join("\n");
    const { vector, note: modelNote } = await this.questionVector(o.user, embedText);
    const embedMs = elapsedMs(embedStarted);
    const plan = await planOf(o, vector && { vector, model: this.embeddings.model.sha256 });
    const shownAtStart = await this.connectors.ids(o.user);
    const active = await this.connectors.active(o.user, o.connectorIds);
    const debug = this.log?.enabled("DEBUG") ? this.log : undefined;
    debug?.debug(
      "query planned",
      plannedLine(
        o,
        plan,
        active.map((a) => a.id),
      ),
    );
    // Reading the question: its plan and its vector.
    stages?.observe?.("plan", (performance.now() - planStarted) / 1000);
    const q: Question = { options: o, plan: plan.plan, terms: plan.terms, vector, debug };
    const modelNotes = modelNote ? [modelNote] : [];

    // A question of only function words ("How much?") names nothing to look for: every source's
    // newest records (a search without words) are no answer to it (outside attack).
    if (namesNothing(q, o))
      return { plan: q.plan, vector: q.vector, chunks: [], connectorsSearched: 0, totalFound: 0, notes: [NAMES_NOTHING, ...modelNotes] };
    const gathered = await timed(stages, "gather", () => gather(q, active));
    const chunksOf = this.chunkCache.chunksOf.bind(this.chunkCache);
    const rankStarted = performance.now();
    const scored = scoreCandidates(q, active, gathered.answers, { embeddings: this.embeddings, chunksOf });
    const ranked = fuse(scored.pool, q.plan, o.denseWeight ?? DENSE_WEIGHT);
    const kept = capPerConnector(collapseCopies(ranked), o.perConnector);
    debug?.debug("query ranked", rankedLine(o, ranked.length, kept, embedMs, started));
    const ranking = performance.now() - rankStarted;
    // A sum over books is added up from every transaction of the book, not the ranked few (D34).
    const booksStarted = performance.now();
    const books = await booksAnswer(q, kept, active);
    // Timed as the answer when it is one; else looking for one was part of choosing the results.
    const booksMs = performance.now() - booksStarted;
    if (books) stages?.observe?.("answer", booksMs / 1000);
    stages?.observe?.("rank", (ranking + (books ? 0 : booksMs)) / 1000);
    // A connector removed while the question ran answers nothing of it: its rows were read before (D25).
    const shownNow = new Set(await this.connectors.ids(o.user));
    const removed = new Set(shownAtStart.filter((id) => !shownNow.has(id)));
    const chunks = (books?.chunks ?? kept).filter((c) => !removed.has(c.connectorId));
    // Only the results returned are cited: choosing a document's chunk reads every statement of every chunk (answer.ts chunkFitFor).
    if (o.texts !== false)
      wordsRemembered(() =>
        cite(
          returnedOf(chunks, kept, o.returned),
          q.terms,
          // An index's records as it stored their chunks: cut again here, a long one held the serving thread (D31).
          (c) => c.storedChunks?.() ?? chunksOf(c.owner, c.connectorId, c.record),
          chunkFitFor(q.plan, this.chunkStatements),
        ),
      );
    return {
      plan: q.plan,
      vector: q.vector,
      chunks,
      ...(books && chunks.length === books.chunks.length ? { answer: books.text, answerFacts: books.facts } : {}),
      connectorsSearched: active.length,
      totalFound: ranked.length,
      notes: [...modelNotes, ...gathered.notes, ...scored.notes],
    };
  }

  /**
   * The question's vector; without one when the model cannot be loaded (its worker fails to
   * start: no room for its copies, D29), with a note saying so: a question is a read, answered by
   * its words rather than refused (507 is for writes the disk refused, and 500 said nothing).
   */
  private async questionVector(user: string, text: string): Promise<{ vector?: Float32Array; note?: string }> {
    try {
      const [vector] = await this.embeddings.embed(user, [text], "urgent");
      return { vector };
    } catch (error) {
      if (error instanceof EmbeddingClosed) throw error;
      return { note: isStorageError(error) ? MEANING_NOT_USED_NO_ROOM : MEANING_NOT_USED };
    }
  }
}

/** The ranked results among `chunks` that are returned (QueryOptions.returned), to be cited; a books answer's transactions come cited. */
export function returnedOf(chunks: RankedChunk[], ranked: RankedChunk[], returned: QueryOptions["returned"]): RankedChunk[] {
  const fromRanking = new Set(ranked);
  if (!returned) return chunks.filter((c) => fromRanking.has(c));
  const kept = (returned.keep ? chunks.filter(returned.keep) : chunks).slice(0, returned.limit);
  return kept.filter((c) => fromRanking.has(c));
}

/** The note of an answer ranked without the model (it could not be loaded). */
export const MEANING_NOT_USED = "meaning was not used: the embedding model could not be loaded, so results are ranked by their words";
/** The same, when the data folder's disk has no room for the model's copies (D29). */
export const MEANING_NOT_USED_NO_ROOM =
  "meaning was not used: the server's storage has no room to load the embedding model, so results are ranked by their words until space is freed";

/** The note of a question that names nothing to look for. */
export const NAMES_NOTHING = "the question names nothing to search for: no word, phrase, date, amount, person or address";

/** Nothing to look for: no word or phrase (of this question or the conversation's), date, amount, person, address or order. */
function namesNothing(q: Question, o: QueryOptions): boolean {
  const p = q.plan;
  return (
    q.terms.length === 0 &&
    p.phrases.length === 0 &&
    !p.dateFrom &&
    !p.dateTo &&
    !o.dateFrom &&
    !o.dateTo &&
    p.amounts.length === 0 &&
    p.people.length === 0 &&
    p.addresses.length === 0 &&
    !p.order
  );
}

/**
 * The question's plan and words, with what its conversation's last turns carry into it (followUp).
 * `meaning`: the vector ranking embeds (the question with up to two earlier turns), by which the
 * model reads what this turn asks where its words name no kind ("And in France?").
 */
export async function planOf(o: QueryOptions, meaning?: QuestionMeaning): Promise<{ plan: QueryPlan; terms: string[] }> {
  // chrono-node loads on the first question, not at start-up.
  const { planQuery, MAX_QUERY_TERMS } = await import("./plan");
  // Each turn as it was resolved, the conversation's first question onward (a third turn goes on from the second as resolved).
  let resolved: { plan: QueryPlan; terms: string[] } | undefined;
  const turns = [...(o.context ?? []).slice(-PLANNED_TURNS), o.question];
  for (const [i, question] of turns.entries()) {
    const plan = planQuery(question, o.now, i === turns.length - 1 ? meaning : undefined);
    resolved = resolved ? followUp(plan, resolved, question) : { plan, terms: plan.terms };
    // As many words as a question may have, this turn's first: a long conversation asks no more.
    resolved.terms = resolved.terms.slice(0, MAX_QUERY_TERMS);
  }
  return resolved!;
}

/** The conversation's last turns planned again for a new one: a thousand-turn conversation is not re-read whole. */
const PLANNED_TURNS = 4;

/**
 * A short turn that goes on from the previous one ("And in France?", "what about Oslo"), not a new
 * question that happens to start with "and" ("And when is the dentist appointment?").
 */
const GOES_ON_FROM = /^\s*(and|what about|how about|same for)\b(?!\s+(when|where|who|what|which|how|why|is|are|do|does|did)\b)/i;

/**
 * A conversation's turn with the previous question's words; a country it names takes the place of
 * the previous one's, and a turn going on from it keeps its order (outside walkthrough: "Which
 * customer in Brazil spent the most?" then "And in France?" answered with Brazil's rows, unsorted).
 */
function followUp(plan: QueryPlan, previous: { plan: QueryPlan; terms: string[] }, question: string): { plan: QueryPlan; terms: string[] } {
  // A country named replaces the previous turn's, by any of its names ("And in Deutschland?").
  const carried = plan.countries.length ? previous.terms.filter((t) => countriesIn([t]).length === 0) : previous.terms;
  // Going on from it is changing only what it was filtered by (a country, a time, an amount):
  // "And in France?", "and in 2022?"; "And my passport number?" asks something else (outside attack).
  const onlyFilters = plan.terms.every((t) => countriesIn([t]).length > 0);
  if (!(GOES_ON_FROM.test(question) && onlyFilters)) return { plan, terms: [...new Set([...plan.terms, ...previous.plan.terms])] };
  // What it asked for holds unless this turn says otherwise (its order, kind of record, amounts, time).
  const before = previous.plan;
  const dated = plan.dateFrom || plan.dateTo;
  return {
    plan: {
      ...plan,
      order: plan.order ?? before.order,
      sourceHint: plan.sourceHint ?? before.sourceHint,
      amounts: plan.amounts.length ? plan.amounts : before.amounts,
      ...(dated ? {} : { dateFrom: before.dateFrom, dateTo: before.dateTo, timeAsked: before.timeAsked }),
    },
    terms: [...new Set([...plan.terms, ...carried])],
  };
}

function plannedLine(o: QueryOptions, { plan, terms }: { plan: QueryPlan; terms: string[] }, connectors: string[]) {
  return {
    request_id: o.requestId ?? null,
    terms: terms.length,
    phrases: plan.phrases.length,
    date_from: (o.dateFrom ?? plan.dateFrom)?.toISOString() ?? null,
    date_to: (o.dateTo ?? plan.dateTo)?.toISOString() ?? null,
    dates_from: o.dateFrom || o.dateTo ? "filters" : plan.dateFrom || plan.dateTo ? "question" : "none",
    source_hint: plan.sourceHint ?? null,
    source_type: o.sourceType ?? null,
    amounts: plan.amounts.length,
    people: plan.people.length,
    addresses: plan.addresses.length,
    context_turns: o.context?.length ?? 0,
    connectors,
    per_connector: o.perConnector,
  };
}

function rankedLine(o: QueryOptions, candidates: number, kept: RankedChunk[], embedMs: number, started: number) {
  return {
    request_id: o.requestId ?? null,
    candidates,
    kept: kept.length,
    dense_weight: o.denseWeight ?? DENSE_WEIGHT,
    embed_ms: embedMs,
    ms: elapsedMs(started),
    // Where a result came from and how it scored; never what it says or which record it is.
    top: kept.slice(0, DEBUG_TOP_RESULTS).map((c, i) => ({
      rank: i + 1,
      connector: c.connectorId,
      score: c.score,
      lexical: Math.round(c.lexical * 10_000) / 10_000,
      dense: c.dense === undefined ? null : Math.round(c.dense * 10_000) / 10_000,
      chunk: c.chunkIndex,
    })),
  };
}
