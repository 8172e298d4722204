// The query pipeline: plan the question, ask every connector in parallel (each with a
// timeout; a slow or failing one yields a note, never a failed query), score every candidate
// by words and by meaning, fuse, and keep the best chunk of each record with its citation.
import { OPERATOR_OWNER } from "../auth/subjects";
import type { ActiveConnector, ConnectorRegistry } from "../connectors/registry";
import { shownRecord } from "../connectors/source-url";
import { ORDER_RANK, type SearchHit, type SourceRecord } from "../connectors/types";
import { cosine } from "../embedding/embedder";
import type { EmbeddingService } from "../embedding/service";
import type { Logger } from "../log";
import { amountSignal } from "./amounts";
import { bm25Scores, words } from "./bm25";
import { embeddingText, recordChunks } from "./chunk";
import type { QueryPlan } from "./plan";

/**
 * Weight of the dense score in the fusion, tuned on the SciFact train split only
 * (scripts/eval/scifact.ts --split train --sweep: nDCG@10 0.744-0.747 for weights 0.55-0.70,
 * 0.703 for words alone, 0.684 for meaning alone); the plateau's middle. Test split: 0.743.
 */
export const DENSE_WEIGHT = 0.6;
export const CONNECTOR_TIMEOUT_MS = 8_000;
const HINT_BOOST = 0.05;
const TABLE_KIND_BOOST = 0.15;
/** A row a table put first when sorted as the question asked ("spent the most"); halved, thirded… for the next. */
const ORDER_BOOST = 0.3;
/** A person named in the question found in the mail's sender (or, less, its recipients). */
const SENDER_BOOST = 0.15;
const RECIPIENT_BOOST = 0.05;
/** A document whose own text names a year of the time asked for (documents carry no record date). */
const DOCUMENT_DATE_BOOST = 0.1;

export interface RankedChunk {
  connectorId: string;
  connectorLabel: string;
  /** Whose keys hold the record's vectors: the user, or the operator for their connectors. */
  owner: string;
  record: SourceRecord;
  /** Position of the chunk within its record. */
  chunkIndex: number;
  text: string;
  score: number;
  lexical: number;
  dense?: number;
  /** Other copies of the same record (the same Message-ID or the same text), by source URL. */
  copies?: string[];
  /** The record's chunks, while ranking (dropped before results are returned). */
  chunks?: string[];
}

export interface QueryOptions {
  user: string;
  question: string;
  /** Earlier questions of the conversation, oldest first. */
  context?: string[];
  connectorIds?: string[];
  /** Results kept per connector. */
  perConnector: number;
  sourceType?: "email" | "file";
  dateFrom?: Date;
  dateTo?: Date;
  now?: Date;
  denseWeight?: number;
  timeoutMs?: number;
  /** Candidates asked of each connector (default: three times perConnector, at least 20). */
  candidates?: number;
  /** Whether the best chunk's text is wanted (evaluation needs only the ranking). */
  texts?: boolean;
  /** For the DEBUG lines of this question (CORPUS_DEBUG_MODE). */
  requestId?: string;
}

export interface QueryOutcome {
  plan: QueryPlan;
  vector: Float32Array;
  /** Best first; at most `perConnector` per connector. */
  chunks: RankedChunk[];
  connectorsSearched: number;
  totalFound: number;
  notes: string[];
}

/** `work` within `ms`; once the time is up, its signal tells the connector to drop what it has not done. */
function withTimeout<T>(work: (signal: AbortSignal) => Promise<T>, ms: number, label: string): Promise<T> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      controller.abort();
      reject(new Error(`${label}: no answer within ${ms / 1000} s`));
    }, ms);
  });
  return Promise.race([work(controller.signal), late]).finally(() => clearTimeout(timer));
}

/**
 * Scores as a share of the best: a record that matches fewer of the words scores less, never
 * nothing (min-max gave the weakest match 0: a Customer row naming Paris sank below every
 * Invoice row naming it, and out of the connector's ten).
 */
