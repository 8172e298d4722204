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

export type Scores = Omit<SearchHit, "record">;

/** What a question asks of one index, made ready by the thread that holds its keys (rank.ts). */
export interface CandidatesAsked {
  /** The question's words and phrases blinded as an FTS5 query; none: no word search. */
  match?: string;
  /** Each word or phrase of `match` alone (TermBlinder.matchParts): weighed by its rarity in this index (ownRarity). */
  parts?: string[];
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
  return { sql: sql.join(""), params, dated: sql.length > 1 };
}

/**
 * Candidates with scores: the best BM25 matches of the words, and, given the question's vector,
 * the nearest chunks; a record found both ways carries both scores. A date range is a condition
 * of both searches (in SQL, on the record's date): the best in range, not the best of all and
 * then those in range, which lost the records a date-narrowed question asks for. One read
 * transaction: every statement sees the same records (a put may switch a source's in meanwhile).
 */
export function candidates(ix: IndexRows, asked: CandidatesAsked, held?: HeldVectors): Candidates {
  return ix.db
    .transaction(() => {
      const dates = dateCondition(ix, asked);
      const found = bestByWords(ix, asked, dates);
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

/** The best BM25 matches of the blinded words and phrases, by doc. */
function bestByWords(ix: IndexRows, asked: CandidatesAsked, dates: DateCondition): Map<number, Scores> {
  const found = new Map<number, Scores>();
  if (!asked.match) return found;
  const rows = ix.db
    .query<{ doc: number; score: number }, Array<string | number>>(
      `SELECT d.doc, -bm25(connector_terms) AS score FROM connector_terms f JOIN connector_docs d ON d.doc = f.rowid
       WHERE connector_terms MATCH ? AND d.owner = ?${dates.sql} ORDER BY bm25(connector_terms) LIMIT ?`,
    )
    .all(asked.match, ix.owner, ...dates.params, asked.words);
  const own = ownRarity(ix, asked.parts ?? [], rows);
  for (const r of own ?? rows) found.set(r.doc, { lexical: r.score });
  return found;
}

/**
 * The word matches scored as if this index had the FTS5 table to itself, best first; undefined
 * when it does, or one word is asked (its weight scales every score alike). FTS5 weighs a word by
 * its rarity among all the table's rows, every index's counted, while each index blinds its words
 * with its own key: in a small index beside a large one every word looked rare. Among 11 invoices
 * beside 2,300 mails and receipts, "invoice" (in 6 of them) weighed 6.1 and "Coolblue" (in 2)
 * 7.0, where among the 11 alone FTS5 gives 0 and 1.3; a mention of "order" and "invoice"
 * outranked both Coolblue invoices for "Coolblue order invoices". Each word's BM25 (FTS5's, per
 * word) is re-weighed by FTS5's own idf over this index's rows: log((N - n + 0.5) / (n + 0.5)).
 */
function ownRarity(
  ix: IndexRows,
  parts: string[],
  rows: Array<{ doc: number; score: number }>,
): Array<{ doc: number; score: number }> | undefined {
  if (parts.length < 2 || rows.length === 0) return undefined;
  const tableRows = ftsRowCount(ix.db);
  const ownRows = ix.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?").get(ix.owner)!.n;
  if (tableRows === undefined || ownRows >= tableRows) return undefined;
  const idf = (rowsOf: number, hits: number) => Math.max(FTS5_LEAST_IDF, Math.log((rowsOf - hits + 0.5) / (hits + 0.5)));
  const score = new Map(rows.map((r) => [r.doc, 0]));
  for (const part of parts) {
    // Every hit of the part, scored: how many there are is its rarity (its token is this index's
    // alone, blinded with its key), and those among the candidates are re-weighed by it. One pass
    // over the part's hits, as FTS5's own bm25() makes to weigh it, read a row at a time (none
    // kept but the candidates'); a rowid IN (…) condition made a pass per candidate (~20x slower).
    const scores: Array<[number, number]> = [];
    let hits = 0;
    for (const h of ix.db
      .query<{ doc: number; score: number }, [string]>(
        "SELECT rowid AS doc, -bm25(connector_terms) AS score FROM connector_terms WHERE connector_terms MATCH ?",
      )
      .iterate(part)) {
      hits++;
      if (score.has(h.doc)) scores.push([h.doc, h.score]);
    }
    const reweigh = hits ? idf(ownRows, hits) / idf(tableRows, hits) : 0;
    for (const [doc, s] of scores) score.set(doc, score.get(doc)! + s * reweigh);
  }
  return rows.map((r) => ({ doc: r.doc, score: score.get(r.doc)! })).sort((a, b) => b.score - a.score);
}

/** What FTS5's bm25() takes for a word in more than half the rows (fts5_aux.c), whose idf would be 0 or less. */
const FTS5_LEAST_IDF = 1e-6;

/**
 * The rows FTS5 weighs words among: the first varint of its averages record (fts5Int.h
 * FTS5_AVERAGES_ROWID, row 1 of `_data`; SQLite's varint: 7 bits a byte, high bit set while more
 * follow), read in one lookup where count(*) reads every row; undefined if it cannot be read.
 */
export function ftsRowCount(db: Database): number | undefined {
  const block = db.query<{ block: Uint8Array }, []>("SELECT block FROM connector_terms_data WHERE id = 1").get()?.block;
  if (!block) return undefined;
  let n = 0;
  for (let i = 0; i < Math.min(block.length, 8); i++) {
    n = n * 128 + (block[i]! & 0x7f);
    if (block[i]! < 0x80) return n;
  }
  return undefined;
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
        `SELECT c.chunk, c.doc, c.ord FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc WHERE c.chunk IN (SELECT value FROM json_each(?))${dates.sql}`,
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
  const chunks = ix.db
    .query<{ chunk: number; doc: number; ord: number }, [string]>(
      "SELECT chunk, doc, ord FROM connector_chunks WHERE doc IN (SELECT value FROM json_each(?)) AND embedded = 1",
    )
    .all(JSON.stringify(docs));
  if (chunks.length === 0) return;
  const of = new Map(chunks.map((c) => [c.chunk, c]));
  if (memory) {
    const near = memory.of(
      vector,
      chunks.map((c) => c.chunk),
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

/** A record's similarity is that of its nearest chunk, which is the one cited. */
function keepNearest(found: Map<number, Scores>, doc: number, similarity: number, chunk: number): void {
  const hit = found.get(doc);
  if (!hit) found.set(doc, { dense: similarity, chunk });
  else if (hit.dense === undefined || similarity > hit.dense) Object.assign(hit, { dense: similarity, chunk });
}
