// Finding records in an index: by their blinded words (FTS5's BM25) and by the meaning of their
// chunks (sqlite-vec, in the owner's rotated space), within the request's dates.
import { needles, type RetrievalRequest, type SearchHit, type SourceRecord } from "../types";
import type { IndexContext } from "./context";
import { openRecords, visible } from "./documents";

/** The request's phrases as needles: quoted in the question, so matched as phrases. */
const quoted = (request: RetrievalRequest) => new Set(needles({ ...request, terms: [] }));

/** The most neighbours sqlite-vec gives in one search. */
const MAX_KNN = 4096;

type Scores = Omit<SearchHit, "record">;

/** A record shown (not hidden while a put writes: documents.ts visible) and its date within the request's range, as SQL on connector_docs `d`, with its values. */
interface DateCondition {
  sql: string;
  params: Array<string | number>;
  /** Whether the request has a date range. */
  dated: boolean;
}

function dateCondition(ctx: IndexContext, request: RetrievalRequest): DateCondition {
  const shown = visible(ctx);
  const sql: string[] = [shown.sql];
  const params: Array<string | number> = [...shown.params];
  if (request.dateFrom) {
    sql.push(" AND d.record_date >= ?");
    params.push(request.dateFrom.toISOString());
  }
  if (request.dateTo) {
    sql.push(" AND d.record_date < ?");
    params.push(request.dateTo.toISOString());
  }
  return { sql: sql.join(""), params, dated: sql.length > 1 };
}

/**
 * Candidates with scores: the best BM25 matches of the words, and, given the question's
 * vector, the nearest chunks; a record found both ways carries both scores. A date range is
 * a condition of both searches (in SQL, on the record's date): the best in range, not the
 * best of all and then those in range, which lost the records a date-narrowed question asks for.
 */
export function rank(ctx: IndexContext, request: RetrievalRequest): SearchHit[] {
  const dates = dateCondition(ctx, request);
  const found = bestByWords(ctx, request, dates);
  if (request.vector) {
    // The question in the owner's rotated space: dot products, and so the ranking, are unchanged.
    const vector = ctx.keys.rotation().apply(request.vector);
    // Twice as many chunks as candidates asked: four times gave the same SciFact nDCG@10 (0.7404
    // test, 0.7427 train) and business test split (0.819), 0.002 more on its mail train half, and
    // cost ~8 ms more per question in records opened and scored.
    nearestChunks(ctx, vector, Math.min(request.limit * 2, MAX_KNN), dates, found);
    bestChunksOf(ctx, vector, found);
  }
  const records = openRecords(ctx, [...found.keys()]);
  const hits: SearchHit[] = [];
  for (const [doc, scores] of found) {
    const record = records.get(doc);
    if (record) hits.push({ record, ...scores });
  }
  return hits;
}

/** The best BM25 matches of the request's words and phrases, by doc. */
function bestByWords(ctx: IndexContext, request: RetrievalRequest, dates: DateCondition): Map<number, Scores> {
  const found = new Map<number, Scores>();
  const match = ctx.keys.blinder.match(needles(request), quoted(request));
  if (!match) return found;
  const rows = ctx.db
    .query<{ doc: number; score: number }, Array<string | number>>(
      `SELECT d.doc, -bm25(connector_terms) AS score FROM connector_terms f JOIN connector_docs d ON d.doc = f.rowid
       WHERE connector_terms MATCH ? AND d.owner = ?${dates.sql} ORDER BY bm25(connector_terms) LIMIT ?`,
    )
    .all(match, ctx.owner, ...dates.params, request.limit * 2);
  for (const r of rows) found.set(r.doc, { lexical: r.score });
  return found;
}

/**
 * The `k` chunks nearest `vector` (of records shown and in the date range), each record's nearest
 * kept (a record hidden while a put writes keeps its vectors until it is removed).
 */