const byBest = (xs: number[]) => {
  const hi = Math.max(0, ...xs);
  return (x: number) => (hi > 0 ? x / hi : 0);
};

const minMax = (xs: number[]) => {
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  return (x: number) => (hi > lo ? (x - lo) / (hi - lo) : xs.length ? 1 : 0);
};

/**
 * Characters the chunk cache holds (records' text and their chunks, about twice the text): ~4 MB.
 * A count of 4,096 records grew the request thread's heap by tens of MB over the questions asked
 * while a mail folder embedded (records of 5-50 kB each); cutting a kept result again costs ~1 ms.
 */
export const CHUNK_CACHE_CHARS = 4_000_000;

interface CachedChunks {
  title: string;
  content: string;
  chunks: string[];
  chars: number;
}

/** How many of the best results the DEBUG line of a ranking lists. */
export const DEBUG_TOP_RESULTS = 10;
const ms = (since: number) => Math.round((performance.now() - since) * 10) / 10;

/** The note for an operator connector that failed: why is for the operator's log, not for users. */
export const OPERATOR_UNAVAILABLE = "unavailable right now";

export class QueryService {
  /**
   * Chunks of records seen recently: cutting a long record costs more than ranking it. Keyed by
   * owner, connector and record, and kept only while the text is the same (never shared by hash).
   */
  private readonly chunkCache = new Map<string, CachedChunks>();
  private chunkCacheChars = 0;

  constructor(
    private readonly connectors: ConnectorRegistry,
    private readonly embeddings: EmbeddingService,
    /**
     * DEBUG lines (CORPUS_DEBUG_MODE): the plan, each connector's time, the scores of the best
     * results. Shapes and numbers only: no word of the question, no text, title, path or id of a
     * record (the data folder keeps those sealed or hashed; a log is no place for them either).
     */
    private readonly log?: Logger,
  ) {}

  private chunksOf(owner: string, connectorId: string, record: SourceRecord): string[] {
    const key = `${owner}\u0000${connectorId}\u0000${record.id}`;
    const cached = this.chunkCache.get(key);
    if (cached && cached.title === record.title && cached.content === record.content) return cached.chunks;
    const chunks = recordChunks(record, this.embeddings.tokenizer);
    this.forgetChunks(key);
    const chars = record.title.length + record.content.length + chunks.reduce((n, c) => n + c.length, 0);
    if (chars > CHUNK_CACHE_CHARS / 4) return chunks;
    while (this.chunkCacheChars + chars > CHUNK_CACHE_CHARS) this.forgetChunks(this.chunkCache.keys().next().value!);
    this.chunkCache.set(key, { title: record.title, content: record.content, chunks, chars });
    this.chunkCacheChars += chars;
    return chunks;
  }

  private forgetChunks(key: string): void {
    const gone = this.chunkCache.get(key);
    if (!gone) return;
    this.chunkCache.delete(key);
    this.chunkCacheChars -= gone.chars;
  }

  /** Characters the chunk cache holds now (tests). */
  get cachedChunkChars(): number {
    return this.chunkCacheChars;
  }

