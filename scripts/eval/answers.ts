// Answer evaluation (issue 36 item 5, D32): does the short answer a person reads (shape C of
// POST /v1/query) carry the fact asked for? The questions of scripts/eval/answers-labels.json were
// written by reading shared/data (the Enron mail, the invoices' text and expected JSON, the SROIE
// receipts, the Chinook tables with sqlite3, the accounting books with bean-query and ledger),
// each with the fact its answer must hold (a regex, case-insensitive) and the record(s) holding
// it. They are asked of a real server over the same four sources as business.ts and the books
// (a fifth connector, D34), without a connector filter, and scored per source, kind, language
// and overall:
//   fact      the answer text matches the fact
//   cited     a record of the fact is among the sources the answer cites ([n] markers)
//   ranked    a record of the fact is among the sources returned (the ranking's share of a miss)
// Its "intents" are phrasings that walkthroughs and attacks found, labelled with what they ask (an
// amount condition, an amount as the answer), scored for precision and recall against what the
// service reads of them: the plan's compared amounts (planQuery) and what the plan reads it asks (asked.ts askedOf).
//   bun scripts/eval/answers.ts                 test half
//   bun scripts/eval/answers.ts --split train   tune on this half only
//   bun scripts/eval/answers.ts --show          each miss with the answer given
//   bun scripts/eval/answers.ts --asked         what is asked only (answers-asked.ts: the model, no server)
//   bun scripts/eval/answers.ts --without all   what each answer feature is worth (ANSWER_FEATURES)
//   bun scripts/eval/answers.ts --split train --weight rank=2,kind=3   weights tried, to tune
//   bun scripts/eval/answers.ts --split all --only shop-fold-03,invoices-104 --show   those questions only
// The index stays in $CORPUS_EVAL_DIR (shared with business.ts: build it once).
import { embeddingModel } from "../../src/native/assets";
import { ANSWER_FEATURES, answeredKind } from "../../src/retrieval/answer";
import { planQuery } from "../../src/retrieval/plan";
import { chinookCustomers, chinookInvoices } from "../../test/support/chinook";
import { askedSection, questionVectors, READINGS } from "./answers-asked";
import { type AnswerIntent, factPattern, loadAnswerLabels, loadKindQuestions } from "./answers-labels";
import { booksSource, businessServer, flag, keyOf, option, unitOf } from "./business-setup";

const split = option("split", "test");
const show = flag("show");

const labels = loadAnswerLabels();
const only = new Set(option("only", "").split(",").filter(Boolean));
const inSplit = <T extends { split: string; id: string }>(xs: T[]) =>
  xs.filter((x) => (split === "all" || x.split === split) && (only.size === 0 || only.has(x.id)));

// 1. What is asked, and the intents: no server needed, the service's own reading of each question (and the model's).
const intents = inSplit(labels.intents);
const paraphrases = inSplit(loadKindQuestions());
const vectors = await questionVectors([...inSplit(labels.questions), ...paraphrases, ...intents].map((q) => q.question));
askedSection(split, inSplit(labels.questions), paraphrases, vectors);
const readings: Array<[string, "amountCondition" | "asksAmount", (i: AnswerIntent) => boolean]> = [
  ["amountCondition", "amountCondition", (i) => planQuery(i.question).amounts.some((a) => a.comparison !== undefined)],
  ["asksAmount tables", "asksAmount", (i) => READINGS.tables!(i.question, vectors.get(i.question)!) === "amount"],
  ["asksAmount askedOf", "asksAmount", (i) => READINGS.askedOf!(i.question, vectors.get(i.question)!) === "amount"],
];
console.log(`intents (${split}): ${intents.length} questions`);
for (const [name, label, read] of readings) {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  const wrong: string[] = [];
  for (const i of intents) {
    const said = read(i);
    if (said && i[label]) tp++;
    else if (said) fp++;
    else if (i[label]) fn++;
    if (said !== i[label]) wrong.push(`${i.id} read ${said ? "yes" : "no"}: ${i.question}`);
  }
  const ratio = (a: number, b: number) => (b === 0 ? "-" : (a / b).toFixed(3));
  console.log(`  ${name.padEnd(18)} precision ${ratio(tp, tp + fp)} recall ${ratio(tp, tp + fn)}  (${wrong.length} read wrong)`);
  for (const w of wrong) console.log(`    ${w}`);
}

if (flag("asked")) process.exit(0);

// 2. A real server over the four sources and the books; the shop with the tables whose facts are asked.
const asked = inSplit(labels.questions);
const { services, server, url, headers } = await businessServer(
  [
    chinookInvoices(),
    chinookCustomers(["FirstName", "LastName", "Company", "Address", "City", "Country", "Phone", "Email"]),
    {
      name: "Employee",
      id: "EmployeeId",
      title: "LastName",
      text: ["FirstName", "LastName", "Title", "BirthDate", "HireDate", "Address", "City", "Country", "Phone", "Email"],
    },
    { name: "Track", id: "TrackId", title: "Name", text: ["Name", "Composer"] },
  ],
  [booksSource()],
);

