// The model's variants (models/manifest.json) run straight with onnxruntime, no embedder: the
// reference the shipped model is compared with. The fp16 variant gives sentence-transformers'
// published vector (test/scripts/build-model.test.ts); int8 is within quantisation of it.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import type { Manifest } from "../../scripts/build-model";
import { type TokenizerFile, WordPieceTokenizer } from "../../src/embedding/tokenizer";

const models = join(import.meta.dir, "../../models");
const manifest = JSON.parse(readFileSync(join(models, "manifest.json"), "utf8")) as Manifest;
const tokenizer = new WordPieceTokenizer(JSON.parse(readFileSync(join(models, manifest.tokenizer.file), "utf8")) as TokenizerFile);

/** sentence-transformers' published all-MiniLM-L6-v2 embedding of this sentence starts with these values. */
export const PUBLISHED = { text: "This is an example sentence", start: [0.0676569, 0.0635563, 0.0487131, 0.0794125] };

/**
 * The int8 variant's vectors against fp16's: cosine at least this (measured 0.9948 for
 * PUBLISHED.text, 0.9948 the lowest over SciFact's 1,109 claims and 300 abstracts), each value
 * within INT8_VALUE_ERROR (0.0069 the largest of PUBLISHED.start), the same on every CPU.
 */
export const INT8_AGREEMENT = 0.99;
export const INT8_VALUE_ERROR = 0.01;

/** The manifest's entry of a storage mode (its file is models/<file>). */
export const variant = (storage: string) => manifest.models.find((m) => m.storage === storage)!;

/**
 * The `sentence_embedding` of each text from models/<file>, run as one right-padded batch;
 * `sessionConfig` holds onnxruntime's session config entries (session.<key>).
 */
export async function embedWith(file: string, texts: string[], sessionConfig: Record<string, string> = {}): Promise<Float32Array[]> {
  const rows = texts.map((t) => tokenizer.encode(t, 256).ids);
  const width = Math.max(...rows.map((r) => r.length));
  const padded = (value: (id: number) => number) =>
    BigInt64Array.from(rows.flatMap((r) => Array.from({ length: width }, (_, i) => BigInt(i < r.length ? value(r[i]!) : 0))));
  const dims = [rows.length, width];
  const session = await ort.InferenceSession.create(join(models, file), {
    intraOpNumThreads: 1,
    logSeverityLevel: 3,
    extra: { session: sessionConfig },
  });
  try {
    const out = await session.run(
      {
        input_ids: new ort.Tensor(
          "int64",
          padded((id) => id),
          dims,
        ),
        attention_mask: new ort.Tensor(
          "int64",
          padded(() => 1),
          dims,
        ),
        token_type_ids: new ort.Tensor(
          "int64",
          padded(() => 0),
          dims,
        ),
      },
      ["sentence_embedding"],
    );
    const data = out.sentence_embedding!.data as Float32Array;
    return rows.map((_, r) => data.slice(r * 384, (r + 1) * 384));
  } finally {
    await session.release();
  }
}
