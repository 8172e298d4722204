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

/**
 * Bytes of vectors the worker holds (all indexes): ~43,000 chunks of 384 floats. The Enron
 * maildir's 10,053 chunks hold 15 MB. The worker ends when idle (searcher.ts SEARCH_IDLE_MS), and
 * its copy with it.
 */
export const HELD_VECTOR_BYTES = 64 * 1024 * 1024;

/** The vec0 table of the local indexes' chunk vectors (migrations.ts), and its shadow tables. */
const VEC_TABLE = "connector_vec";

/** One vec0 chunk of a partition, its valid slots only. */
interface HeldChunk {
  id: number;
  /** Its validity and rowids as last read (wyhash): the same, the same vectors. */
  digest: bigint;
  /** Each valid slot's rowid (the chunk number of connector_chunks), slot and place in `vectors`. */
  rowids: number[];
  slots: number[];
  vectors: Float32Array;
  /** Each vector's magnitude as vec0 computes it (float32 sum of squares, then its square root). */
  norms: Float64Array;
  /** Slots in the chunk (vec0's chunk_size): a slot's place in the order of ties. */
  size: number;
}

interface HeldPartition {
  chunks: HeldChunk[];
  bytes: number;
  /** Each rowid's chunk (index in `chunks`) and place in it. */
  at: Map<number, [number, number]>;
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

/** vec0's cosine distance (distance_cosine_float): float32 dot product in order, magnitudes in double, the result in float32. */
function distance(v: Float32Array, from: number, q: Float32Array, vNorm: number, qNorm: number): number {
  let dot = 0;
  for (let j = 0; j < q.length; j++) dot = fround(dot + fround(v[from + j]! * q[j]!));
  return fround(1 - dot / (vNorm * qNorm));
}

/** Whether `a` comes before `b` in vec0's results. */
const before = (a: Near, b: Near) => a.distance < b.distance || (a.distance === b.distance && a.tie < b.tie);

export class HeldVectors {
  private readonly partitions = new Map<string, HeldPartition>();
  private heldBytes = 0;
  /** vec0 chunks read from the database (tests count them: a search of an unchanged index reads none). */
  chunksRead = 0;

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
    const bytes = valid * dim * 4;
    if (bytes > this.budget) {
      this.drop(owner);
      return undefined;
    }
    const chunks: HeldChunk[] = [];
    let changed = !old || old.chunks.length !== rows.length;
    for (const r of rows) {
      const digest = Bun.hash.wyhash(r.validity, Bun.hash.wyhash(r.rowids)) as bigint;
      const kept = old?.chunks.find((c) => c.id === r.chunk_id && c.digest === digest);
      if (kept) {
        chunks.push(kept);
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
      return new HeldVectorsOf(old, dim);
    }
    this.drop(owner);
    while (this.heldBytes + bytes > this.budget && this.partitions.size) this.drop(this.partitions.keys().next().value!);
    const at = new Map<number, [number, number]>();
    chunks.forEach((c, k) => {
      for (const [i, rowid] of c.rowids.entries()) at.set(rowid, [k, i]);
    });
    const held = { chunks, bytes, at };
    this.partitions.set(owner, held);
    this.heldBytes += bytes;
    return new HeldVectorsOf(held, dim);
  }

  private drop(owner: string): void {
    const gone = this.partitions.get(owner);
    if (!gone) return;
    this.partitions.delete(owner);
    this.heldBytes -= gone.bytes;
  }

  /** One vec0 chunk's valid vectors; undefined if its blobs are not of vec0 0.1.9's shapes. */
  private readChunk(
    db: Database,
    id: number,
    validity: Uint8Array,
    rowidBytes: Uint8Array,
    dim: number,
    digest: bigint,
  ): HeldChunk | undefined {
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
    return { id, digest, rowids, slots, vectors, norms, size };
  }
}

/** A held partition, searched as vec0 searches it. */
export class HeldVectorsOf {
  constructor(
    private readonly held: HeldPartition,
    private readonly dim: number,
  ) {}

  /**
   * The `k` nearest of the vectors whose rowid `allowed` takes (all without it), nearest first,
   * as vec0's KNN gives them (with `rowid IN (…)` for `allowed`).
   */
  nearest(query: Float32Array, k: number, allowed?: (rowid: number) => boolean): Near[] {
    const qNorm = magnitude(query, 0, this.dim);
    const top: Near[] = [];
    if (k <= 0) return top;
    const dim = this.dim;
    this.held.chunks.forEach((c, ck) => {
      const { rowids, slots, vectors, norms, size } = c;
      const consider = (i: number, dot: number) => {
        if (allowed && !allowed(rowids[i]!)) return;
        const near = { rowid: rowids[i]!, distance: fround(1 - dot / (norms[i]! * qNorm)), tie: ck * size + (size - 1 - slots[i]!) };
        if (top.length === k && !before(near, top[k - 1]!)) return;
        let at = top.length;
        while (at > 0 && before(near, top[at - 1]!)) at--;
        top.splice(at, 0, near);
        if (top.length > k) top.pop();
      };
      // Four vectors at a time, each summed in its own order (as vec0 sums one): the same sums, less waiting on each.
      let i = 0;
      for (; i + 3 < rowids.length; i += 4) {
        const a = i * dim;
        const b = a + dim;
        const c2 = b + dim;
        const d = c2 + dim;
        let s0 = 0;
        let s1 = 0;
        let s2 = 0;
        let s3 = 0;
        for (let j = 0; j < dim; j++) {
          const qj = query[j]!;
          s0 = fround(s0 + fround(vectors[a + j]! * qj));
          s1 = fround(s1 + fround(vectors[b + j]! * qj));
          s2 = fround(s2 + fround(vectors[c2 + j]! * qj));
          s3 = fround(s3 + fround(vectors[d + j]! * qj));
        }
        consider(i, s0);
        consider(i + 1, s1);
        consider(i + 2, s2);
        consider(i + 3, s3);
      }
      for (; i < rowids.length; i++) {
        let s = 0;
        for (let j = 0; j < dim; j++) s = fround(s + fround(vectors[i * dim + j]! * query[j]!));
        consider(i, s);
      }
    });
    return top;
  }

  /** The distance of each of `rowids` held (those not held left out), nearest first, in vec0's order of ties. */
  of(query: Float32Array, rowids: number[]): Near[] {
    const qNorm = magnitude(query, 0, this.dim);
    const out: Near[] = [];
    for (const rowid of new Set(rowids)) {
      const place = this.held.at.get(rowid);
      if (!place) continue;
      const [ck, i] = place;
      const c = this.held.chunks[ck]!;
      out.push({
        rowid,
        distance: distance(c.vectors, i * this.dim, query, c.norms[i]!, qNorm),
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
