// Messages between the serving thread (searcher.ts) and the search worker (search-worker.ts).
import type { CandidatesAsked, Scores } from "./candidates";

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

/** The candidates in the order they were found (the ranking's ties keep it), or why none came. */
export type FromSearcher =
  | { seq: number; found: Array<[number, Scores]>; sealed: Array<[number, Uint8Array]> }
  | { seq: number; error: string };
