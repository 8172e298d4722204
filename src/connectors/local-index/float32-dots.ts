// The dot products of a question's vector with every vector of a held partition (held-vectors.ts),
// in WebAssembly's 128-bit lanes: each lane sums one vector's products in order, in float32
// (f32x4.mul and f32x4.add round each product and each sum to float32, as IEEE-754 says, the
// same as vec0's C loop and as the JavaScript loop with Math.fround before it), so a distance is
// the same to the last bit; sixteen vectors at once, laid out side by side (a "group": each
// dimension's sixteen values together). In JavaScript the loop was 9.6 of the 23.9 ms of a search
// worker's search of an index (wall, loaded machine; scripts/bench/question-stages.ts, the Enron
// mail's 10,053 chunks); here 2.2x less time than that loop (scripts/bench/held-dots.ts, the two
// interleaved: 8.2 against 18.2 ms a pass at load 22). No fused multiply-add (relaxed SIMD): it
// rounds once and changes the sums.

/** Vectors per group: four lanes in each of four 128-bit accumulators (more sums under way at once). */
export const GROUP = 16;

/** WebAssembly opcodes used below (the core and the 0xfd SIMD prefix's). */
const OP = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Const: 0x41,
  i32Eqz: 0x45,
  i32Ne: 0x47,
  i32Add: 0x6a,
  i32Sub: 0x6b,
  simd: 0xfd,
  v128Load: 0x00,
  load32Splat: 0x09,
  v128Store: 0x0b,
  v128Const: 0x0c,
} as const;
/** f32x4.add and f32x4.mul: the SIMD prefix's opcodes 0xe4 and 0xe6, as unsigned LEB128. */
const F32X4_ADD = [OP.simd, 0xe4, 0x01];
const F32X4_MUL = [OP.simd, 0xe6, 0x01];
const I32 = 0x7f;
const V128 = 0x7b;

/** An unsigned LEB128 number. */
function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}
/** A signed LEB128 number (i32.const's operand). */
function sleb(n: number): number[] {
  const out: number[] = [];
  for (;;) {
    const byte = n & 0x7f;
    n >>= 7;
    if ((n === 0 && (byte & 0x40) === 0) || (n === -1 && (byte & 0x40) !== 0)) return [...out, byte];
    out.push(byte | 0x80);
  }
}
const section = (id: number, bytes: number[]) => [id, ...leb(bytes.length), ...bytes];
const name = (s: string) => [...leb(s.length), ...new TextEncoder().encode(s)];
/** A memory operand: alignment hint 1 (the layout is aligned; the hint changes nothing but speed) and a byte offset. */
const mem = (offset: number) => [0x00, ...leb(offset)];

/**
 * `dots(query, groups, count, out, dimBytes)`: for each of `count` groups at `groups` (GROUP
 * vectors, dimension by dimension), the GROUP dot products with the `query` vector (dimBytes / 4
 * floats), stored at `out` (GROUP floats a group). Memory imported as `m.memory`.
 */
function dotsModule(): Uint8Array<ArrayBuffer> {
  const [query, groups, count, out, dimBytes, j, q] = [0, 1, 2, 3, 4, 5, 6];
  const acc = (k: number) => 7 + k;
  const accumulators = GROUP / 4;
  const body: number[] = [
    // Locals: j (i32: the byte offset of a dimension in the query), q (the dimension's value in every lane), the accumulators.
    ...[0x02, 0x01, I32, ...leb(1 + accumulators), V128],
    ...[OP.block, 0x40, OP.loop, 0x40],
    ...[OP.localGet, count, OP.i32Eqz, OP.brIf, 0x01],
    ...[OP.simd, OP.v128Const, ...new Array(16).fill(0)],
    ...Array.from({ length: accumulators - 1 }, (_, k) => [OP.localTee, acc(k)]).flat(),
    ...[OP.localSet, acc(accumulators - 1)],
    ...[OP.i32Const, 0x00, OP.localSet, j],
    ...[OP.loop, 0x40],
    ...[OP.localGet, query, OP.localGet, j, OP.i32Add, OP.simd, OP.load32Splat, 0x02, 0x00, OP.localSet, q],
    // acc[k] = acc[k] + group[j][4k..4k+4) * q, each lane rounded to float32 after the product and after the sum.
    ...Array.from({ length: accumulators }, (_, k) => [
      ...[OP.localGet, acc(k), OP.localGet, groups, OP.simd, OP.v128Load, ...mem(16 * k)],
      ...[OP.localGet, q, ...F32X4_MUL, ...F32X4_ADD, OP.localSet, acc(k)],
    ]).flat(),
    ...[OP.localGet, groups, OP.i32Const, ...sleb(GROUP * 4), OP.i32Add, OP.localSet, groups],
    ...[OP.localGet, j, OP.i32Const, 0x04, OP.i32Add, OP.localTee, j, OP.localGet, dimBytes, OP.i32Ne, OP.brIf, 0x00],
    OP.end,
    ...Array.from({ length: accumulators }, (_, k) => [
      OP.localGet,
      out,
      OP.localGet,
      acc(k),
      OP.simd,
      OP.v128Store,
      ...mem(16 * k),
    ]).flat(),
    ...[OP.localGet, out, OP.i32Const, ...sleb(GROUP * 4), OP.i32Add, OP.localSet, out],
    ...[OP.localGet, count, OP.i32Const, 0x01, OP.i32Sub, OP.localSet, count],
    ...[OP.br, 0x00, OP.end, OP.end, OP.end],
  ];
  return moduleBytes("dots", body);
}

