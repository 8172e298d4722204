// The search worker's copy of each index's chunk vectors (D31: a question's search runs there).
// sqlite-vec searches by reading every vector of an index's partition through SQLite, and a
// question did it twice per index (the nearest chunks, then the best chunk of each word match not
// among them): 18 of the worker's 28 ms per question over the four sources (scripts/bench/query.ts
// sources, the answer evaluation's questions). Held here, one pass over memory answers both.
// Exact: the same float32 arithmetic and the same order of ties as sqlite-vec 0.1.9's vec0
// (distance_cosine_float; min_idx and merge_sorted_lists: by distance, then the earlier of its
// chunks, then the later slot in a chunk), so a ranking is the same to the last bit. Read from
// vec0's own tables (<table>_chunks: each chunk's validity and rowids; <table>_vector_chunks00: its
// vectors, rotated as stored: no key here), and a chunk is read again only when its validity or
// rowids changed (a vector added or removed: vec0 never rewrites one in place, and setVectors
// only inserts). Within HELD_VECTOR_BYTES for all indexes, the least recently searched dropped
// first; a partition larger than that is searched by sqlite-vec, as before.
import type { Database } from "bun:sqlite";
import { Float32Dots, Int8Dots } from "./float32-dots";

/**
 * Bytes of vectors the worker holds (all indexes): ~34,000 chunks of 384 floats and their coarse
 * copies (heldBytes). The Enron maildir's 10,053 chunks hold 19 MB. The worker ends when idle (searcher.ts SEARCH_IDLE_MS), and
 * its copy with it.
 */
export const HELD_VECTOR_BYTES = 64 * 1024 * 1024;

/** Bytes a held vector takes: its floats, its coarse copy (int8) and that copy's scale and sum. */
const heldBytes = (dim: number) => dim * 4 + dim + 16;

/**
 * How far below the k-th least bound a vector's bound may lie and it still be reckoned exactly:
 * past it, its float32 distance is past the k-th's however they round (a float32 near 1 is within
 * 6e-8 of it), so no tie is lost.
 */
const NARROW_SLACK = 1e-5;

/**
 * A float32 product summed in order is within ~dim * 2^-24 (2.3e-5 at 384) of the true product
 * times the vectors' magnitudes; this, with room to spare, is added to each bound.
 */
const FLOAT32_SUM_ERROR = 1e-4;

/** The vec0 table of the local indexes' chunk vectors (migrations.ts), and its shadow tables. */
const VEC_TABLE = "connector_vec";

/** One vec0 chunk of a partition, its valid slots only. */
interface HeldChunk {
  id: number;
  /** Its validity and rowids as last read (wyhash): the same, the same vectors. */
  digest: bigint;
  /** Each valid slot's rowid (the chunk number of connector_chunks) and slot. */
  rowids: number[];
  slots: number[];
  /** Its first vector's place in its partition's `dots` (the others follow, in the order of `rowids`). */
  start: number;
  /** Each vector's magnitude as vec0 computes it (float32 sum of squares, then its square root). */
  norms: Float64Array;
  /** Slots in the chunk (vec0's chunk_size): a slot's place in the order of ties. */
  size: number;
}

interface HeldPartition {
  chunks: HeldChunk[];
  /** Every chunk's vectors, laid out for the question's dot products (float32-dots.ts). */
  dots: Float32Dots;
  /** The same vectors, coarse, to narrow those reckoned exactly (none: all are). */
  coarse?: Int8Dots;
  bytes: number;
  /** Each rowid's chunk (index in `chunks`) and place in it. */
  at: Map<number, [number, number]>;
}

/** Each held vector's similarity to a query lies within these, by place (the coarse pass's bounds). */
interface Bounds {
  highest: Float64Array;
  lowest: Float64Array;
}

/** A vector's distance and its place in vec0's order of ties (its chunk's index, then its slot, later first). */
interface Near {
  rowid: number;
  distance: number;
  tie: number;
}

const fround = Math.fround;

/** The magnitude of `v[from..from+dim)` as vec0 sums it: in float32, in order. */
function magnitude(v: Float32Array, from: number, dim: number): number {
  let sum = 0;
  for (let j = 0; j < dim; j++) sum = fround(sum + fround(v[from + j]! * v[from + j]!));
  return Math.sqrt(sum);
}

/** vec0's cosine distance (distance_cosine_float) of a float32 dot product summed in order: magnitudes in double, the result in float32. */
const distance = (dot: number, vNorm: number, qNorm: number) => fround(1 - dot / (vNorm * qNorm));