  async run(o: QueryOptions): Promise<QueryOutcome> {
    // chrono-node loads on the first question, not at start-up.
    const { planQuery } = await import("./plan");
    const debug = this.log?.enabled("DEBUG") ? this.log : undefined;
    const started = performance.now();
    const plan = planQuery(o.question, o.now);
    const previous = o.context?.length ? planQuery(o.context[o.context.length - 1]!, o.now) : undefined;
    const terms = [...new Set([...plan.terms, ...(previous?.terms ?? [])])];
    // Dates named in the question narrow mail and tables, whose records carry their own dates;
    // a document's date is only its file time, so there they do not (explicit filters do).
    const planned = (a: ActiveConnector) => (a.datesAreFileTimes ? {} : { dateFrom: plan.dateFrom, dateTo: plan.dateTo });
    const active = this.connectors.active(o.user, o.connectorIds);
    const embedText = [...(o.context ?? []).slice(-2), o.question].join("\n");
    debug?.debug("query planned", {
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
      connectors: active.map((a) => a.id),
      per_connector: o.perConnector,
    });
    const embedStarted = performance.now();
    const [vector] = await this.embeddings.embed(o.user, [embedText], "urgent");
    const embedMs = ms(embedStarted);
    const notes: string[] = [];
    const candidates = o.candidates ?? Math.max(20, o.perConnector * 3);

    const ask = (withPlannedDates: boolean) =>
      Promise.allSettled(
        active.map(async (a) => {
          const dates = o.dateFrom || o.dateTo ? { dateFrom: o.dateFrom, dateTo: o.dateTo } : withPlannedDates ? planned(a) : {};
          const work = (signal: AbortSignal) => {
            const request = {
              terms,
              phrases: plan.phrases,
              ...dates,
              limit: candidates,
              vector,
              signal,
              caller: o.user,
              order: plan.order,
            };
            return a.connector.rank
              ? a.connector.rank(request)
              : a.connector.search(request).then((rs) => rs.map((record): SearchHit => ({ record })));
          };
          const asked = performance.now();
          try {
            const hits = await withTimeout(work, o.timeoutMs ?? CONNECTOR_TIMEOUT_MS, a.id);
            debug?.debug("connector searched", {
              request_id: o.requestId ?? null,
              connector: a.id,
              kind: a.kind,
              owner: a.owner,
              outcome: "ok",
              ms: ms(asked),
              hits: hits.length,
            });
            return { a, hits };
          } catch (error) {
            // Not the reason: a source's error may quote what it holds.
            const late = error instanceof Error && error.message.startsWith(`${a.id}: no answer within`);
            debug?.debug("connector searched", {
              request_id: o.requestId ?? null,
              connector: a.id,
              kind: a.kind,
              owner: a.owner,
              outcome: late ? "timed out" : "failed",
              ms: ms(asked),
              hits: 0,
            });
            throw error;
          }
        }),
      );
    let answers = await ask(true);
    // A time asked for that no record meets: answered from any date, with a note, never empty.
    const planDated = !o.dateFrom && !o.dateTo && (plan.dateFrom || plan.dateTo);
    const dated = (x: (typeof answers)[number]) => x.status === "fulfilled" && !x.value.a.datesAreFileTimes;
    if (planDated && answers.some(dated) && answers.every((x) => !dated(x) || (x.status === "fulfilled" && x.value.hits.length === 0))) {
      answers = await ask(false);
      notes.push(`nothing is dated ${describeRange(plan.dateFrom, plan.dateTo)}; showing results from any date`);
    }

    const scored: RankedChunk[] = [];
    /** For each scored chunk: its connector's place among the answers, and its text on the pool's scale. */
    const groupOf: number[] = [];
    const poolTexts: string[] = [];
    let pendingVectors = 0;
    answers.forEach((answer, i) => {
      const a = active[i]!;
      const owner = a.owner === "operator" ? OPERATOR_OWNER : o.user;
      if (answer.status === "rejected") {
        const reason = answer.reason instanceof Error ? answer.reason.message : "failed";
        // An operator connector's reason names its host, account or URL, which users are not shown.
        if (a.owner === "operator") notes.push(`${a.id}: ${OPERATOR_UNAVAILABLE}`);
        else notes.push(reason.startsWith(`${a.id}:`) ? reason : `${a.id}: ${reason}`);
        return;
      }
      const hits = answer.value.hits.filter((h) => !o.sourceType || h.record.type === o.sourceType);
      const progress = a.connector.progress?.();
      if (progress && progress.embedded < progress.total)
        notes.push(`${a.id}: indexing, ${progress.embedded} of ${progress.total} chunks embedded; answering from what is ready`);
      if (hits.length === 0) return;
      // Words: the source's own BM25 where it has one (a record it found only by meaning scored
      // lowest), else BM25 over these candidates (IMAP, SQL).
      const ownScores = hits.some((h) => h.lexical !== undefined);
      const local = ownScores
        ? []
        : bm25Scores(
            hits.map((h) => wordsText(h.record)),
            terms,
          );
      const lowest = ownScores ? Math.min(...hits.filter((h) => h.lexical !== undefined).map((h) => h.lexical!)) : 0;
      const lexical = hits.map((h, j) => h.lexical ?? (ownScores ? lowest : (local[j] ?? 0)));
      // A source's own BM25 ranked these out of all it holds: its weakest is the floor. A source
      // that gave every record containing a word (SQL, IMAP) gave matches only: each scores its
      // share of the best (train split of scripts/eval/business.ts: shop 0.722 -> 0.949).
      const normLex = ownScores ? minMax(lexical) : byBest(lexical);
      // The connector's own scores say which of its records match best, not how well its best
      // matches beside another source's: each connector's best is scaled by BM25 over the whole
      // pool of candidates (one scale), so no source wins by being alone in its group.
      const group = i;
      for (const [j, h] of hits.entries()) {
        let dense = h.dense;
        let best = h.chunk;
        let chunks: string[] | undefined;
        // A source that embeds its own chunks (a folder's index) gives the vectors it has; the
        // rest are on their way: chunking them, looking them up and queueing them again on every
        // question held the request thread for ~1 s per question while a large folder embedded.
        if (dense === undefined && !a.connector.progress) {
          // No vectors from the source: those of its chunks seen before, from the cache.
          chunks = this.chunksOf(owner, a.id, h.record);
          if (chunks.length === 0) continue;
          const texts = chunks.map((c) => embeddingText(h.record.title, c));
          this.embeddings.cached(owner, texts).forEach((v, k) => {
            if (!v) return;
            const sim = cosine(vector!, v);
            if (dense === undefined || sim > dense) {
              dense = sim;
              best = k;
            }
          });
          if (dense === undefined) {
            pendingVectors++;
            // Seen for the first time: embedded in the background, ready for the next question.
            void this.embeddings.embed(owner, texts, "background").catch(() => {});
          }
        }
        // As users are shown it: an operator connector's record names no host, account or path.
        const record = shownRecord(a, h.record);
        groupOf.push(group);
        poolTexts.push(poolText(h.record));
        scored.push({
          connectorId: a.id,
          connectorLabel: a.label,
          owner,
          record,
          chunkIndex: best ?? -1,
          text: "",
          score: 0,
          lexical: normLex(lexical[j]!),
          dense,
          chunks,
        });
      }
    });
    calibrateLexical(scored, groupOf, poolTexts, terms);
    if (pendingVectors)
      notes.push(`${pendingVectors} records seen for the first time were ranked by their words; their meaning is being indexed`);

    const w = o.denseWeight ?? DENSE_WEIGHT;
    const denseValues = scored.filter((c) => c.dense !== undefined).map((c) => c.dense!);
    const normDense = minMax(denseValues);
    // A record not yet embedded is taken as of middling meaning: neither first nor last for it.
    const unknownDense = denseValues.length ? denseValues.reduce((a, b) => a + normDense(b), 0) / denseValues.length : 0;
    for (const c of scored) {
      c.score =
        denseValues.length === 0 ? c.lexical : w * (c.dense === undefined ? unknownDense : normDense(c.dense)) + (1 - w) * c.lexical;
      c.score += evidence(plan, c.record);
      c.score = Math.round(c.score * 10_000) / 10_000;
    }
    scored.sort((x, y) => y.score - x.score);
    const perConnector = new Map<string, number>();
    const kept = collapseCopies(scored).filter((c) => {
      const n = perConnector.get(c.connectorId) ?? 0;
      perConnector.set(c.connectorId, n + 1);
      return n < o.perConnector;
    });
    debug?.debug("query ranked", {
      request_id: o.requestId ?? null,
      candidates: scored.length,
      kept: kept.length,
      dense_weight: w,
      embed_ms: embedMs,
      ms: ms(started),
      // Where a result came from and how it scored; never what it says or which record it is.
      top: kept.slice(0, DEBUG_TOP_RESULTS).map((c, i) => ({
        rank: i + 1,
        connector: c.connectorId,
        score: c.score,
        lexical: Math.round(c.lexical * 10_000) / 10_000,
        dense: c.dense === undefined ? null : Math.round(c.dense * 10_000) / 10_000,
        chunk: c.chunkIndex,
      })),
    });
    // The text of the best chunk, for the results kept only.
    for (const c of o.texts === false ? [] : kept) {
      const chunks = c.chunks ?? this.chunksOf(c.owner, c.connectorId, c.record);
      if (c.chunkIndex < 0 || c.chunkIndex >= chunks.length) c.chunkIndex = bestByWords(chunks, terms);
      if (c.record.type === "email") c.chunkIndex = ownTextFirst(c.record.content, chunks, c.chunkIndex, terms);
      c.text = chunks[c.chunkIndex] ?? c.record.title;
      delete c.chunks;
    }
    return { plan, vector: vector!, chunks: kept, connectorsSearched: active.length, totalFound: scored.length, notes };
  }
}