/**
 * A module of one function `exported(vectors, dim, count, query, out)` (five i32s) over the
 * imported memory "m"."memory", whose code is `body`.
 */
function moduleBytes(exported: string, body: number[]): Uint8Array<ArrayBuffer> {
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, [0x01, 0x60, 0x05, I32, I32, I32, I32, I32, 0x00]),
    ...section(2, [0x01, ...name("m"), ...name("memory"), 0x02, 0x00, 0x01]),
    ...section(3, [0x01, 0x00]),
    ...section(7, [0x01, ...name(exported), 0x00, 0x00]),
    ...section(10, [0x01, ...leb(body.length), ...body]),
  ]);
}

/** `bytes()`'s module, compiled once; null where this runtime has no WebAssembly SIMD (then sqlite-vec searches). */
function compiledOnce(bytes: () => Uint8Array<ArrayBuffer>): () => WebAssembly.Module | null {
  let compiled: WebAssembly.Module | null | undefined;
  return () => {
    if (compiled === undefined) {
      const b = bytes();
      compiled = WebAssembly.validate(b) ? new WebAssembly.Module(b) : null;
    }
    return compiled;
  };
}

const module = compiledOnce(dotsModule);

const PAGE = 65_536;

/** A partition's vectors laid out for `dots`, in a memory of their own: the query, the products, the groups. */
export class Float32Dots {
  private readonly memory: WebAssembly.Memory;
  private readonly run: (query: number, groups: number, count: number, out: number, dimBytes: number) => void;
  /** The whole memory as floats: the query at 0, the products at `outAt`, the groups at `groupsAt`. */
  private readonly floats: Float32Array;
  private readonly outAt: number;
  private readonly groupsAt: number;
  private readonly groups: number;

  /** Room for `count` vectors of `dim` floats; undefined where WebAssembly SIMD is missing. */
  static make(count: number, dim: number): Float32Dots | undefined {
    const m = module();
    return m ? new Float32Dots(m, count, dim) : undefined;
  }

  private constructor(
    m: WebAssembly.Module,
    readonly count: number,
    readonly dim: number,
  ) {
    this.groups = Math.ceil(count / GROUP);
    this.outAt = dim;
    this.groupsAt = dim + this.groups * GROUP;
    const bytes = (this.groupsAt + this.groups * GROUP * dim) * 4;
    this.memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    const instance = new WebAssembly.Instance(m, { m: { memory: this.memory } });
    this.run = instance.exports.dots as Float32Dots["run"];
    this.floats = new Float32Array(this.memory.buffer);
  }

  /** Where dimension `j` of vector `i` lies in `floats`. */
  private at(i: number, j: number): number {
    return this.groupsAt + (i - (i % GROUP)) * this.dim + j * GROUP + (i % GROUP);
  }

  /** Stores vector `i` (dim floats of `from` at `offset`). */
  set(i: number, from: Float32Array, offset: number): void {
    for (let j = 0; j < this.dim; j++) this.floats[this.at(i, j)] = from[offset + j]!;
  }

