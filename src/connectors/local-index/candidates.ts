// An index's candidates for a question, as SQL alone: the best BM25 matches of its blinded words
// (FTS5), the chunks nearest its rotated vector (its vector store, src/vectors/), and the sealed
// rows of the records found. Nothing here needs the owner's keys, so it runs as well in the
// search worker (search-worker.ts, off the serving thread: D31) as on the thread that asks (rank.ts).
import type { Database } from "bun:sqlite";
import type { KeyedVector } from "../../crypto/rotation";
import { connectorVectors } from "../../vectors/embedded";
import { splitPartition } from "../../vectors/sqlite";
import { MAX_KNN } from "../../vectors/store";
import type { SearchHit } from "../types";
import { visible } from "./documents";
import type { HeldVectors, HeldVectorsOf } from "./held-vectors";
import { indexGeneration, type PhraseHits, type PhraseHitsMemo } from "./phrase-hits";
import { ftsTotals, lengthOf } from "./word-statistics";

export type Scores = Omit<SearchHit, "record">;

/** What a question asks of one index, made ready by the thread that holds its keys (rank.ts). */
export interface CandidatesAsked {
  /** The question's words and phrases, each blinded as an FTS5 phrase (TermBlinder.matchParts), any of them matched; none: no word search. */
  parts: string[];
  /** Word matches asked for. */
  words: number;
  /** Nearest chunks asked for. */
  nearest: number;
  /** The question's vector in the owner's rotated space; none: no search by meaning. */
  vector?: KeyedVector;
  /** The date range, as ISO text (records' dates). */
  dateFrom?: string;
  dateTo?: string;
}

/** Each record found, by its doc: its scores, and its row as stored (sealed). */
export interface Candidates {
  found: Map<number, Scores>;
  sealed: Map<number, Uint8Array>;
}

/** The database and the index's key in it: all a search needs. */
export interface IndexRows {
  readonly db: Database;
  readonly owner: string;
}

/** A record shown (not hidden while a put writes: documents.ts visible) and its date within the range, as SQL on connector_docs `d`, with its values. */
interface DateCondition {
  sql: string;
  params: Array<string | number>;
  /** Whether a date range is asked. */
  dated: boolean;
  /** The same condition of a record's number, source and date, for hits read before (phrase-hits.ts). */
  accepts: (doc: number, source: string, date: string | null) => boolean;
}

export function dateCondition(ix: IndexRows, range: { dateFrom?: string; dateTo?: string }): DateCondition {
  const shown = visible(ix);
  const sql: string[] = [shown.sql];
  const params: Array<string | number> = [...shown.params];
  if (range.dateFrom) {
    sql.push(" AND d.record_date >= ?");
    params.push(range.dateFrom);
  }
  if (range.dateTo) {
    sql.push(" AND d.record_date < ?");
    params.push(range.dateTo);
  }
  const { dateFrom, dateTo } = range;
  return {
    sql: sql.join(""),
    params,
    dated: sql.length > 1,
    // SQL's comparison of the ISO texts; a record without a date is in no range.
    accepts: (doc, source, date) =>
      shown.shown(doc, source) && (!dateFrom || (date !== null && date >= dateFrom)) && (!dateTo || (date !== null && date < dateTo)),
  };
}

/**
 * Candidates with scores: the best BM25 matches of the words, and, given the question's vector,
 * the nearest chunks; a record found both ways carries both scores. A date range is a condition
 * of both searches (in SQL, on the record's date): the best in range, not the best of all and
 * then those in range, which lost the records a date-narrowed question asks for. One read
 * transaction: every statement sees the same records (a put may switch a source's in meanwhile).
 */
export function candidates(ix: IndexRows, asked: CandidatesAsked, held?: HeldVectors, memo?: PhraseHitsMemo): Candidates {
  return ix.db
    .transaction(() => {
      const dates = dateCondition(ix, asked);
      const found = bestByWords(ix, asked, dates, memo && { memo, generation: indexGeneration(ix.db) });
      if (asked.vector) {
        // The search worker's copy of the vectors where it holds them (held-vectors.ts): the same results, one pass over memory.
        // Not for a partition past the threshold: its HNSW index answers, in the worker as on the serving thread.
        const { owner, connector } = splitPartition(ix.owner);
        const memory = connectorVectors(ix.db).indexed(owner, connector)
          ? undefined
          : held?.partition(ix.db, ix.owner, asked.vector.length);
        nearestChunks(ix, asked.vector, Math.min(asked.nearest, MAX_KNN), dates, found, memory);
        bestChunksOf(ix, asked.vector, found, memory);
      }
      const rows = ix.db
        .query<{ doc: number; record: Uint8Array }, [string]>(
          "SELECT doc, record FROM connector_docs WHERE doc IN (SELECT value FROM json_each(?))",
        )
        .all(JSON.stringify([...found.keys()]));
      return { found, sealed: new Map(rows.map((r) => [r.doc, r.record])) };
    })
    .deferred();
}

