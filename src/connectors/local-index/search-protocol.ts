// Messages between the serving thread (searcher.ts) and the search worker (search-worker.ts).
import type { Candidates, CandidatesAsked, Scores } from "./candidates";

/** One index's candidates asked for, of the database at `file` (its data folder holds the checked copy of sqlite-vec). */
export interface ToSearcher {
  seq: number;
  file: string;
  dataDir: string;
  owner: string;
  /** Whether the serving thread reads the database through its mapping now (store/database.ts readThroughMapping): the worker reads alike. */
  mapped: boolean;
  asked: CandidatesAsked;
}

/**
 * A question's candidates as two buffers, handed over, not cloned: each candidate's numbers, then
 * each sealed row's doc and length (`numbers`), and the rows back to back (`rows`). A reply of
 * objects (a pair and a scores object a candidate, a row's own buffer each, ~80 candidates and
 * ~480 KB of rows a question over the Enron mail) was cloned by the worker and again by the
 * serving thread, which reads the replies of every question (D31): 17% of the worker's time,
 * measured.
 */
export interface PackedCandidates {
  found: number;
  sealed: number;
  numbers: Float64Array<ArrayBuffer>;
  rows: Uint8Array<ArrayBuffer>;
}

/** The candidates in the order they were found (the ranking's ties keep it), or why none came. */
export type FromSearcher = ({ seq: number } & PackedCandidates) | { seq: number; error: string };

/** A candidate's numbers in `numbers`: its doc, which scores it has (HAS_*), its lexical and dense scores, its chunk. */
const FOUND_FIELDS = 5;
/** A sealed row's in `numbers`, after the candidates': its doc and its length in `rows`. */
const ROW_FIELDS = 2;
const HAS_LEXICAL = 1;
const HAS_DENSE = 2;
const HAS_CHUNK = 4;

/** `c` packed for the serving thread (the buffers of `numbers` and `rows` to be transferred). */
export function packCandidates(c: Candidates): PackedCandidates {
  const numbers = new Float64Array(c.found.size * FOUND_FIELDS + c.sealed.size * ROW_FIELDS);
  let i = 0;
  for (const [doc, s] of c.found) {
    numbers[i] = doc;
    numbers[i + 1] =
      (s.lexical !== undefined ? HAS_LEXICAL : 0) | (s.dense !== undefined ? HAS_DENSE : 0) | (s.chunk !== undefined ? HAS_CHUNK : 0);
    numbers[i + 2] = s.lexical ?? 0;
    numbers[i + 3] = s.dense ?? 0;
    numbers[i + 4] = s.chunk ?? 0;
    i += FOUND_FIELDS;
  }
  let bytes = 0;
  for (const row of c.sealed.values()) bytes += row.byteLength;
  const rows = new Uint8Array(bytes);
  let at = 0;
  for (const [doc, row] of c.sealed) {
    numbers[i] = doc;
    numbers[i + 1] = row.byteLength;
    rows.set(row, at);
    at += row.byteLength;
    i += ROW_FIELDS;
  }
  return { found: c.found.size, sealed: c.sealed.size, numbers, rows };
}

/** The candidates `packCandidates` packed, in the same orders, each sealed row a view of `rows`. */
export function unpackCandidates(p: PackedCandidates): Candidates {
  const found = new Map<number, Scores>();
  const { numbers } = p;
  let i = 0;
  for (let n = 0; n < p.found; n++, i += FOUND_FIELDS) {
    const has = numbers[i + 1]!;
    // The keys in the order candidates.ts gives them (lexical first, then dense and chunk).
    const s: Scores = {};
    if (has & HAS_LEXICAL) s.lexical = numbers[i + 2]!;
    if (has & HAS_DENSE) s.dense = numbers[i + 3]!;
    if (has & HAS_CHUNK) s.chunk = numbers[i + 4]!;
    found.set(numbers[i]!, s);
  }
  const sealed = new Map<number, Uint8Array>();
  let at = 0;
  for (let n = 0; n < p.sealed; n++, i += ROW_FIELDS) {
    const length = numbers[i + 1]!;
    sealed.set(numbers[i]!, p.rows.subarray(at, at + length));
    at += length;
  }
  return { found, sealed };
}