/** Whether `a` comes before `b` in vec0's results. */
const before = (a: Near, b: Near) => a.distance < b.distance || (a.distance === b.distance && a.tie < b.tie);

export class HeldVectors {
  private readonly partitions = new Map<string, HeldPartition>();
  private heldBytes = 0;
  /** vec0 chunks read from the database (tests count them: a search of an unchanged index reads none). */
  chunksRead = 0;
  /** Exact dot products of a question's vector with a held vector (tests count them: those the coarse pass left, and the word matches' chunks). */
  readonly products = { count: 0 };
  /** Coarse products (one per held vector per question). */
  readonly coarseProducts = { count: 0 };

  constructor(private readonly budget = HELD_VECTOR_BYTES) {}

  /** Bytes of vectors held now. */
  get bytes(): number {
    return this.heldBytes;
  }

  /** Drops everything (another database). */
  clear(): void {
    this.partitions.clear();
    this.heldBytes = 0;
  }

  /**
   * The partition `owner` brought up to date with the database (in the caller's read transaction),
   * or undefined where it is not held (past the budget, or vec0's tables not as expected): then
   * sqlite-vec searches.
   */
  partition(db: Database, owner: string, dim: number): HeldVectorsOf | undefined {
    const rows = db
      .query<{ chunk_id: number; validity: Uint8Array; rowids: Uint8Array }, [string]>(
        `SELECT chunk_id, validity, rowids FROM ${VEC_TABLE}_chunks WHERE partition00 = ? ORDER BY chunk_id`,
      )
      .all(owner);
    const old = this.partitions.get(owner);
    // Its size if held: the chunks' valid slots (a bit each in validity).
    let valid = 0;
    for (const r of rows) for (const byte of r.validity) valid += popcount(byte);
    const bytes = valid * heldBytes(dim);
    if (bytes > this.budget) {
      this.drop(owner);
      return undefined;
    }
    // Each chunk as held (its vectors where they lie in the old partition), or as read now (its vectors beside it).
    const chunks: Array<{ chunk: HeldChunk; read?: Float32Array }> = [];
    let changed = !old || old.chunks.length !== rows.length;
    for (const r of rows) {
      const digest = Bun.hash.wyhash(r.validity, Bun.hash.wyhash(r.rowids)) as bigint;
      const kept = old?.chunks.find((c) => c.id === r.chunk_id && c.digest === digest);
      if (kept) {
        chunks.push({ chunk: kept });
        continue;
      }
      changed = true;
      const read = this.readChunk(db, r.chunk_id, r.validity, r.rowids, dim, digest);
      if (!read) {
        this.drop(owner);
        return undefined;
      }
      chunks.push(read);
    }
    // Most recently searched last: the first in the map is the first dropped.
    if (old && !changed) {
      this.partitions.delete(owner);
      this.partitions.set(owner, old);
      return new HeldVectorsOf(old, dim, this.products, this.coarseProducts);
    }
    const dots = Float32Dots.make(valid, dim);
    const coarse = Int8Dots.make(valid, dim);
    if (!dots) {
      this.drop(owner);
      return undefined;
    }
    // The vectors laid out anew: those kept copied from the old partition's layout, those read from their chunk's blob.
    const placed: HeldChunk[] = [];
    let start = 0;
    for (const { chunk, read } of chunks) {
      for (let i = 0; i < chunk.rowids.length; i++) {
        if (read) dots.set(start + i, read, i * dim);
        else dots.copy(start + i, old!.dots, chunk.start + i);
        if (coarse && read) coarse.set(start + i, read, i * dim);
        else if (coarse && old?.coarse) coarse.copy(start + i, old.coarse, chunk.start + i);
        else if (coarse) coarse.set(start + i, dots.vector(start + i), 0);
      }
      placed.push({ ...chunk, start });
      start += chunk.rowids.length;
    }
    this.drop(owner);
    while (this.heldBytes + bytes > this.budget && this.partitions.size) this.drop(this.partitions.keys().next().value!);
    const at = new Map<number, [number, number]>();
    placed.forEach((c, k) => {
      for (const [i, rowid] of c.rowids.entries()) at.set(rowid, [k, i]);
    });
    const held = { chunks: placed, dots, coarse, bytes, at };
    this.partitions.set(owner, held);
    this.heldBytes += bytes;
    return new HeldVectorsOf(held, dim, this.products, this.coarseProducts);
  }

  private drop(owner: string): void {
    const gone = this.partitions.get(owner);
    if (!gone) return;
    this.partitions.delete(owner);
    this.heldBytes -= gone.bytes;
  }

