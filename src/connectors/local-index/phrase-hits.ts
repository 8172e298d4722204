// A phrase's hits in the word index as ownBm25 (candidates.ts) reads them, kept by the search
// worker between questions while the index is unchanged: a frequent word's hits ("invoice",
// "gas": thousands of rows of the mail, each looked up) were read again by every question that
// asked it, the larger part of the worker's BM25. The index's generation (connector_generation,
// bumped by triggers on every write of a record, migration connectors-016), read in the
// question's own transaction, tells whether what is kept is what it would read.
import type { Database } from "bun:sqlite";

/** A hit of a phrase in a record of the index: its FTS5 score and length in words, the record's source and date. */
export interface OwnHit {
  doc: number;
  score: number;
  length: number;
  source: string;
  date: string | null;
}

/** A phrase's rows in the whole table (FTS5 weighs its rarity among them), and the index's own hits. */
export interface PhraseHits {
  tableHits: number;
  own: OwnHit[];
}

/** The word index's generation: changed by every insert, change and removal of a record. */
export function indexGeneration(db: Database): number {
  return db.query<{ n: number }, []>("SELECT n FROM connector_generation").get()!.n;
}

/** Hits kept at most, of every phrase together (~100 bytes each): the least recently asked go first. */
export const KEPT_HITS = 200_000;

/**
 * What a phrase kept counts against KEPT_HITS: its hits, one for itself, and its key's text at
 * ~100 characters a hit (a quoted question of 4,000 characters is a phrase of up to ~2,000
 * blinded terms of 17 characters, ~34 KB: counted as one, 200,000 of them that hit nothing
 * were gigabytes).
 */
const weightOf = (key: string, hits: PhraseHits) => hits.own.length + 1 + Math.floor(key.length / 100);

/** Phrases' hits of one generation of the index, by index and phrase. */
export class PhraseHitsMemo {
  private generation?: number;
  private readonly kept = new Map<string, PhraseHits>();
  private held = 0;

  /** The hits of `part` in `owner`'s index as of `generation`: kept, or read by `read` and kept. */
  get(generation: number, owner: string, part: string, read: () => PhraseHits): PhraseHits {
    if (generation !== this.generation) {
      this.clear();
      this.generation = generation;
    }
    const key = `${owner}\u0000${part}`;
    const found = this.kept.get(key);
    if (found) {
      // Last in the map's order: the most recently asked.
      this.kept.delete(key);
      this.kept.set(key, found);
      return found;
    }
    const hits = read();
    // A phrase past the bound alone is not kept: kept, it pushed out every other phrase, then itself.
    const weight = weightOf(key, hits);
    if (weight > KEPT_HITS) return hits;
    this.kept.set(key, hits);
    this.held += weight;
    for (const [k, v] of this.kept) {
      if (this.held <= KEPT_HITS) break;
      this.kept.delete(k);
      this.held -= weightOf(k, v);
    }
    return hits;
  }

  /** Forgets every phrase (another database: its generations are its own). */
  clear(): void {
    this.kept.clear();
    this.held = 0;
    this.generation = undefined;
  }

  /** Phrases kept (tests). */
  get size(): number {
    return this.kept.size;
  }
}
