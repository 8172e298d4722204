import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { basename } from "node:path";
import { cosine, EMBEDDING_DIM, type Embedder, loadEmbedder } from "../../src/embedding/embedder";
import { assets } from "../../src/native/assets";
import { tempDir } from "../helpers";
import { embedWith, INT8_AGREEMENT, INT8_VALUE_ERROR, PUBLISHED, variant } from "../support/model-variants";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let embedder: Embedder;
beforeAll(async () => {
  embedder = await loadEmbedder({ dataDir: tempDir() });
});

describe("embedder: all-MiniLM-L6-v2 on onnxruntime", () => {
  test("matches the published embedding of 'This is an example sentence', within the shipped variant's quantisation", async () => {
    const [v] = await embedder.embed([PUBLISHED.text]);
    expect(v!.length).toBe(EMBEDDING_DIM);
    // Exactly the shipped model file's vector: tokenising, running and pooling lose nothing.
    const [shipped] = await embedWith(basename(assets.modelFile), [PUBLISHED.text]);
    expect(cosine(v!, shipped!)).toBeCloseTo(1, 5);
    // The shipped model is the int8 variant; fp16 gives sentence-transformers' published values
    // to 1e-4 (test/scripts/build-model.test.ts), int8 its whole vector within quantisation.
    const [fp16] = await embedWith(variant("fp16").file, [PUBLISHED.text]);
    expect(cosine(v!, fp16!)).toBeGreaterThan(INT8_AGREEMENT);
    PUBLISHED.start.forEach((x, i) => expect(Math.abs(v![i]! - x)).toBeLessThan(INT8_VALUE_ERROR));
  });

  test("vectors are L2-normalised", async () => {
    const vs = await embedder.embed(["one", "a much longer sentence about invoices and payments"]);
    for (const v of vs) expect(Math.sqrt(cosine(v, v))).toBeCloseTo(1, 5);
  });

  test("ranks by meaning", async () => {
    const [q, related, unrelated] = await embedder.embed([
      "How much did Acme pay on the last invoice?",
      "Invoice #1042 from Acme Corp: total 1,250.00 EUR, paid",
      "Team offsite agenda for Friday",
    ]);
    const s1 = cosine(q!, related!);
    const s2 = cosine(q!, unrelated!);
    expect(s1).toBeGreaterThan(0.7);
    expect(s2).toBeLessThan(0.2);
  });

  test("batching and padding do not change a vector; order is kept", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `sentence number ${i} ${"with padding ".repeat(i % 7)}`);
    const batch = await embedder.embed(texts);
    const [alone] = await embedder.embed([texts[13]!]);
    expect(cosine(batch[13]!, alone!)).toBeCloseTo(1, 5);
    const [first] = await embedder.embed([texts[0]!]);
    expect(cosine(batch[0]!, first!)).toBeCloseTo(1, 5);
  });

  test("empty input embeds to nothing; long input is truncated, not refused", async () => {
    expect(await embedder.embed([])).toEqual([]);
    const [v] = await embedder.embed(["invoice ".repeat(2000)]);
    expect(v!.length).toBe(EMBEDDING_DIM);
  });
});