  /** Copies vector `from` of `other` (of the same dimension) to vector `i`. */
  copy(i: number, other: Float32Dots, from: number): void {
    for (let j = 0; j < this.dim; j++) this.floats[this.at(i, j)] = other.floats[other.at(from, j)]!;
  }

  /** Vector `i`'s floats, read back from the layout. */
  vector(i: number): Float32Array {
    const out = new Float32Array(this.dim);
    for (let j = 0; j < this.dim; j++) out[j] = this.floats[this.at(i, j)]!;
    return out;
  }

  /** Vector `i`'s dot product with `query`, summed in order in float32 (one vector: no need of the lanes). */
  dot(i: number, query: Float32Array): number {
    let sum = 0;
    for (let j = 0, at = this.at(i, 0); j < this.dim; j++, at += GROUP) sum = Math.fround(sum + Math.fround(this.floats[at]! * query[j]!));
    return sum;
  }

  /** Every vector's dot product with `query`: a view (overwritten by the next call), `count` long. */
  dots(query: Float32Array): Float32Array {
    this.floats.set(query.subarray(0, this.dim), 0);
    this.run(0, this.groupsAt * 4, this.groups, this.outAt * 4, this.dim * 4);
    return this.floats.subarray(this.outAt, this.outAt + this.count);
  }
}

// A coarse copy of the same vectors, each rounded to 127 steps of its own scale (int8), against
// the query in 16,383 steps of its own (int16): their products are exact integers (i32x4.dot_i16x8_s
// after widening the int8 lanes), a quarter of the bytes to read, 3-6x faster a pass than the
// float32 one above (its vectors, 15 MB for 10,053 chunks, are read from memory whole each
// question). Not a result: held-vectors.ts bounds each vector's true product from it and reckons
// exactly, as above, only those that may rank (its `narrowed`).

/** Steps of a coarse vector's scale and of the query's: 127 * 16,383 * dim stays within an i32 while dim < 1,032. */
export const VECTOR_STEPS = 127;
export const QUERY_STEPS = 16_383;

/**
 * `qdots(query, vectors, count, out, dim)`: for each of `count` vectors of `dim` int8 at `vectors`
 * (one after another), its product with the int16 `query`, summed in i32 and stored at `out`.
 */
function coarseModule(): Uint8Array<ArrayBuffer> {
  const [query, vectors, count, out, dim, j, acc] = [0, 1, 2, 3, 4, 5, 6];
  const WIDEN_LOW = [OP.simd, 0x87, 0x01];
  const WIDEN_HIGH = [OP.simd, 0x88, 0x01];
  const DOT_I16 = [OP.simd, 0xba, 0x01];
  const I32X4_ADD = [OP.simd, 0xae, 0x01];
  const lane = (k: number) => [OP.localGet, acc, OP.simd, 0x1b, k];
  // acc += dot(widen(vectors[j..j+16) half), query[j..j+16) half), the query's half `offset` bytes on.
  const half = (widen: number[], offset: number) => [
    ...[OP.localGet, acc, OP.localGet, vectors, OP.localGet, j, OP.i32Add, OP.simd, OP.v128Load, ...mem(0), ...widen],
    ...[OP.localGet, query, OP.localGet, j, OP.localGet, j, OP.i32Add, OP.i32Add, OP.simd, OP.v128Load, ...mem(offset)],
    ...DOT_I16,
    ...I32X4_ADD,
    OP.localSet,
    acc,
  ];
  const body: number[] = [
    ...[0x02, 0x01, I32, 0x01, V128],
    ...[OP.block, 0x40, OP.loop, 0x40],
    ...[OP.localGet, count, OP.i32Eqz, OP.brIf, 0x01],
    ...[OP.simd, OP.v128Const, ...new Array(16).fill(0), OP.localSet, acc],
    ...[OP.i32Const, 0x00, OP.localSet, j],
    ...[OP.loop, 0x40],
    ...half(WIDEN_LOW, 0),
    ...half(WIDEN_HIGH, 16),
    ...[OP.localGet, j, OP.i32Const, 0x10, OP.i32Add, OP.localTee, j, OP.localGet, dim, OP.i32Ne, OP.brIf, 0x00],
    OP.end,
    ...[OP.localGet, out, ...lane(0), ...lane(1), OP.i32Add, ...lane(2), OP.i32Add, ...lane(3), OP.i32Add, 0x36, 0x02, 0x00],
    ...[OP.localGet, vectors, OP.localGet, dim, OP.i32Add, OP.localSet, vectors],
    ...[OP.localGet, out, OP.i32Const, 0x04, OP.i32Add, OP.localSet, out],
    ...[OP.localGet, count, OP.i32Const, 0x01, OP.i32Sub, OP.localSet, count],
    ...[OP.br, 0x00, OP.end, OP.end, OP.end],
  ];
  return moduleBytes("qdots", body);
}

