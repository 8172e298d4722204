// Ranking evaluation on what business users connect (issue 16): the Enron maildir (all 1,702
// messages of shared/data/enron), the invoices folder, the SROIE receipts (one text file each)
// and the Chinook shop (SQLite: Invoice and Customer rows), all connected at once. The questions
// of scripts/eval/business-labels.json (written and graded 0/1/2 by reading the data, see its
// notes) are asked through the REST API of a real server without a connector filter; nDCG@10 and
// Recall@10 are printed per source and overall, next to plain BM25 over the same records.
//   bun scripts/eval/business.ts                 test half
//   bun scripts/eval/business.ts --split train   tune on this half only
//   bun scripts/eval/business.ts --show          each question's top 10 (for reading, not labelling)
// The index (and its embeddings) stays in $CORPUS_EVAL_DIR (default /tmp/corpus-eval-business).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { foldedWords } from "../../src/connectors/index-terms";
import { bm25Scores } from "../../src/retrieval/bm25";
import { chinookCustomers, chinookInvoices } from "../../test/support/chinook";
import { businessServer, connectorOfKey, flag, keyOf, option, unitOf } from "./business-setup";

const split = option("split", "test");
const show = flag("show");

interface Labelled {
  id: string;
  split: "train" | "test";
  question: string;
  /** "mail:<file id>", "invoices:<name>", "receipts:<id>", "shop:Invoice/<id>" or "shop:Customer/<id>": 2 answers it, 1 is related. */
  relevant: Record<string, 1 | 2>;
  note: string;
}
const labels = JSON.parse(readFileSync(join(import.meta.dir, "business-labels.json"), "utf8")) as { questions: Labelled[] };
const asked = labels.questions.filter((q) => split === "all" || q.split === split);
const judged = (q: Labelled) => {
  const out = new Map<string, number>();
  for (const [k, g] of Object.entries(q.relevant)) {
    const key = unitOf(k);
    out.set(key, Math.max(out.get(key) ?? 0, g));
  }
  return out;
};

// 2. A real server with the four sources connected by the operator.
const { services, server, url, headers } = await businessServer([
  chinookInvoices(),
  chinookCustomers(["FirstName", "LastName", "Company", "City", "Country", "Email"]),
]);

// 3. The same records for the baseline: every record of every source, title and text.
const records: Array<{ key: string; text: string }> = [];
for (const a of await services.connectors.active("eval")) {
  for (const r of await a.connector.search({ terms: [], phrases: [], limit: 1_000_000 })) {
    const meta = r.type === "email" ? `${r.metadata.from ?? ""} ${r.metadata.to ?? ""} ${r.metadata.cc ?? ""}` : "";
    records.push({ key: keyOf(a.id, r.path), text: `${r.title} ${meta} ${r.content}` });
  }
}
const STOP = new Set(
  "a an and are as at be by did do does for from how i in is it me of on or show that the their there this to was what when where which who whom why with any all our us we you".split(
    " ",
  ),
);
function bm25Ranking(question: string): string[] {
  // Stop words are told before stemming (bm25Scores stems what is left).
  const terms = foldedWords(question).filter((w) => w.length > 1 && !STOP.has(w));
  const scores = bm25Scores(
    records.map((r) => r.text),
    terms,
  );
  return records
    .map((r, i) => ({ key: r.key, s: scores[i]! }))
    .filter((x) => x.s > 0)
    .sort((a, b) => b.s - a.s)
    .map((x) => x.key);
}