/** The best BM25 matches of the blinded words and phrases, by doc, scored by this index's own statistics (ownBm25). */
function bestByWords(ix: IndexRows, asked: CandidatesAsked, dates: DateCondition, kept?: KeptHits): Map<number, Scores> {
  const found = new Map<number, Scores>();
  for (const r of ownBm25(ix, asked.parts, dates, asked.words, kept)) found.set(r.doc, { lexical: r.score });
  return found;
}

/**
 * The index of connector_docs by record number that covers what a search asks of a record found
 * (its owner, source and date: the condition of dateCondition), connectors-013: SQLite's planner
 * takes the table's own rows by number, each a page of sealed record, unless told.
 */
const DOCS_BY_DOC = "connector_docs_by_doc";

/** FTS5's bm25() constants (fts5_aux.c): k1, b, and the idf it takes for a word in more than half the rows. */
export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const FTS5_LEAST_IDF = 1e-6;

/** FTS5's idf of a phrase in `hits` of `rows` rows. */
const idf = (rows: number, hits: number) => Math.max(FTS5_LEAST_IDF, Math.log((rows - hits + 0.5) / (hits + 0.5)));

/** A phrase's BM25 weight, idf aside, in a row of `length` words where the average is `average`. */
const saturation = (frequency: number, length: number, average: number) =>
  (frequency * (BM25_K1 + 1)) / (frequency + BM25_K1 * (1 - BM25_B + (BM25_B * length) / average));

/**
 * Each hit of a phrase (the owner, then the MATCH; with `ranged`, then the first and last row
 * number read): its FTS5 score and length, whether it is the index's, its record's source and
 * date, looked up in DOCS_BY_DOC (which holds them). Whether it is asked for (dateCondition) is
 * decided after: the hits are kept for other questions (phrase-hits.ts).
 */
export const wordHitsSql = (ranged = false) =>
  `SELECT f.rowid AS doc, -bm25(connector_terms) AS score, z.sz, d.owner = ? AS own, d.source, d.record_date AS date
     FROM connector_terms f LEFT JOIN connector_docs d INDEXED BY ${DOCS_BY_DOC} ON d.doc = f.rowid
     LEFT JOIN connector_terms_docsize z ON z.id = f.rowid
     WHERE connector_terms MATCH ?${ranged ? " AND f.rowid BETWEEN ? AND ?" : ""}`;

/** Phrases' hits kept between questions, and the generation of the index this question reads. */
interface KeptHits {
  memo: PhraseHitsMemo;
  generation: number;
}

/** Hits of a phrase read by ownBm25, one by one (tests count them). */
export const wordHitsRead = { count: 0 };

/**
 * The `limit` best word matches (records shown, in the date range) scored by FTS5's BM25 as if
 * this index had the table to itself (D25): each phrase's rarity among its own rows, each row's
 * length against its own rows' average (connector_terms_counts). FTS5's bm25() takes both from
 * the whole table, every index's rows: another user's 100 long rows flipped a short and a long
 * record's order, its scores told how much text others held, and among 11 invoices beside 2,300
 * mails every word looked rare ("invoice" in 6 weighed 6.1, "Coolblue" in 2 7.0; alone 0 and 1.3).
 * A phrase's count in a row is read back from FTS5's score of it alone (its only unknown, the
 * row's length known): s = idf * f(k1+1) / (f + K), so f = s K / (idf (k1+1) - s), an integer.
 * Every hit is scored, not FTS5's best by the table's statistics: the work is one pass over each
 * phrase's hits, a row lookup each, as FTS5's `ORDER BY bm25() LIMIT` made over the hits of all
 * (and its idf a pass per phrase); what is kept is a score per matching record of this index.
 */
