// An HNSW index of one owner's keyed vectors, in memory and saved beside the database (for
// big partitions on one node). sqlite-vec reads every vector of a partition per search (233 ms at
// 400k here); the index answers in a few milliseconds at recall@10 >= 0.95 (scripts/bench/knn.ts).
// usearch was picked by measurement under Bun over hnswlib-node: the same speed and recall, and it
// ships a prebuilt linux-x64 binding where hnswlib-node compiles at install (a compiler and Node's
// headers, which an offline machine does not fetch). Its binding is required by a fixed path, so
// the single executable embeds it and loads it as it does onnxruntime's binding (Bun copies it out
// and opens it: scripts/build.ts). Only keyed vectors go in (D25):
// cosine is kept by the rotation, so the index ranks as on the model's vectors.
import { EMBEDDING_DIM } from "../embedding/embedder";
import { checkK, type KeyedVector } from "./store";

/** usearch's native index (javascript/lib.cpp), used without its JavaScript wrapper, which finds the binding by searching folders. */
interface CompiledIndex {
  add(keys: BigUint64Array, vectors: Float32Array, threads: number): void;
  search(query: Float32Array, k: number, threads: number): [BigUint64Array, Float32Array, BigUint64Array];
  remove(keys: BigUint64Array): unknown;
  size(): number;
  save(path: string): void;
  load(path: string): void;
  view(path: string): void;
}
type Binding = {
  CompiledIndex: new (
    dimensions: number,
    metric: string,
    quantization: string,
    connectivity: number,
    expansionAdd: number,
    expansionSearch: number,
    multi: boolean,
  ) => CompiledIndex;
};

export interface HnswOptions {
  /** Links per node (M): 16, as pgvector's default (and ef_construction 64 as its, below). */
  connectivity?: number;
  /** Candidates kept while adding (ef_construction). */
  expansionAdd?: number;
  /** Candidates kept while searching (ef): more, better recall, slower. */
  expansionSearch?: number;
}

/** The defaults: at 400k keyed vectors search width 64 gave recall@10 0.916, 128 gave 0.979 (p50 1.05 ms; scripts/bench/knn.ts). */
export const HNSW_DEFAULTS: Required<HnswOptions> = { connectivity: 16, expansionAdd: 64, expansionSearch: 128 };

let binding: Binding | undefined;
/** usearch's binding, loaded when an index is first made (a fixed path: the executable embeds it). */
function usearch(): Binding {
  binding ??= require("../../node_modules/usearch/prebuilds/linux-x64/usearch.node") as Binding;
  return binding;
}

export class EmbeddedHnsw {
  private constructor(private readonly index: CompiledIndex) {}

  static create(options: HnswOptions = {}): EmbeddedHnsw {
    const o = { ...HNSW_DEFAULTS, ...options };
    const { CompiledIndex } = usearch();
    return new EmbeddedHnsw(new CompiledIndex(EMBEDDING_DIM, "cos", "f32", o.connectivity, o.expansionAdd, o.expansionSearch, false));
  }

  /** An index saved by save() at `file`, searched with `options`' expansion. */
  static load(file: string, options: HnswOptions = {}): EmbeddedHnsw {
    const index = EmbeddedHnsw.create(options);
    index.index.load(file);
    return index;
  }

  /**
   * An index saved by save() at `file`, read in place (mapped, not copied: several threads viewing
   * one file share its pages); it cannot be changed.
   */
  static view(file: string, options: HnswOptions = {}): EmbeddedHnsw {
    const index = EmbeddedHnsw.create(options);
    index.index.view(file);
    return index;
  }

  /** Adds vectors under ids (a chunk's number); `threads` 0 lets usearch pick (a build off the serving thread, D31). */
  add(ids: readonly number[], vectors: readonly KeyedVector[] | Float32Array, threads = 1): void {
    const flat = vectors instanceof Float32Array ? vectors : flatten(vectors);
    if (flat.length !== ids.length * EMBEDDING_DIM) throw new RangeError(`${ids.length} ids for ${flat.length / EMBEDDING_DIM} vectors`);
    this.index.add(
      BigUint64Array.from(ids, (id) => BigInt(id)),
      flat,
      threads,
    );
  }

  remove(ids: readonly number[]): void {
    this.index.remove(BigUint64Array.from(ids, (id) => BigInt(id)));
  }

  /** The `k` nearest `query`, nearest first, with their cosine similarity. */
  search(query: KeyedVector, k: number): Array<{ id: number; similarity: number }> {
    checkK(k);
    const [keys, distances, counts] = this.index.search(query, k, 1);
    const n = Number(counts[0] ?? 0);
    return Array.from({ length: n }, (_, i) => ({ id: Number(keys[i]), similarity: 1 - distances[i]! }));
  }

  get size(): number {
    return this.index.size();
  }

  save(file: string): void {
    this.index.save(file);
  }
}

function flatten(vectors: readonly Float32Array[]): Float32Array {
  const flat = new Float32Array(vectors.length * EMBEDDING_DIM);
  vectors.forEach((v, i) => {
    if (v.length !== EMBEDDING_DIM) throw new RangeError(`a vector of ${v.length} dimensions, not ${EMBEDDING_DIM}`);
    flat.set(v, i * EMBEDDING_DIM);
  });
  return flat;
}