function describeRange(from?: Date, to?: Date): string {
  const day = (d: Date) => d.toISOString().slice(0, 10);
  if (from && to) return `from ${day(from)} to ${day(new Date(to.getTime() - 1))}`;
  return from ? `since ${day(from)}` : `before ${day(to!)}`;
}

/** The text BM25 over the pool reads: title, mail headers, and the start of the content. */
function poolText(r: SourceRecord): string {
  // A row's title is one of its columns, already in its text: counted once, as every column.
  if (isRow(r)) return r.content.slice(0, 6000);
  const m = r.metadata;
  const head = r.type === "email" ? ` ${m.from ?? ""} ${m.to ?? ""} ${m.cc ?? ""}` : "";
  return `${r.title} ${r.title}${head} ${r.content.slice(0, 6000)}`;
}

/** The text a source without word scores of its own is ranked by: title and text (a row: its columns). */
const wordsText = (r: SourceRecord) => (isRow(r) ? r.content : `${r.title} ${r.content}`);

const isRow = (r: SourceRecord) => r.metadata.table !== undefined;

/** Scales each connector's normalised lexical scores by its best match on the pool's one scale. */
function calibrateLexical(scored: RankedChunk[], groupOf: number[], texts: string[], terms: string[]): void {
  if (new Set(groupOf).size < 2) return;
  const pool = bm25Scores(texts, terms);
  const best = Math.max(...pool);
  if (!(best > 0)) return;
  const groupBest = new Map<number, number>();
  for (const [k, g] of groupOf.entries()) groupBest.set(g, Math.max(groupBest.get(g) ?? 0, pool[k]!));
  for (const [k, c] of scored.entries()) c.lexical *= groupBest.get(groupOf[k]!)! / best;
}

