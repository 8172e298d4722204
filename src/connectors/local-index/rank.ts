// Finding records in an index: by their blinded words (FTS5's BM25) and by the meaning of their
// chunks (sqlite-vec, in the owner's rotated space), within the request's dates (candidates.ts).

import { chunkOfEmbedded } from "../../retrieval/chunk";
import { needles, type RetrievalRequest, type SearchHit, type SourceRecord } from "../types";
import { type Candidates, type CandidatesAsked, candidates, dateCondition, ownBm25 } from "./candidates";
import type { IndexContext } from "./context";
import { openRecords, storedChunkTexts, visible } from "./documents";
import { SearchWorkerFailed, searchOffThread } from "./searcher";

/** The request's phrases as needles: quoted in the question, so matched as phrases. */
export const quoted = (request: RetrievalRequest) => new Set(needles({ ...request, terms: [] }));

/**
 * Candidates with scores (candidates.ts): the best BM25 matches of the words and, given the
 * question's vector, the nearest chunks, within the request's dates. The SQL runs in the search
 * worker (searcher.ts: off the serving thread, D31), on this thread where there is none or it
 * failed; the words are blinded, the vector rotated and the records opened here, with the keys.
 */
export async function rank(ctx: IndexContext, request: RetrievalRequest): Promise<SearchHit[]> {
  // The owner's rotation made a few rows a turn, not at once on a first question (D31).
  const rotating = request.vector && ctx.keys.prepareRotation();
  if (rotating) await rotating;
  const asked = askedOf(ctx, request);
  let found: Candidates;
  try {
    const off = searchOffThread(ctx, asked);
    found = off ? stillShown(ctx, await off) : candidates(ctx, asked);
  } catch (error) {
    if (!(error instanceof SearchWorkerFailed)) throw error;
    found = candidates(ctx, asked);
  }
  return hitsOf(ctx, found);
}

/**
 * The worker's candidates whose rows are still shown now: it read them at an earlier moment, and
 * a removal (its connector's, its owner's: D25), or a put that wrote the record anew, may have
 * ended since. Looked up by row number on this thread (no search: the rows alone; `+d.owner` keeps
 * SQLite from scanning the owner's index whole instead, 10,053 rows of the Enron mail for ~80
 * candidates: 1.19 -> 0.45 ms a question).
 */
export function stillShown(ctx: IndexContext, read: Candidates): Candidates {
  if (read.found.size === 0) return read;
  const shown = visible(ctx);
  const rows = ctx.db
    .query<{ doc: number }, Array<string | number>>(
      `SELECT d.doc FROM connector_docs d WHERE d.doc IN (SELECT value FROM json_each(?)) AND +d.owner = ?${shown.sql}`,
    )
    .all(JSON.stringify([...read.found.keys()]), ctx.owner, ...shown.params);
  if (rows.length === read.found.size) return read;
  const now = new Set(rows.map((r) => r.doc));
  return {
    found: new Map([...read.found].filter(([doc]) => now.has(doc))),
    sealed: new Map([...read.sealed].filter(([doc]) => now.has(doc))),
  };
}

/** rank's candidates found on this thread, in this turn (what a reader sees at this moment, between two of a put's transactions say). */
export function rankHere(ctx: IndexContext, request: RetrievalRequest): SearchHit[] {
  return hitsOf(ctx, candidates(ctx, askedOf(ctx, request)));
}

/** What the request asks of the index's SQL: its words blinded and its vector rotated, with the owner's keys. */
export function askedOf(ctx: Pick<IndexContext, "keys">, request: RetrievalRequest): CandidatesAsked {
  return {
    parts: ctx.keys.blinder.matchParts(needles(request), quoted(request)),
    words: request.limit * 2,
    // Twice as many chunks as candidates asked: four times gave the same SciFact nDCG@10 (0.7404
    // test, 0.7427 train) and business test split (0.819), 0.002 more on its mail train half, and
    // cost ~8 ms more per question in records opened and scored.
    nearest: request.limit * 2,
    // The question in the owner's rotated space: dot products, and so the ranking, are unchanged.
    vector: request.vector && ctx.keys.rotation().apply(request.vector),
    dateFrom: request.dateFrom?.toISOString(),
    dateTo: request.dateTo?.toISOString(),
  };
}

/** The candidates with their records, opened here (the keys are this thread's). */
function hitsOf(ctx: IndexContext, found: Candidates): SearchHit[] {
  const records = openRecords(ctx, found.sealed);
  const hits: SearchHit[] = [];
  for (const [doc, scores] of found.found) {
    const record = records.get(doc);
    const sealed = found.sealed.get(doc) ?? new Uint8Array();
    const storedChunks = () => storedChunkTexts(ctx, doc, sealed)?.map((text) => chunkOfEmbedded(record!.title, text));
    // Its scores named one by one: spreading them was a copy of each candidate's on every question (issue 36).
    if (record) hits.push({ record, lexical: scores.lexical, dense: scores.dense, chunk: scores.chunk, storedChunks });
  }
  return hits;
}

/**
 * Records matching any term or phrase, best first by BM25 over this index's own rows (candidates.ts
 * ownBm25: FTS5's bm25() weighed them among every index's, and another user's rows changed the
 * order, D25), newest first without words; within the date range. One read transaction.
 */
export function search(ctx: IndexContext, request: RetrievalRequest): SourceRecord[] {
  const parts = ctx.keys.blinder.matchParts(needles(request), quoted(request));
  const dates = dateCondition(ctx, { dateFrom: request.dateFrom?.toISOString(), dateTo: request.dateTo?.toISOString() });
  const rows = ctx.db
    .transaction(() => {
      if (parts.length === 0)
        return ctx.db
          .query<{ doc: number; record: Uint8Array }, Array<string | number>>(
            `SELECT d.doc, d.record FROM connector_docs d WHERE d.owner = ?${dates.sql} ORDER BY d.record_date DESC LIMIT ?`,
          )
          .all(ctx.owner, ...dates.params, request.limit);
      const best = ownBm25(ctx, parts, dates, request.limit);
      const sealed = new Map(
        ctx.db
          .query<{ doc: number; record: Uint8Array }, [string]>(
            "SELECT doc, record FROM connector_docs WHERE doc IN (SELECT value FROM json_each(?))",
          )
          .all(JSON.stringify(best.map((b) => b.doc)))
          .map((r) => [r.doc, r.record]),
      );
      return best.flatMap(({ doc }) => (sealed.has(doc) ? [{ doc, record: sealed.get(doc)! }] : []));
    })
    .deferred();
  return rows.map((r) => JSON.parse(ctx.keys.open(r.record, `doc/${r.doc}`)) as SourceRecord);
}
