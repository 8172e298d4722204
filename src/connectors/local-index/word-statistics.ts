// What FTS5 keeps of the word index's lengths, read from its own records: each row's length in
// words (its `_docsize` row) and the table's rows and total length (its averages record). Read to
// score each index's words by BM25 over its own rows (candidates.ts ownBm25, D25).
import type { Database } from "bun:sqlite";

/**
 * The varints of an FTS5 record (SQLite's: 7 bits a byte, high bit set while more follow; the
 * 9-byte form, past 2^56, never met by counts of words).
 */
function varints(block: Uint8Array): number[] {
  const values: number[] = [];
  let n = 0;
  for (let i = 0; i < block.length; i++) {
    n = n * 128 + (block[i]! & 0x7f);
    if (block[i]! < 0x80) {
      values.push(n);
      n = 0;
    }
  }
  return values;
}

/** A row's length in words from its `_docsize` row (`sz`): all its columns, what FTS5's bm25() takes for it; 0 if it has none. */
export const lengthOf = (sz: Uint8Array | null | undefined): number => (sz ? varints(sz).reduce((sum, n) => sum + n, 0) : 0);

/** A row's length in words, read from FTS5 (lengthOf). */
export function termsLength(db: Database, doc: number): number {
  return lengthOf(db.query<{ sz: Uint8Array }, [number]>("SELECT sz FROM connector_terms_docsize WHERE id = ?").get(doc)?.sz);
}

/**
 * The rows and total length FTS5 weighs words and lengths among, every index's: its averages
 * record (fts5Int.h FTS5_AVERAGES_ROWID, row 1 of `_data`: the row count, then each column's
 * total), one lookup; undefined if it cannot be read.
 */
export function ftsTotals(db: Database): { rows: number; length: number } | undefined {
  const block = db.query<{ block: Uint8Array }, []>("SELECT block FROM connector_terms_data WHERE id = 1").get()?.block;
  if (!block) return undefined;
  const [rows, ...columns] = varints(block);
  if (rows === undefined) return undefined;
  return { rows, length: columns.reduce((sum, n) => sum + n, 0) };
}
