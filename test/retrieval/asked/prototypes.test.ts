// The prototypes the model reads what is asked by (D32), and their vectors: every kind in every
// language of the tables, no question twice, none of the evaluation's questions or paraphrases
// (they score this file); a file naming a kind or a language nobody reads is refused; and the
// stored vectors are those of today's prototypes by the shipped model, so an edit of
// prototypes.json without `bun scripts/asked-vectors.ts` fails here (the build runs it).
import { expect, test } from "bun:test";
import { loadAnswerLabels, loadKindQuestions } from "../../../scripts/eval/answers-labels";
import { embeddingModel } from "../../../src/native/assets";
import { type PrototypeVectorsFile, storedPrototypes } from "../../../src/retrieval/asked/classify";
import stored from "../../../src/retrieval/asked/prototype-vectors.json";
import { ASKED_KINDS, PROTOTYPE_LANGUAGES, prototypesDigest, prototypesOf } from "../../../src/retrieval/asked/prototypes";
import file from "../../../src/retrieval/asked/prototypes.json";

const all = prototypesOf();
const normal = (s: string) => s.toLowerCase().replace(/\s+/g, " ").trim();

test("every kind has prototypes in every language, several of each, and some tens per kind", () => {
  for (const kind of ASKED_KINDS) {
    for (const language of PROTOTYPE_LANGUAGES)
      expect({ kind, language, n: all.filter((p) => p.kind === kind && p.language === language).length >= 6 }).toEqual({
        kind,
        language,
        n: true,
      });
    expect(all.filter((p) => p.kind === kind).length).toBeGreaterThanOrEqual(40);
  }
});

test("no prototype is written twice, in one kind or in two", () => {
  const seen = new Map<string, string>();
  const twice = all.filter((p) => seen.get(normal(p.text)) !== undefined || !seen.set(normal(p.text), p.kind));
  expect(twice).toEqual([]);
});

test("no prototype is a question of the answer evaluation or of its paraphrases", () => {
  const evaluated = new Set([...loadAnswerLabels().questions, ...loadKindQuestions()].map((q) => normal(q.question)));
  expect(all.filter((p) => evaluated.has(normal(p.text)))).toEqual([]);
});

test("a file with an unknown kind or language is refused", () => {
  expect(() => prototypesOf({ note: "", kinds: { ...file.kinds, price: { en: ["What is it?"] } } })).toThrow("unknown kind price");
  expect(() => prototypesOf({ note: "", kinds: { amount: { es: ["¿Cuánto costó?"] } } })).toThrow("unknown language es");
});

test("the stored vectors are today's prototypes' by the shipped model, one of 384 dimensions each", () => {
  expect({ model: stored.model, prototypes: stored.prototypes }).toEqual({
    model: embeddingModel.sha256,
    prototypes: prototypesDigest(all),
  });
  const prototypes = storedPrototypes(embeddingModel.sha256)!;
  expect(prototypes.size).toBe(all.length);
  expect(prototypes.dim).toBe(384);
  // Unit vectors, as the model's (quantised: within a few thousandths).
  for (let i = 0; i < all.length; i += 37) {
    const v = prototypes.vector(i);
    expect(Math.abs(Math.hypot(...v) - 1)).toBeLessThan(0.01);
  }
});

test("vectors of another model, or of prototypes edited since, are not used: the tables read alone", () => {
  expect(storedPrototypes("0".repeat(64))).toBeUndefined();
  const edited = { ...all[0]!, text: `${all[0]!.text} ` };
  const stale: PrototypeVectorsFile = { ...stored, prototypes: prototypesDigest([edited, ...all.slice(1)]) };
  expect(storedPrototypes(embeddingModel.sha256, stale)).toBeUndefined();
  // A reordering changes the digest too: a vector would be read as another prototype's kind.
  expect(prototypesDigest([all[1]!, all[0]!, ...all.slice(2)])).not.toBe(prototypesDigest(all));
});