/** Words of a person's name as they appear in addresses and display names. */
const nameParts = (name: string) =>
  name
    .toLowerCase()
    .split(/\s+/)
    .filter((x) => x.length > 1);

/** Soft signals of the question beyond words and meaning: kind, people, amounts, dates in documents. */
function evidence(plan: QueryPlan, r: SourceRecord): number {
  let s = 0;
  // A hint is about the kind of record: documents are files, not rows of a table named "invoice".
  const kind = r.type === "email" ? "email" : isRow(r) ? "row" : "file";
  if (plan.sourceHint && kind === plan.sourceHint) s += HINT_BOOST;
  // A row is of the kind its table names: a "Customer" row is the customer asked for, more
  // than another table's row that mentions the same city; not when documents are asked for
  // ("fuel invoice from Poland" wants the invoice, not the shop's Invoice rows billed to Warsaw).
  if (
    kind === "row" &&
    plan.sourceHint !== "file" &&
    plan.terms.some((t) => t.replace(/s$/, "") === String(r.metadata.table).toLowerCase())
  )
    s += TABLE_KIND_BOOST;
  // A table sorted as the question asked ("which customer spent the most"): its first rows answer it.
  const rank = r.metadata[ORDER_RANK];
  if (plan.order && typeof rank === "number" && rank >= 1) s += ORDER_BOOST / rank;
  if (r.type === "email" && plan.people.length) {
    const from = String(r.metadata.from ?? "").toLowerCase();
    const others = `${r.metadata.to ?? ""} ${r.metadata.cc ?? ""}`.toLowerCase();
    for (const p of plan.people) {
      const parts = nameParts(p);
      const last = parts[parts.length - 1]!;
      if (from.includes(last)) s += SENDER_BOOST;
      else if (others.includes(last)) s += RECIPIENT_BOOST;
    }
  }
  if (kind === "file" && plan.timeAsked && (plan.dateFrom || plan.dateTo)) {
    const lo = plan.dateFrom?.getUTCFullYear() ?? 1900;
    const hi = plan.dateTo ? new Date(plan.dateTo.getTime() - 1).getUTCFullYear() : 2100;
    const years = [...r.content.matchAll(/(?<!\d)(19\d\d|20\d\d)(?!\d)/g)].map((m) => Number(m[1]));
    if (years.some((y) => y >= lo && y <= hi)) s += DOCUMENT_DATE_BOOST;
  }
  return s + amountSignal(plan, r);
}

