// Where keyed vectors are kept and searched: one interface, two stores. The embedded
// one is sqlite-vec in the data folder's database (sqlite.ts, the local index's table as it is);
// the shared one is PostgreSQL with pgvector's HNSW index (postgres.ts), for several nodes on one
// database. A store only ever holds vectors rotated by their owner's secret rotation (D25): the
// type below is what VectorRotation.apply returns, so a plaintext vector does not type-check as one.
import type { KeyedVector } from "../crypto/rotation";

export type { KeyedVector } from "../crypto/rotation";

import type { Awaitable } from "../store/shared";

export type { Awaitable } from "../store/shared";

/**
 * A vector under its row's id: unique in the store, as the row ids of the caller's table are (a
 * chunk's number, an archived chunk's id); sqlite-vec keys its table by it alone.
 */
export interface StoredVector {
  id: number;
  vector: KeyedVector;
  /** When its row was made, in seconds since the epoch (an archived chunk's question), for a search within times; a store that keeps no times refuses one. */
  at?: number;
}

/** What a search may be narrowed to, besides its owner. */
export interface KnnFilter {
  /** Only these connectors of the owner (all of them when absent). */
  connectors?: readonly string[];
  /** Only these ids (a record's chunks, those in a date range). */
  ids?: readonly number[];
  /** Only vectors stored with an `at` from this second on (kept by the stores that keep times). */
  from?: number;
  /** Only vectors stored with an `at` before this second. */
  to?: number;
}

/** A neighbour found: its id, its connector, its cosine similarity to the query (1 - cosine distance). */
export interface Neighbour {
  id: number;
  connector: string;
  similarity: number;
}

export interface VectorStore {
  /** Stores vectors of `owner`'s `connector`, replacing theirs under the same ids; an id another owner or connector holds is refused, never taken. */
  put(owner: string, connector: string, vectors: readonly StoredVector[]): Awaitable<void>;
  /** Removes these ids of `owner`'s `connector` (those absent are no error). */
  remove(owner: string, connector: string, ids: readonly number[]): Awaitable<void>;
  /** The `k` vectors of `owner` nearest `query` (keyed by the same rotation), nearest first; never another owner's. */
  knn(owner: string, query: KeyedVector, k: number, filter?: KnnFilter): Awaitable<Neighbour[]>;
  /** Removes every vector of `owner`'s `connector`; how many. */
  dropConnector(owner: string, connector: string): Awaitable<number>;
  /** Removes every vector of `owner` (a user deleted, D13); how many. */
  dropOwner(owner: string): Awaitable<number>;
  /** How many vectors `owner` has (what a deletion checks is 0). */
  count(owner: string): Awaitable<number>;
  /** Removes every vector of every owner (another embedding model made them); how many. */
  dropAll(): Awaitable<number>;
}

/**
 * A store that answers at once, inside the caller's SQLite transaction (the embedded ones): the
 * local index writes a chunk's vector and marks it embedded in one transaction, and searches
 * its vectors in the same read transaction as its words.
 */
export interface EmbeddedVectorStore extends VectorStore {
  put(owner: string, connector: string, vectors: readonly StoredVector[]): void;
  remove(owner: string, connector: string, ids: readonly number[]): void;
  knn(owner: string, query: KeyedVector, k: number, filter?: KnnFilter): Neighbour[];
  dropConnector(owner: string, connector: string): number;
  dropOwner(owner: string): number;
  count(owner: string): number;
  dropAll(): number;
}

/** The most neighbours one search gives (sqlite-vec's own limit, kept for both stores so they answer alike). */
export const MAX_KNN = 4096;

/** A search's `k` refused before any store sees it. */
export function checkK(k: number): void {
  if (!Number.isInteger(k) || k < 1 || k > MAX_KNN) throw new RangeError(`k must be a whole number from 1 to ${MAX_KNN}, not ${k}`);
}
