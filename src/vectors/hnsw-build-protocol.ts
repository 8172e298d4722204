// Messages between a store (partition-index.ts) and its index builder (hnsw-build-worker.ts).
import type { Vec0Table } from "./sqlite";

/** Build the snapshot of `partition`'s vectors in the database at `file` into `out`. */
export interface BuildAsked {
  file: string;
  /** The data folder (it holds the checked copy of sqlite-vec). */
  dataDir: string;
  /** The vec0 table the partition is kept in. */
  table: Vec0Table;
  partition: string;
  out: string;
}

/** The snapshot written, with how many vectors it holds; or why none was. */
export type BuildDone = { vectors: number } | { error: string };