/** What makes two records copies of one: the same Message-ID, or the same title and text. */
function copyKeys(c: RankedChunk): string[] {
  const id = c.record.type === "email" ? String(c.record.metadata.message_id ?? "") : "";
  const body = c.record.content.replace(/\s+/g, " ").trim().toLowerCase();
  const text = `text:${c.record.title.toLowerCase().replace(/^((re|fw|fwd):\s*)+/, "")}\u0000${body}`;
  // A body too short to tell messages apart ("see attached") makes no copies by itself.
  const keys = body.length >= 40 ? [text] : [`record:${c.connectorId}\u0000${c.record.id}`];
  return id ? [`id:${id}`, ...keys] : keys;
}

/** Copies of one record (best first) collapse into the first, which lists where the others are. */
function collapseCopies(sorted: RankedChunk[]): RankedChunk[] {
  const first = new Map<string, RankedChunk>();
  const out: RankedChunk[] = [];
  for (const c of sorted) {
    const keys = copyKeys(c);
    const kept = keys.map((k) => first.get(k)).find(Boolean);
    if (kept) {
      (kept.copies ??= []).push(c.record.source_url);
      continue;
    }
    for (const k of keys) first.set(k, c);
    out.push(c);
  }
  return out;
}

/** Where a mail's quoted or forwarded part begins (its length when there is none). */
const QUOTE_START =
  /-{3,}\s*(original message|forwarded by)|^\s*"?[^"\n]{1,60}"?\s*<[^>\s]+@[^>\s]+>\s+on\s+\d|^\s*on .{5,80} wrote:\s*$|^>/im;

/**
 * The chunk to cite from a mail: its own words rather than the message it quotes or forwards,
 * when its own part speaks to the question at all (issue 16: cited chunks were often
 * "-----Original Message-----" headers).
 */
function ownTextFirst(content: string, chunks: string[], best: number, terms: string[]): number {
  const m = QUOTE_START.exec(content);
  if (!m || m.index < 20) return best;
  const at = (chunk: string) => {
    const probe = chunk.trim().slice(0, 40);
    const i = probe ? content.indexOf(probe) : -1;
    return i < 0 ? Number.POSITIVE_INFINITY : i;
  };
  if (at(chunks[best] ?? "") < m.index) return best;
  const want = new Set(terms.flatMap(words));
  let pick = -1;
  let pickScore = 0;
  chunks.forEach((c, i) => {
    if (at(c) >= m.index) return;
    const score = new Set(words(c).filter((w) => want.has(w))).size;
    if (score > pickScore) {
      pick = i;
      pickScore = score;
    }
  });
  return pick >= 0 ? pick : best;
}

function bestByWords(chunks: string[], terms: string[]): number {
  const want = new Set(terms.flatMap(words));
  let best = 0;
  let bestScore = -1;
  chunks.forEach((c, i) => {
    const score = words(c).filter((w) => want.has(w)).length;
    if (score > bestScore) {
      bestScore = score;
      best = i;
    }
  });
  return best;
}