async function corpusRanking(question: string): Promise<{ keys: string[]; shown: string[] }> {
  const res = await fetch(`${url}/v1/query`, { method: "POST", headers, body: JSON.stringify({ q: question, top_k: 10 }) });
  if (res.status !== 200) throw new Error(`${question}: status ${res.status} ${await res.text()}`);
  const body = (await res.json()) as { results: Array<{ source: { type: string; path: string }; score: number; snippet: string }> };
  // Shape A names the record, not its connector: a path's form tells the source.
  const keys = body.results.map((r) => {
    const p = r.source.path;
    const connector =
      r.source.type === "email" ? "mail" : /^(Invoice|Customer)\//.test(p) ? "shop" : /^\d{3}\.txt$/.test(p) ? "receipts" : "invoices";
    return keyOf(connector, p);
  });
  return { keys, shown: body.results.map((r, i) => `${keys[i]} ${r.score.toFixed(3)} ${r.snippet.slice(0, 80).replace(/\s+/g, " ")}`) };
}

/** First copy of each unit only: a copy shown twice is a slot wasted, not a second hit. */
const distinct = (keys: string[]) => [...new Set(keys)];

function scoreOf(ranked: string[], rel: Map<string, number>) {
  const top = distinct(ranked).slice(0, 10);
  let dcg = 0;
  top.forEach((k, i) => {
    const g = rel.get(k) ?? 0;
    if (g) dcg += (2 ** g - 1) / Math.log2(i + 2);
  });
  const ideal = [...rel.values()]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .reduce((s, g, i) => s + (2 ** g - 1) / Math.log2(i + 2), 0);
  const found = top.filter((k) => (rel.get(k) ?? 0) > 0).length;
  return { ndcg: ideal ? dcg / ideal : 0, recall: found / Math.max(1, Math.min(10, [...rel.values()].filter((g) => g > 0).length)) };
}

// 4. Ask, judge, sum per source (a question's source is that of its relevant records).
const sums = new Map<string, { n: number; corpus: { ndcg: number; recall: number }; bm25: { ndcg: number; recall: number } }>();
const add = (source: string, c: { ndcg: number; recall: number }, b: { ndcg: number; recall: number }) => {
  const s = sums.get(source) ?? sums.set(source, { n: 0, corpus: { ndcg: 0, recall: 0 }, bm25: { ndcg: 0, recall: 0 } }).get(source)!;
  s.n++;
  s.corpus.ndcg += c.ndcg;
  s.corpus.recall += c.recall;
  s.bm25.ndcg += b.ndcg;
  s.bm25.recall += b.recall;
};
const times: number[] = [];
for (const q of asked) {
  const rel = judged(q);
  const s = performance.now();
  const mine = await corpusRanking(q.question);
  times.push(performance.now() - s);
  const c = scoreOf(mine.keys, rel);
  const b = scoreOf(bm25Ranking(q.question), rel);
  const sources = [...new Set([...rel.keys()].map(connectorOfKey))];
  add("overall", c, b);
  add(sources.length === 1 ? sources[0]! : "mixed", c, b);
  if (show) {
    console.log(`\n${q.id} ${q.question}  corpus ${c.ndcg.toFixed(3)} bm25 ${b.ndcg.toFixed(3)}`);
    for (const line of mine.shown) console.log(`   ${rel.has(line.split(" ")[0]!) ? `[${rel.get(line.split(" ")[0]!)}]` : "   "} ${line}`);
  }
}
times.sort((a, b) => a - b);
console.log(
  `split ${split}: ${asked.length} questions, ${records.length} records; /v1/query p50 ${times[Math.floor(times.length / 2)]!.toFixed(0)} ms`,
);
console.log(`${"source".padEnd(10)} ${"n".padStart(3)}   corpus nDCG@10  R@10    BM25 nDCG@10  R@10`);
for (const [source, s] of [...sums].sort((a, b) => (a[0] === "overall" ? 1 : b[0] === "overall" ? -1 : a[0].localeCompare(b[0])))) {
  const f = (x: number) => (x / s.n).toFixed(3);
  console.log(
    `${source.padEnd(10)} ${String(s.n).padStart(3)}   ${f(s.corpus.ndcg).padStart(14)} ${f(s.corpus.recall).padStart(5)}   ${f(s.bm25.ndcg).padStart(12)} ${f(s.bm25.recall).padStart(5)}`,
  );
}
server.stop(true);
await services.close();