export function ownBm25(
  ix: IndexRows,
  parts: string[],
  dates: DateCondition,
  limit: number,
  kept?: KeptHits,
): Array<{ doc: number; score: number }> {
  const own = ix.db
    .query<{ rows: number; length: number }, [string]>("SELECT rows, length FROM connector_terms_counts WHERE owner = ?")
    .get(ix.owner);
  const table = ftsTotals(ix.db);
  if (parts.length === 0 || !own || !table || own.rows === 0 || table.rows === 0) return [];
  const ownAverage = own.length / own.rows || 1;
  const tableAverage = table.length / table.rows || 1;
  // Every row of the phrase (its hit count is FTS5's), whether this index's and whether asked for.
  // Its length from FTS5's own row of it: connector_docs.terms_length is stored after the sealed
  // record, whose overflow pages reading it walks (a pass over 42,824 hits: 440 ms against 250).
  // An index of at most half the table's rows (the invoices beside the mail) reads only the hits
  // between its first and last row, where all of its own lie, and counts the phrase's others in
  // FTS5 alone (no score, no lookup): FTS5's bm25() takes its rarity from the whole table either way.
  const range =
    own.rows * 2 <= table.rows
      ? ix.db
          .query<{ first: number | null; last: number | null }, [string]>(
            "SELECT min(doc) AS first, max(doc) AS last FROM connector_docs WHERE owner = ?",
          )
          .get(ix.owner)
      : undefined;
  const ranged = range?.first != null && range.last != null;
  const hitsOf = ix.db.query<
    { doc: number; score: number; sz: Uint8Array | null; own: number | null; source: string; date: string | null },
    Array<string | number>
  >(wordHitsSql(ranged));
  const countOf = ix.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_terms WHERE connector_terms MATCH ?");
  const read = (part: string): PhraseHits => {
    let tableHits = ranged ? countOf.get(part)!.n : 0;
    const ownHits: PhraseHits["own"] = [];
    for (const h of hitsOf.iterate(ix.owner, part, ...(ranged ? [range!.first!, range!.last!] : []))) {
      wordHitsRead.count++;
      if (!ranged) tableHits++;
      if (h.own) ownHits.push({ doc: h.doc, score: h.score, length: lengthOf(h.sz), source: h.source, date: h.date });
    }
    return { tableHits, own: ownHits };
  };
  const score = new Map<number, number>();
  for (const part of parts) {
    const hits = kept ? kept.memo.get(kept.generation, ix.owner, part, () => read(part)) : read(part);
    const tableIdf = idf(table.rows, hits.tableHits);
    const ownIdf = idf(own.rows, hits.own.length);
    for (const h of hits.own) {
      if (!dates.accepts(h.doc, h.source, h.date)) continue;
      const k = BM25_K1 * (1 - BM25_B + (BM25_B * h.length) / tableAverage);
      const frequency = Math.max(1, Math.round((h.score * k) / (tableIdf * (BM25_K1 + 1) - h.score)));
      score.set(h.doc, (score.get(h.doc) ?? 0) + ownIdf * saturation(frequency, h.length, ownAverage));
    }
  }
  return [...score]
    .map(([doc, s]) => ({ doc, score: s }))
    .sort((a, b) => b.score - a.score || a.doc - b.doc)
    .slice(0, limit);
}

/**
 * The `k` chunks nearest `vector` (of records shown and in the date range), each record's nearest
 * kept (a record hidden while a put writes keeps its vectors until it is removed). Searched in the
 * index's vector store; its chunks' records read here.
 */
function nearestChunks(
  ix: IndexRows,
  vector: KeyedVector,
  k: number,
  dates: DateCondition,
  found: Map<number, Scores>,
  memory?: HeldVectorsOf,
): void {
  if (memory) {
    nearestHeld(ix, vector, k, dates, found, memory);
    return;
  }
  const { owner, connector } = splitPartition(ix.owner);
  const store = connectorVectors(ix.db);
  // In a date range: the nearest among its chunks. Otherwise the nearest of all, those of hidden records left out after.
  const ids = dates.dated
    ? ix.db
        .query<{ chunk: number }, Array<string | number>>(
          `SELECT c.chunk FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc WHERE d.owner = ?${dates.sql}`,
        )
        .all(ix.owner, ...dates.params)
        .map((r) => r.chunk)
    : undefined;
  const nearest = store.knn(owner, vector, k, { connectors: [connector], ids });
  if (nearest.length === 0) return;
  const of = new Map(
    ix.db
      .query<{ chunk: number; doc: number; ord: number }, Array<string | number>>(
        `SELECT c.chunk, c.doc, c.ord FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc
         WHERE c.chunk IN (SELECT value FROM json_each(?)) AND d.owner = ?${dates.sql}`,
      )
      .all(JSON.stringify(nearest.map((n) => n.id)), ix.owner, ...dates.params)
      .map((c) => [c.chunk, c]),
  );
  for (const n of nearest) {
    const c = of.get(n.id);
    if (c) keepNearest(found, c.doc, n.similarity, c.ord);
  }
}