  /** One vec0 chunk (its place in a partition not yet given) and its valid vectors; undefined if its blobs are not of vec0 0.1.9's shapes. */
  private readChunk(
    db: Database,
    id: number,
    validity: Uint8Array,
    rowidBytes: Uint8Array,
    dim: number,
    digest: bigint,
  ): { chunk: HeldChunk; read: Float32Array } | undefined {
    const size = validity.byteLength * 8;
    const blob = db
      .query<{ vectors: Uint8Array }, [number]>(`SELECT vectors FROM ${VEC_TABLE}_vector_chunks00 WHERE rowid = ?`)
      .get(id)?.vectors;
    if (!blob || blob.byteLength !== size * dim * 4 || rowidBytes.byteLength !== size * 8) return undefined;
    this.chunksRead++;
    const all = new Float32Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
    const ids = new BigInt64Array(rowidBytes.buffer.slice(rowidBytes.byteOffset, rowidBytes.byteOffset + rowidBytes.byteLength));
    const rowids: number[] = [];
    const slots: number[] = [];
    for (let s = 0; s < size; s++) {
      if (((validity[s >> 3]! >> (s & 7)) & 1) === 0) continue;
      rowids.push(Number(ids[s]));
      slots.push(s);
    }
    const vectors = new Float32Array(slots.length * dim);
    const norms = new Float64Array(slots.length);
    slots.forEach((s, i) => {
      vectors.set(all.subarray(s * dim, (s + 1) * dim), i * dim);
      norms[i] = magnitude(vectors, i * dim, dim);
    });
    return { chunk: { id, digest, rowids, slots, start: 0, norms, size }, read: vectors };
  }
}

/** A held partition, searched as vec0 searches it. */
export class HeldVectorsOf {
  constructor(
    private readonly held: HeldPartition,
    private readonly dim: number,
    private readonly products: { count: number },
    private readonly coarseProducts: { count: number },
  ) {}

  /** The last query's exact dot products reckoned (by place; all of them where no coarse pass narrowed): its word matches' best chunks (of) read them again. */
  private last?: { query: Float32Array; all?: Float32Array; some: Map<number, number>; bounds?: Bounds };

  /** Vector `i`'s exact dot product with `query`, reckoned once a query. */
  private dotOf(query: Float32Array, i: number): number {
    if (this.last?.query !== query) this.last = { query, some: new Map() };
    if (this.last.all) return this.last.all[i]!;
    let dot = this.last.some.get(i);
    if (dot === undefined) {
      this.products.count++;
      dot = this.held.dots.dot(i, query);
      this.last.some.set(i, dot);
    }
    return dot;
  }

  /** Every vector's exact dot product with `query` at once (float32-dots.ts): where no coarse pass narrows. */
  private allDots(query: Float32Array): void {
    if (this.last?.query === query && this.last.all) return;
    this.last = { query, all: this.held.dots.dots(query).slice(), some: new Map() };
    this.products.count += this.held.dots.count;
  }

  /**
   * The places of the vectors (those `allowed` takes) that may be among the `k` nearest, from
   * the coarse pass; undefined where it cannot say (no coarse copy, a query it cannot round):
   * then all are reckoned. Each vector's true product lies within a bound of its coarse one (its
   * own rounding: half a step of its scale times the query's magnitudes; the query's: half a
   * step of the query's scale times the vector's steps; float32's summing, FLOAT32_SUM_ERROR);
   * a vector whose highest similarity is below the k-th highest of the least ones (less
   * NARROW_SLACK) cannot be among the k nearest, nor tie with them.
   */
  private narrowed(query: Float32Array, qNorm: number, k: number, allowed?: (rowid: number) => boolean): Uint8Array | undefined {
    const coarse = this.held.coarse;
    if (!coarse || !(qNorm > 0) || !Number.isFinite(qNorm)) return undefined;
    const q = coarse.products(query);
    if (!q) return undefined;
    this.coarseProducts.count += coarse.count;
    const { scales, sums } = coarse;
    const highest = new Float64Array(coarse.count).fill(Number.POSITIVE_INFINITY);
    const lowest = new Float64Array(coarse.count).fill(Number.NEGATIVE_INFINITY);
    // The k highest least similarities, ascending (the k-th highest first).
    const best = new Float64Array(k).fill(Number.NEGATIVE_INFINITY);
    for (const c of this.held.chunks)
      for (let i = 0; i < c.rowids.length; i++) {
        const p = c.start + i;
        const scale = scales[p]!;
        const magnitudes = c.norms[i]! * qNorm;
        // Not bounded (never narrowed out): its similarity from -infinity to infinity.
        if (!(magnitudes > 0) || !Number.isFinite(magnitudes) || Number.isNaN(scale)) continue;
        const estimate = scale * q.scale * q.steps[p]!;
        const bound = scale * (0.5 * q.scale * sums[p]! + 0.5 * q.absSum) * 1.001 + FLOAT32_SUM_ERROR * magnitudes;
        highest[p] = (estimate + bound) / magnitudes;
        const least = (estimate - bound) / magnitudes;
        lowest[p] = least;
        if (allowed && !allowed(c.rowids[i]!)) continue;
        if (least > best[0]!) {
          let at = 0;
          while (at + 1 < k && best[at + 1]! < least) {
            best[at] = best[at + 1]!;
            at++;
          }
          best[at] = least;
        }
      }
    if (this.last?.query !== query) this.last = { query, some: new Map() };
    this.last.bounds = { highest, lowest };
    const floor = best[0]! - NARROW_SLACK;
    const out = new Uint8Array(coarse.count);
    for (let p = 0; p < out.length; p++) if (highest[p]! >= floor) out[p] = 1;
    return out;
  }