interface Reply {
  answer: string;
  sources: Array<{ n: number; connector: string; source_url: string }>;
}
/** An operator's record is cited as corpus://<connector>/<path>, each segment percent-encoded. */
function unitOfSource(s: Reply["sources"][number]): string {
  const m = /^corpus:\/\/[^/]+\/(.*)$/.exec(s.source_url);
  const path = m ? m[1]!.split("/").map(decodeURIComponent).join("/") : s.source_url;
  return keyOf(s.connector, path);
}

async function ask(question: string): Promise<Reply> {
  const res = await fetch(`${url}/v1/query`, { method: "POST", headers, body: JSON.stringify({ query: question, conversation_id: null }) });
  if (res.status !== 200) throw new Error(`${question}: status ${res.status} ${await res.text()}`);
  return (await res.json()) as Reply;
}

// 3. Ask, score, sum per source, kind and language.
type Score = { n: number; fact: number; cited: number; ranked: number };
async function askAll(log: boolean): Promise<{ sums: Map<string, Score>; times: number[] }> {
  const sums = new Map<string, Score>();
  const add = (group: string, s: Omit<Score, "n">) => {
    const t = sums.get(group) ?? sums.set(group, { n: 0, fact: 0, cited: 0, ranked: 0 }).get(group)!;
    t.n++;
    t.fact += s.fact;
    t.cited += s.cited;
    t.ranked += s.ranked;
  };
  const times: number[] = [];
  for (const q of asked) {
    const started = performance.now();
    const reply = await ask(q.question);
    times.push(performance.now() - started);
    const wanted = new Set(q.record.map(unitOf));
    const units = reply.sources.map(unitOfSource);
    const citedNs = new Set([...reply.answer.matchAll(/\[(\d+)\]/g)].map((m) => Number(m[1])));
    const cited = reply.sources.some((s, i) => citedNs.has(s.n) && wanted.has(units[i]!));
    const score = {
      fact: factPattern(q.fact).test(reply.answer) ? 1 : 0,
      cited: cited ? 1 : 0,
      ranked: units.some((u) => wanted.has(u)) ? 1 : 0,
    };
    for (const group of ["overall", `source ${q.source}`, `kind ${q.kind}`, `language ${q.language}`]) add(group, score);
    if (log && !score.fact) {
      console.log(
        `\n${q.id} [${q.source}/${q.kind}/${q.language}, read ${answeredKind(planQuery(q.question, new Date(), { vector: vectors.get(q.question)!, model: embeddingModel.sha256 }))}] ${q.question}\n  fact /${q.fact}/ in ${q.record.join(", ")}`,
      );
      console.log(`  ${score.cited ? "cited" : score.ranked ? "ranked, not cited" : "not ranked"}; sources: ${units.join(" ")}`);
      console.log(`  answer: ${reply.answer.replace(/\s+/g, " ").slice(0, 400)}`);
    }
  }
  return { sums, times: times.sort((a, b) => a - b) };
}

// Weights tried for tuning (--weight kind=3,rank=2), on the train half only.
for (const set of option("weight", "").split(",").filter(Boolean)) {
  const [name, value] = set.split("=");
  const feature = ANSWER_FEATURES[name as keyof typeof ANSWER_FEATURES];
  if (!feature || !Number.isFinite(Number(value))) throw new Error(`--weight ${set}: ${Object.keys(ANSWER_FEATURES).join(", ")}`);
  feature.weight = Number(value);
}
const { sums, times } = await askAll(show);
console.log(
  `\nsplit ${split}: ${asked.length} questions; /v1/query shape C p50 ${times[Math.floor(times.length / 2)]?.toFixed(0) ?? "-"} ms`,
);
console.log(`${"group".padEnd(20)} ${"n".padStart(4)}   fact  cited  ranked`);
const order = (g: string) => (g === "overall" ? "~" : g);
for (const [group, s] of [...sums].sort((a, b) => order(a[0]).localeCompare(order(b[0])))) {
  const f = (x: number) => (x / s.n).toFixed(3);
  console.log(`${group.padEnd(20)} ${String(s.n).padStart(4)}  ${f(s.fact)}  ${f(s.cited)}  ${f(s.ranked)}`);
}

// 4. What each answer feature is worth: the questions asked again with its weight 0 (--without
// <name>[,<name>…], or "all" for each in turn), on the same server and index.
const without = option("without", "");
const switchedOff = without === "all" ? Object.keys(ANSWER_FEATURES) : without.split(",").filter(Boolean);
const overall = (m: Map<string, Score>) => m.get("overall")!.fact / m.get("overall")!.n;
for (const name of switchedOff) {
  const feature = ANSWER_FEATURES[name as keyof typeof ANSWER_FEATURES];
  if (!feature) throw new Error(`no answer feature ${name}: ${Object.keys(ANSWER_FEATURES).join(", ")}`);
  const weight = feature.weight;
  feature.weight = 0;
  const fact = overall((await askAll(false)).sums);
  feature.weight = weight;
  console.log(`without ${name.padEnd(8)} fact ${fact.toFixed(3)} (${(fact - overall(sums)).toFixed(3)}): ${feature.reason}`);
}
server.stop(true);
await services.close();