/** nearestChunks by the vectors held in memory: the same rows, in the same order. */
function nearestHeld(
  ix: IndexRows,
  vector: Float32Array,
  k: number,
  dates: DateCondition,
  found: Map<number, Scores>,
  memory: HeldVectorsOf,
): void {
  type Place = { chunk: number; doc: number; ord: number };
  let near: ReturnType<HeldVectorsOf["nearest"]>;
  let places: Place[];
  if (dates.dated) {
    // The nearest among the range's chunks (vec0's `chunk_id IN (…)`).
    places = ix.db
      .query<Place, Array<string | number>>(
        `SELECT c.chunk, c.doc, c.ord FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc WHERE d.owner = ?${dates.sql}`,
      )
      .all(ix.owner, ...dates.params);
    const inRange = new Set(places.map((p) => p.chunk));
    near = memory.nearest(vector, k, (rowid) => inRange.has(rowid));
  } else {
    // The nearest of all, then those of records not shown left out (the join after vec0's search).
    near = memory.nearest(vector, k);
    places = ix.db
      .query<Place, Array<string | number>>(
        `SELECT c.chunk, c.doc, c.ord FROM connector_chunks c JOIN connector_docs d INDEXED BY ${DOCS_BY_DOC} ON d.doc = c.doc
         WHERE c.chunk IN (SELECT value FROM json_each(?))${dates.sql}`,
      )
      .all(JSON.stringify(near.map((n) => n.rowid)), ...dates.params);
  }
  const placeOf = new Map(places.map((p) => [p.chunk, p]));
  for (const n of near) {
    const p = placeOf.get(n.rowid);
    if (p) keepNearest(found, p.doc, 1 - n.distance, p.ord);
  }
}

/**
 * Word matches the nearest-neighbour search did not reach: their best chunk's similarity, by a
 * search among their chunks only (vec0 reads them in its own order; a lookup per chunk was 3x slower).
 */
function bestChunksOf(ix: IndexRows, vector: KeyedVector, found: Map<number, Scores>, memory?: HeldVectorsOf): void {
  const docs = [...found].filter(([, hit]) => hit.dense === undefined).map(([doc]) => doc);
  if (docs.length === 0) return;
  const chunks = ix.db.query<{ chunk: number; doc: number; ord: number }, [string]>(EMBEDDED_CHUNKS_SQL).all(JSON.stringify(docs));
  if (chunks.length === 0) return;
  const of = new Map(chunks.map((c) => [c.chunk, c]));
  if (memory) {
    // Within MAX_KNN each record keeps its nearest chunk alone: only those that may be it are reckoned.
    const near = memory.of(
      vector,
      chunks.map((c) => c.chunk),
      chunks.length <= MAX_KNN ? (chunk) => of.get(chunk)!.doc : undefined,
    );
    for (const n of near.slice(0, MAX_KNN)) {
      const c = of.get(n.rowid)!;
      keepNearest(found, c.doc, 1 - n.distance, c.ord);
    }
    return;
  }
  const { owner, connector } = splitPartition(ix.owner);
  const nearest = connectorVectors(ix.db).knn(owner, vector, Math.min(chunks.length, MAX_KNN), {
    connectors: [connector],
    ids: [...of.keys()],
  });
  for (const n of nearest) {
    const c = of.get(n.id)!;
    keepNearest(found, c.doc, n.similarity, c.ord);
  }
}

/** The embedded chunks of the records (a JSON array of their numbers), from the index connector_chunks_doc alone (connectors-014). */
export const EMBEDDED_CHUNKS_SQL =
  "SELECT chunk, doc, ord FROM connector_chunks WHERE doc IN (SELECT value FROM json_each(?)) AND embedded = 1";

/** A record's similarity is that of its nearest chunk, which is the one cited. */
export function keepNearest(found: Map<number, Scores>, doc: number, similarity: number, chunk: number): void {
  const hit = found.get(doc);
  if (!hit) found.set(doc, { dense: similarity, chunk });
  else if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk });
}