  /**
   * The `k` nearest of the vectors whose rowid `allowed` takes (all without it), nearest first,
   * as vec0's KNN gives them (with `rowid IN (…)` for `allowed`).
   */
  nearest(query: Float32Array, k: number, allowed?: (rowid: number) => boolean): Near[] {
    const qNorm = magnitude(query, 0, this.dim);
    const top: Near[] = [];
    if (k <= 0) return top;
    // Those that may rank, from the coarse pass; else every held vector's dot product at once.
    const may = this.narrowed(query, qNorm, k, allowed);
    if (!may) this.allDots(query);
    this.held.chunks.forEach((c, ck) => {
      const { rowids, slots, norms, size, start } = c;
      for (let i = 0; i < rowids.length; i++) {
        if (may && !may[start + i]) continue;
        const rowid = rowids[i]!;
        if (allowed && !allowed(rowid)) continue;
        const d = distance(this.dotOf(query, start + i), norms[i]!, qNorm);
        const tie = ck * size + (size - 1 - slots[i]!);
        // Not after the k-th (before()'s test, written out: no object made for the ~10,000 that are).
        const last = top.length === k ? top[k - 1]! : undefined;
        if (last && !(d < last.distance || (d === last.distance && tie < last.tie))) continue;
        const near = { rowid, distance: d, tie };
        let at = top.length;
        while (at > 0 && before(near, top[at - 1]!)) at--;
        top.splice(at, 0, near);
        if (top.length > k) top.pop();
      }
    });
    return top;
  }

  /**
   * The distance of each of `rowids` held (those not held left out), nearest first, in vec0's
   * order of ties. With `docOf` (each rowid's record), only those that may be their record's
   * nearest, by the bounds of the coarse pass of this query where `nearest` made one (a record's
   * others are past it in vec0's order: the same record's nearest, for a caller that keeps only it).
   */
  of(query: Float32Array, rowids: number[], docOf?: (rowid: number) => number): Near[] {
    const qNorm = magnitude(query, 0, this.dim);
    const out: Near[] = [];
    const bounds = docOf && this.last?.query === query ? this.last.bounds : undefined;
    // Each record's highest least similarity among its chunks.
    const floors = new Map<number, number>();
    if (bounds)
      for (const rowid of rowids) {
        const place = this.held.at.get(rowid);
        if (!place) continue;
        const p = this.held.chunks[place[0]]!.start + place[1];
        const doc = docOf!(rowid);
        floors.set(doc, Math.max(floors.get(doc) ?? Number.NEGATIVE_INFINITY, bounds.lowest[p]!));
      }
    for (const rowid of new Set(rowids)) {
      const place = this.held.at.get(rowid);
      if (!place) continue;
      if (bounds) {
        const p = this.held.chunks[place[0]]!.start + place[1];
        if (bounds.highest[p]! < floors.get(docOf!(rowid))! - NARROW_SLACK) continue;
      }
      const [ck, i] = place;
      const c = this.held.chunks[ck]!;
      out.push({
        rowid,
        distance: distance(this.dotOf(query, c.start + i), c.norms[i]!, qNorm),
        tie: ck * c.size + (c.size - 1 - c.slots[i]!),
      });
    }
    return out.sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0));
  }
}

function popcount(byte: number): number {
  let n = 0;
  for (let b = byte; b; b &= b - 1) n++;
  return n;
}
