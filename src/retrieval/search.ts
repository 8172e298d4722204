// The query pipeline, in steps of their own files: plan the question, ask every connector in
// parallel (gather.ts), score every candidate by words and by meaning on one scale (score.ts),
// fuse with the question's soft signals (fuse.ts, evidence.ts), collapse copies and keep so
// many per connector (copies.ts), cite each result's best chunk (cite.ts).
import type { ConnectorRegistry } from "../connectors/registry";
import type { EmbeddingService } from "../embedding/service";
import type { Logger } from "../log";
import { chunkFitFor } from "./answer";
import { ChunkCache } from "./chunk-cache";
import { cite } from "./cite";
import { capPerConnector, collapseCopies } from "./copies";
import { countriesIn } from "./countries";
import { DENSE_WEIGHT, fuse } from "./fuse";
import { gather } from "./gather";
import type { QueryPlan } from "./plan";
import { scoreCandidates } from "./score";
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

  async run(o: QueryOptions): Promise<QueryOutcome> {
    const started = performance.now();
    const plan = await planOf(o);
    const active = this.connectors.active(o.user, o.connectorIds);
    const debug = this.log?.enabled("DEBUG") ? this.log : undefined;
    debug?.debug(
      "query planned",
      plannedLine(
        o,
        plan,
        active.map((a) => a.id),
      ),
    );
    const embedStarted = performance.now();
    const embedText = [...(o.context ?? []).slice(-2), o.question].join("\n");
    const [vector] = await this.embeddings.embed(o.user, [embedText], "urgent");
    const embedMs = elapsedMs(embedStarted);
    const q: Question = { options: o, plan: plan.plan, terms: plan.terms, vector: vector!, debug };

    // A question of only function words ("How much?") names nothing to look for: every source's
    // newest records (a search without words) are no answer to it (outside attack).
    if (namesNothing(q, o))
      return { plan: q.plan, vector: q.vector, chunks: [], connectorsSearched: 0, totalFound: 0, notes: [NAMES_NOTHING] };
    const gathered = await gather(q, active);
    const chunksOf = this.chunkCache.chunksOf.bind(this.chunkCache);
    const scored = scoreCandidates(q, active, gathered.answers, { embeddings: this.embeddings, chunksOf });
    const ranked = fuse(scored.pool, q.plan, o.denseWeight ?? DENSE_WEIGHT);
    const kept = capPerConnector(collapseCopies(ranked), o.perConnector);
    debug?.debug("query ranked", rankedLine(o, ranked.length, kept, embedMs, started));
    if (o.texts !== false) cite(kept, q.terms, (c) => chunksOf(c.owner, c.connectorId, c.record), chunkFitFor(o.question));
    return {
      plan: q.plan,
      vector: q.vector,
      chunks: kept,
      connectorsSearched: active.length,
      totalFound: ranked.length,
      notes: [...gathered.notes, ...scored.notes],
    };
  }
}

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

/** The question's plan, and its words with those of the conversation's previous question. */
async function planOf(o: QueryOptions): Promise<{ plan: QueryPlan; terms: string[] }> {
  // chrono-node loads on the first question, not at start-up.
  const { planQuery } = await import("./plan");
  const plan = planQuery(o.question, o.now);
  const previous = o.context?.length ? planQuery(o.context[o.context.length - 1]!, o.now) : undefined;
  if (!previous) return { plan, terms: plan.terms };
  return followUp(plan, previous, o.question);
}

/** A turn that goes on from the previous one ("And in France?", "what about Oslo"). */
const GOES_ON_FROM = /^\s*(and|what about|how about|same for)\b/i;

/**
 * A conversation's turn with the previous question's words; a country it names takes the place of
 * the previous one's, and a turn going on from it keeps its order (outside walkthrough: "Which
 * customer in Brazil spent the most?" then "And in France?" answered with Brazil's rows, unsorted).
 */
function followUp(plan: QueryPlan, previous: QueryPlan, question: string): { plan: QueryPlan; terms: string[] } {
  const replaced = new Set(plan.countries.length ? previous.countries.flatMap((c) => c.ownNames) : []);
  const carried = previous.terms.filter((t) => !replaced.has(t) && !(plan.countries.length && countriesIn([t]).length));
  const goesOn = GOES_ON_FROM.test(question);
  return {
    plan: goesOn ? { ...plan, order: plan.order ?? previous.order, sourceHint: plan.sourceHint ?? previous.sourceHint } : plan,
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
