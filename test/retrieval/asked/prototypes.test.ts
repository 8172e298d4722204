// The prototypes the model reads what is asked by (D32): every kind in every language of the
// tables, no question twice, none of the evaluation's questions (they score this file), and a
// file naming a kind or a language nobody reads is refused rather than silently learned.
import { expect, test } from "bun:test";
import { loadAnswerLabels } from "../../../scripts/eval/answers-labels";
import { ASKED_KINDS, PROTOTYPE_LANGUAGES, prototypesOf } from "../../../src/retrieval/asked/prototypes";
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

test("no prototype is a question of the answer evaluation", () => {
  const evaluated = new Set(loadAnswerLabels().questions.map((q) => normal(q.question)));
  expect(all.filter((p) => evaluated.has(normal(p.text)))).toEqual([]);
});

test("a file with an unknown kind or language is refused", () => {
  expect(() => prototypesOf({ note: "", kinds: { ...file.kinds, price: { en: ["What is it?"] } } })).toThrow("unknown kind price");
  expect(() => prototypesOf({ note: "", kinds: { amount: { es: ["¿Cuánto costó?"] } } })).toThrow("unknown language es");
});
