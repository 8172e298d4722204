// "What is asked" (D32), the first section of answers.ts: how well each reading of a question
// names the kind of answer its label says (amount, date, place, person, item, count, list,
// yes/no, open), per language and kind, with the confusions of each, on the evaluation's
// questions and on answers-kinds.json's paraphrases (wordings the tables may not know). Readings:
// the language tables alone (askedOf without a vector), the model alone (the prototypes' nearest
// kind), and askedOf with the question's vector, as the server reads it (the tables where they
// read a kind by a question word, the model where they read none or only a noun and it is sure).
// Needs only the embedder: a service of its own in a temporary folder, the one the server runs
// (worker, model), closed before the server starts.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserKeys } from "../../src/crypto/user-keys";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { embeddingModel } from "../../src/native/assets";
import { ASKED_KINDS, type Asks, askedOf } from "../../src/retrieval/asked";
import { storedPrototypes } from "../../src/retrieval/asked/classify";
import { openDatabase } from "../../src/store/database";

const ratio = (a: number, n: number) => (n === 0 ? "   -" : (a / n).toFixed(2));

interface Labelled {
  id: string;
  kind: Asks;
  language: string;
  question: string;
}

type Reading = (question: string, vector: Float32Array) => Asks;

/** The readings, by name, given the question's vector. */
const prototypes = () => {
  const stored = storedPrototypes(embeddingModel.sha256);
  if (!stored) throw new Error("src/retrieval/asked/prototype-vectors.json is stale: run bun scripts/asked-vectors.ts");
  return stored;
};
export const READINGS: Record<string, Reading> = {
  tables: (q) => askedOf(q).asks,
  model: (_, v) => prototypes().classify(v).kind,
  askedOf: (q, v) => askedOf(q, { vector: v, model: embeddingModel.sha256 }).asks,
};

/** The share of `set` each reading names right, per language and kind, and its confusions. */
function printSet(title: string, set: Labelled[], vectors: Map<string, Float32Array>): void {
  const languages = [...new Set(set.map((q) => q.language))].sort();
  const columns = ["all", ...languages, ...ASKED_KINDS];
  console.log(`${title}: ${set.length} questions; share of kinds read right`);
  console.log(`  ${"reading".padEnd(8)} ${columns.map((g) => g.padStart(6)).join(" ")}`);
  const confusions: string[] = [];
  for (const [name, read] of Object.entries(READINGS)) {
    const groups = new Map<string, [number, number]>();
    const confused = new Map<string, number>();
    for (const q of set) {
      const said = read(q.question, vectors.get(q.question)!);
      for (const g of ["all", q.language, q.kind]) {
        const t = groups.get(g) ?? groups.set(g, [0, 0]).get(g)!;
        t[0] += said === q.kind ? 1 : 0;
        t[1]++;
      }
      if (said !== q.kind) confused.set(`${q.kind}>${said}`, (confused.get(`${q.kind}>${said}`) ?? 0) + 1);
    }
    console.log(`  ${name.padEnd(8)} ${columns.map((g) => ratio(...(groups.get(g) ?? [0, 0])).padStart(6)).join(" ")}`);
    const pairs = [...confused].sort((a, b) => b[1] - a[1]).map(([pair, n]) => `${pair} ${n}`);
    confusions.push(`    ${name.padEnd(8)} ${pairs.join(", ") || "none"}`);
  }
  console.log("  confusions (labelled>read: count):");
  for (const line of confusions) console.log(line);
}

/** Every question's vector by the model the server runs (its worker), keyed by its text. */
export async function questionVectors(texts: string[]): Promise<Map<string, Float32Array>> {
  const dir = mkdtempSync(join(tmpdir(), "corpus-eval-asked-"));
  const db = openDatabase(dir, MIGRATIONS);
  const embeddings = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1 });
  try {
    const unique = [...new Set(texts)];
    const vectors = await embeddings.embed("eval", unique);
    return new Map(unique.map((t, i) => [t, vectors[i]!]));
  } finally {
    await embeddings.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Prints the section for the evaluation's questions and the paraphrases. */
export function askedSection(split: string, questions: Labelled[], paraphrases: Labelled[], vectors: Map<string, Float32Array>): void {
  printSet(`what is asked (${split})`, questions, vectors);
  printSet(`what is asked, paraphrased (answers-kinds.json, ${split})`, paraphrases, vectors);
}