const coarse = compiledOnce(coarseModule);

/** A query's coarse products with every vector: each an integer, to be taken times `scale` and the vector's own. */
export interface CoarseProducts {
  /** A view, overwritten by the next call. */
  steps: Int32Array;
  scale: number;
  /** The query's sum of magnitudes (its rounding's weight in each product's bound). */
  absSum: number;
}

/** A partition's vectors rounded (int8, a scale each) for the coarse pass. */
export class Int8Dots {
  private readonly run: (query: number, vectors: number, count: number, out: number, dim: number) => void;
  private readonly query: Int16Array;
  private readonly vectors: Int8Array;
  private readonly out: Int32Array;
  /** Each vector's scale (NaN: not finite, never narrowed out) and sum of its steps' magnitudes. */
  readonly scales: Float64Array;
  readonly sums: Float64Array;

  /** Room for `count` vectors of `dim`; undefined where the pass cannot be (no SIMD; dim not of 16s or too long for i32 sums). */
  static make(count: number, dim: number): Int8Dots | undefined {
    const m = coarse();
    if (!m || dim % 16 !== 0 || dim * VECTOR_STEPS * QUERY_STEPS >= 2 ** 31) return undefined;
    return new Int8Dots(m, count, dim);
  }

  private constructor(
    m: WebAssembly.Module,
    readonly count: number,
    readonly dim: number,
  ) {
    const bytes = dim * 2 + count * dim + count * 4;
    const memory = new WebAssembly.Memory({ initial: Math.max(1, Math.ceil(bytes / PAGE)) });
    this.run = new WebAssembly.Instance(m, { m: { memory } }).exports.qdots as Int8Dots["run"];
    this.query = new Int16Array(memory.buffer, 0, dim);
    this.vectors = new Int8Array(memory.buffer, dim * 2, count * dim);
    this.out = new Int32Array(memory.buffer, dim * 2 + count * dim, count);
    this.scales = new Float64Array(count);
    this.sums = new Float64Array(count);
  }

  /** Stores vector `i` rounded (dim floats of `from` at `offset`). */
  set(i: number, from: Float32Array, offset: number): void {
    let most = 0;
    for (let j = 0; j < this.dim; j++) most = Math.max(most, Math.abs(from[offset + j]!));
    const scale = Number.isFinite(most) ? most / VECTOR_STEPS : Number.NaN;
    let sum = 0;
    for (let j = 0; j < this.dim; j++) {
      const step = scale > 0 ? Math.max(-VECTOR_STEPS, Math.min(VECTOR_STEPS, Math.round(from[offset + j]! / scale))) : 0;
      this.vectors[i * this.dim + j] = step;
      sum += Math.abs(step);
    }
    this.scales[i] = scale;
    this.sums[i] = sum;
  }

  /** Copies vector `from` of `other` (of the same dimension) to vector `i`. */
  copy(i: number, other: Int8Dots, from: number): void {
    this.vectors.set(other.vectors.subarray(from * this.dim, (from + 1) * this.dim), i * this.dim);
    this.scales[i] = other.scales[from]!;
    this.sums[i] = other.sums[from]!;
  }

  /** Every vector's coarse product with `query`; undefined where the query cannot be rounded (zero, or not finite). */
  products(query: Float32Array): CoarseProducts | undefined {
    let most = 0;
    let absSum = 0;
    for (let j = 0; j < this.dim; j++) {
      most = Math.max(most, Math.abs(query[j]!));
      absSum += Math.abs(query[j]!);
    }
    if (!(most > 0) || !Number.isFinite(most) || !Number.isFinite(absSum)) return undefined;
    const scale = most / QUERY_STEPS;
    for (let j = 0; j < this.dim; j++) this.query[j] = Math.max(-QUERY_STEPS, Math.min(QUERY_STEPS, Math.round(query[j]! / scale)));
    this.run(0, this.dim * 2, this.count, this.dim * 2 + this.count * this.dim, this.dim);
    return { steps: this.out, scale, absSum };
  }
}