function nearestChunks(ctx: IndexContext, vector: Float32Array, k: number, dates: DateCondition, found: Map<number, Scores>): void {
  // In a date range: the nearest among its chunks. Otherwise the nearest of all, those of hidden records left out after.
  const rows = dates.dated
    ? ctx.db
        .query<{ doc: number; ord: number; distance: number }, Array<Float32Array | string | number>>(
          `SELECT c.doc, c.ord, v.distance FROM connector_vec v JOIN connector_chunks c ON c.chunk = v.chunk_id
           WHERE v.embedding MATCH ? AND k = ? AND v.owner = ?
           AND v.chunk_id IN (SELECT c.chunk FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc WHERE d.owner = ?${dates.sql})
           ORDER BY v.distance`,
        )
        .all(vector, k, ctx.owner, ctx.owner, ...dates.params)
    : ctx.db
        .query<{ doc: number; ord: number; distance: number }, Array<Float32Array | string | number>>(
          `SELECT c.doc, c.ord, v.distance FROM connector_vec v JOIN connector_chunks c ON c.chunk = v.chunk_id
           JOIN connector_docs d ON d.doc = c.doc
           WHERE v.embedding MATCH ? AND k = ? AND v.owner = ?${dates.sql} ORDER BY v.distance`,
        )
        .all(vector, k, ctx.owner, ...dates.params);
  for (const r of rows) keepNearest(found, r.doc, 1 - r.distance, r.ord);
}

/**
 * Word matches the nearest-neighbour search did not reach: their best chunk's similarity, by a
 * search among their chunks only (vec0 reads them in its own order; a lookup per chunk was 3x slower).
 */
function bestChunksOf(ctx: IndexContext, vector: Float32Array, found: Map<number, Scores>): void {
  const docs = [...found].filter(([, hit]) => hit.dense === undefined).map(([doc]) => doc);
  if (docs.length === 0) return;
  const chunks = ctx.db
    .query<{ chunk: number; doc: number; ord: number }, [string]>(
      "SELECT chunk, doc, ord FROM connector_chunks WHERE doc IN (SELECT value FROM json_each(?)) AND embedded = 1",
    )
    .all(JSON.stringify(docs));
  if (chunks.length === 0) return;
  const of = new Map(chunks.map((c) => [c.chunk, c]));
  const rows = ctx.db
    .query<{ chunk: number; distance: number }, [Float32Array, number, string, string]>(
      `SELECT chunk_id AS chunk, distance FROM connector_vec
       WHERE embedding MATCH ? AND k = ? AND owner = ? AND chunk_id IN (SELECT value FROM json_each(?))`,
    )
    .all(vector, Math.min(chunks.length, MAX_KNN), ctx.owner, JSON.stringify([...of.keys()]));
  for (const r of rows) {
    const c = of.get(r.chunk)!;
    keepNearest(found, c.doc, 1 - r.distance, c.ord);
  }
}

/** A record's similarity is that of its nearest chunk, which is the one cited. */
function keepNearest(found: Map<number, Scores>, doc: number, similarity: number, chunk: number): void {
  const hit = found.get(doc);
  if (!hit) found.set(doc, { dense: similarity, chunk });
  else if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk });
}

/** Records matching any term or phrase, best BM25 first (newest first without words), within the date range. */
export function search(ctx: IndexContext, request: RetrievalRequest): SourceRecord[] {
  const match = ctx.keys.blinder.match(needles(request), quoted(request));
  const dates = dateCondition(ctx, request);
  const params: Array<string | number> = [ctx.owner, ...dates.params];
  const rows = match
    ? ctx.db
        .query<{ doc: number; record: Uint8Array }, Array<string | number>>(
          `SELECT d.doc, d.record FROM connector_terms f JOIN connector_docs d ON d.doc = f.rowid
           WHERE connector_terms MATCH ? AND d.owner = ?${dates.sql} ORDER BY bm25(connector_terms) LIMIT ?`,
        )
        .all(match, ...params, request.limit)
    : ctx.db
        .query<{ doc: number; record: Uint8Array }, Array<string | number>>(
          `SELECT d.doc, d.record FROM connector_docs d WHERE d.owner = ?${dates.sql} ORDER BY d.record_date DESC LIMIT ?`,
        )
        .all(...params, request.limit);
  return rows.map((r) => JSON.parse(ctx.keys.open(r.record, `doc/${r.doc}`)) as SourceRecord);
}
