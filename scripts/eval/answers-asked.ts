// "What is asked" (D32), the first section of answers.ts: how well each reading of a question
// names the kind of answer its label says (amount, date, place, person, item, count, list,
// yes/no, open), per kind and per language, with the confusions of each. Readings: the language
// tables alone (askedOf, the plan's reading), the model alone (the prototypes' nearest kind), and
// askedWithModel (the tables where they read a kind, the model otherwise). Needs only the embedder: a service of its own in a
// temporary folder, the one the server runs (worker, model), closed before the server starts.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { UserKeys } from "../../src/crypto/user-keys";
import { EmbeddingService } from "../../src/embedding/service";
import { MIGRATIONS } from "../../src/migrations";
import { askedOf } from "../../src/retrieval/asked";
import { askedReaderOf, askedWithModel } from "../../src/retrieval/asked/asked";
import { ASKED_KINDS } from "../../src/retrieval/asked/prototypes";
import { openDatabase } from "../../src/store/database";
import type { AnswerIntent, AnswerQuestion } from "./answers-labels";

const ratio = (a: number, n: number) => (n === 0 ? "   -" : (a / n).toFixed(2));

/** Prints the section; returns, per intent, whether askedWithModel reads an amount asked (asksAmount). */
export async function askedSection(questions: AnswerQuestion[], intents: AnswerIntent[], split: string) {
  const dir = mkdtempSync(join(tmpdir(), "corpus-eval-asked-"));
  const db = openDatabase(dir, MIGRATIONS);
  const embeddings = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1 });
  try {
    const reader = askedReaderOf(embeddings);
    const prototypes = await reader.prepare();
    if (!prototypes) throw new Error("the model could not embed the prototypes");
    const vectors = await embeddings.embed(
      "eval",
      questions.map((q) => q.question),
    );
    const intentVectors = await embeddings.embed(
      "eval",
      intents.map((i) => i.question),
    );
    const readings = {
      tables: (q: string) => askedOf(q).asks,
      model: (_: string, v: Float32Array) => prototypes.classify(v).kind,
      both: (q: string, v: Float32Array) => askedWithModel(q, v, prototypes).asks,
    };
    const languages = [...new Set(questions.map((q) => q.language))].sort();
    console.log(
      `what is asked (${split}): ${questions.length} questions, ${prototypes.prototypes.length} prototypes; share of kinds read right`,
    );
    console.log(`  ${"reading".padEnd(8)} ${"all".padStart(5)} ${[...languages, ...ASKED_KINDS].map((g) => g.padStart(6)).join(" ")}`);
    const confusions = new Map<string, Map<string, number>>();
    for (const [name, read] of Object.entries(readings)) {
      const groups = new Map<string, [number, number]>();
      const confused = new Map<string, number>();
      questions.forEach((q, i) => {
        const said = read(q.question, vectors[i]!);
        const right = said === q.kind;
        for (const g of ["all", q.language, q.kind]) {
          const t = groups.get(g) ?? groups.set(g, [0, 0]).get(g)!;
          t[0] += right ? 1 : 0;
          t[1]++;
        }
        if (!right) confused.set(`${q.kind}>${said}`, (confused.get(`${q.kind}>${said}`) ?? 0) + 1);
      });
      confusions.set(name, confused);
      const cell = (g: string) => ratio(...(groups.get(g) ?? [0, 0])).padStart(6);
      console.log(`  ${name.padEnd(8)} ${cell("all").slice(1)} ${[...languages, ...ASKED_KINDS].map(cell).join(" ")}`);
    }
    console.log("  confusions (labelled>read: count):");
    for (const [name, confused] of confusions)
      console.log(
        `    ${name.padEnd(8)} ${[...confused]
          .sort((a, b) => b[1] - a[1])
          .map(([pair, n]) => `${pair} ${n}`)
          .join(", ")}`,
      );
    return new Map(intents.map((it, i) => [it.id, askedWithModel(it.question, intentVectors[i]!, prototypes).asks === "amount"]));
  } finally {
    await embeddings.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
