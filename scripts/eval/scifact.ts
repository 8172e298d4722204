// Ranking evaluation on BEIR SciFact (issue: the query pipeline). The corpus is indexed
// through the same `files` connector, index and ranking a user gets; the claims are asked as
// questions; nDCG@10 and Recall@100 are printed. Tune on the train split only:
//   bun scripts/eval/scifact.ts                      test split, the shipped weight
//   bun scripts/eval/scifact.ts --split train --sweep   dense weights 0..1 on the train split
//   bun scripts/eval/scifact.ts --split train --sweep --spread 3   the same with another DENSE_SPREAD
//   bun scripts/eval/scifact.ts --model all-MiniLM-L6-v2.onnx   another variant of models/
// The data stays outside the product (CC BY-NC): it is written to $CORPUS_EVAL_DIR
// (default /tmp/corpus-eval-scifact), reused between runs so the embeddings are computed once;
// the vectors kept there are one model's, so each variant needs a folder of its own.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import * as ort from "onnxruntime-node";
import { loadConfig } from "../../src/config";
import { MAX_TOKENS } from "../../src/embedding/embedder";
import { createLogger } from "../../src/log";
import { assets } from "../../src/native/assets";
import { DENSE_SPREAD, fuse } from "../../src/retrieval/fuse";
import { DENSE_WEIGHT } from "../../src/retrieval/search";
import { createServices } from "../../src/services";

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
const split = option("split", "test");
const root = resolve(import.meta.dir, "../..");
const data = resolve(option("data", join(root, "../shared/data/scifact")));
const work = process.env.CORPUS_EVAL_DIR ?? "/tmp/corpus-eval-scifact";

// 0. The model: the one the executable ships unless --model names another file of models/.
const shipped = basename(assets.modelFile);
const modelName = option("model", shipped);
const modelPath = join(root, "models", modelName);
if (!existsSync(modelPath)) throw new Error(`${modelPath} does not exist (bun scripts/build-model.ts builds every variant)`);
const docs = join(work, "docs");
mkdirSync(docs, { recursive: true });
// Named with its sha256: a variant rebuilt differently under the same name is another model.
const modelSha256 = createHash("sha256").update(readFileSync(modelPath)).digest("hex");
const modelId = `${modelName} sha256 ${modelSha256}`;
const marker = join(work, "model");
const recorded = existsSync(marker) ? readFileSync(marker, "utf8") : existsSync(join(work, "data")) ? "a model not recorded" : modelId;
if (recorded !== modelId) {
  console.error(`${work} holds vectors of ${recorded}; set CORPUS_EVAL_DIR to another folder for ${modelId}`);
  process.exit(2);
}
writeFileSync(marker, modelId);

// 1. The corpus as a folder of documents, one per abstract: title as heading, then the text.
const corpus = readFileSync(join(data, "corpus.jsonl"), "utf8")
  .trim()
  .split("\n")
  .map((l) => JSON.parse(l) as { _id: string; title: string; text: string });
for (const d of corpus) {
  const file = join(docs, `${d._id}.md`);
  if (!existsSync(file)) writeFileSync(file, `# ${d.title}\n\n${d.text}\n`);
}
const queries = new Map(
  readFileSync(join(data, "queries.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { _id: string; text: string })
    .map((q) => [q._id, q.text]),
);
const qrels = new Map<string, Set<string>>();
for (const line of readFileSync(join(data, "qrels", `${split}.tsv`), "utf8")
  .trim()
  .split("\n")
  .slice(1)) {
  const [q, doc, score] = line.split("\t");
  if (Number(score) > 0) (qrels.get(q!) ?? qrels.set(q!, new Set()).get(q!)!).add(doc!);
}

// 2. Index through the files connector, as a user's connector would be.
const config = loadConfig({ CORPUS_DATA_DIR: join(work, "data"), CORPUS_CONNECTOR_ROOTS: work, CORPUS_LOG_LEVEL: "ERROR" });
// Another variant is evaluated as if it shipped: the service and its embedding worker are given it.
const services = await createServices(config, createLogger("ERROR"), Date.now, undefined, {
  model: { file: modelPath, sha256: modelSha256 },
});
if (!(await services.connectors.ids("eval")).includes("scifact"))
  await services.connectors.add("eval", { id: "scifact", kind: "files", config: { path: docs } });
const [active] = await services.connectors.active("eval", ["scifact"]);
await active!.connector.search({ terms: ["warm"], phrases: [], limit: 1 });
const started = performance.now();
for (;;) {
  const p = active!.connector.progress!();
  if (p.total > 0 && p.embedded === p.total) break;
  process.stderr.write(`\rembedding ${p.embedded} of ${p.total} chunks (${((performance.now() - started) / 1000).toFixed(0)} s)   `);
  await Bun.sleep(2000);
}
process.stderr.write("\n");
await checkModelInUse();

// 3. Ask every claim of the split once and rank its candidates with each dense weight as the
// service does (fuse.ts fuse: its words, its meaning on denseScale, evidence and rare words).
const spread = Number(option("spread", String(DENSE_SPREAD)));
const weights = flag("sweep") ? Array.from({ length: 21 }, (_, i) => i / 20) : [Number(option("weight", String(DENSE_WEIGHT)))];
/** For each claim, the documents it is about and its ranking at each of `weights`. */
const asked: Array<{ relevant: Set<string>; rankings: string[][] }> = [];
const t0 = performance.now();
for (const [qid, relevant] of qrels) {
  const question = queries.get(qid);
  if (!question) continue;
  const outcome = await services.query.run({
    user: "eval",
    question,
    connectorIds: ["scifact"],
    perConnector: 100_000,
    candidates: 300,
    texts: false,
  });
  asked.push({
    relevant,
    rankings: weights.map((weight) =>
      fuse(
        outcome.chunks.map((c) => ({ ...c })),
        outcome.plan,
        weight,
        spread,
      ).map((c) => c.record.path.replace(/\.md$/, "")),
    ),
  });
}
const msPerQuery = (performance.now() - t0) / asked.length;

function evaluate(at: number) {
  let ndcg = 0;
  let recall = 0;
  for (const { relevant, rankings } of asked) {
    const ranked = rankings[at]!;
    let dcg = 0;
    ranked.slice(0, 10).forEach((doc, i) => {
      if (relevant.has(doc)) dcg += 1 / Math.log2(i + 2);
    });
    let ideal = 0;
    for (let i = 0; i < Math.min(10, relevant.size); i++) ideal += 1 / Math.log2(i + 2);
    ndcg += dcg / ideal;
    recall += ranked.slice(0, 100).filter((d) => relevant.has(d)).length / relevant.size;
  }
  return { ndcg: ndcg / asked.length, recall: recall / asked.length };
}

/** The service's vector of a fresh text is the one `modelPath` gives: the variant asked for is the one measured. */
async function checkModelInUse(): Promise<void> {
  const probe = `model probe ${Date.now()}: cells respond to oxidative stress`;
  const [served] = await services.embeddings.embed("eval", [probe]);
  const session = await ort.InferenceSession.create(new Uint8Array(readFileSync(modelPath)), { logSeverityLevel: 3 });
  const ids = services.embeddings.tokenizer.encode(probe, MAX_TOKENS).ids;
  const tensor = (values: number[]) => new ort.Tensor("int64", BigInt64Array.from(values.map(BigInt)), [1, ids.length]);
  const out = await session.run(
    { input_ids: tensor(ids), attention_mask: tensor(ids.map(() => 1)), token_type_ids: tensor(ids.map(() => 0)) },
    ["sentence_embedding"],
  );
  const direct = out.sentence_embedding!.data as Float32Array;
  const agreement = direct.reduce((s, x, i) => s + x * served![i]!, 0);
  await session.release();
  if (agreement < 0.99999)
    throw new Error(`the service embeds with another model than ${modelName} (cosine ${agreement.toFixed(5)} on a probe)`);
}

for (const [at, w] of weights.entries()) {
  const r = evaluate(at);
  console.log(
    `${modelName}  split ${split}  queries ${asked.length}  dense weight ${w.toFixed(2)}  spread ${spread}  nDCG@10 ${r.ndcg.toFixed(4)}  Recall@100 ${r.recall.toFixed(4)}  (${msPerQuery.toFixed(1)} ms/query)`,
  );
}
await services.close();
