// What a question asks (D32): one reading, made once per question into its plan (plan.ts), that
// ranking, citing and answering share. askedOf is the single entry point, so that a classifier by
// the embedding model can replace its body; today it reads the language tables' rows: the
// question's language by its function words, then the first question word of a kind ("when",
// "waar", "wer"), else the first noun or verb of one ("the due date", "het bedrag", "gekocht").
import { TAX } from "./amounts";
import { asksTaxAmount, comparesMoney } from "./language/grammar";
import { anyOf, wholeWords } from "./language/patterns";
import {
  ARTICLES,
  ASKS_COUNT,
  ASKS_QUANTITY,
  ASKS_WHEN,
  ASKS_WHERE,
  ASKS_WHICH,
  ASKS_WHO,
  AUXILIARIES,
  BOUGHT,
  CONTACT_NOUNS,
  DATE_NOUNS,
  IS,
  type Language,
  MONEY_WORDS,
  PARTITIVE,
  PERSON_NOUNS,
  PLACE_NOUNS,
  QUESTION_WORDS,
  TAX_ON,
  type Table,
  WAS,
  YES_NO,
} from "./language/words";

export type Asks = "amount" | "date" | "place" | "person" | "item" | "count" | "yes/no" | "list" | "open";

export interface Asked {
  asks: Asks;
  /** A tax is named: its line is the amount asked ("how much VAT"), else a part of the total. */
  tax: boolean;
  /** A place or a way to reach someone is asked: contact lines (address, phone, e-mail) are answers. */
  contact: boolean;
  language: Language;
}

const LANGUAGES: Language[] = ["en", "nl", "fr", "de", "pl"];
/** How much of a question is read (a question is at most 4,000 characters). */
const PROBE = 1_000;

const FUNCTION_WORDS = new Map(
  LANGUAGES.map((l) => [
    l,
    new Set(
      [QUESTION_WORDS, ARTICLES, AUXILIARIES, IS, WAS, TAX_ON, PARTITIVE, ASKS_QUANTITY, YES_NO].flatMap((t) =>
        t[l].flatMap((r) => r.split(" ")),
      ),
    ),
  ]),
);

/** The language whose function words the question has most of; English on a tie. */
export function languageOf(question: string): Language {
  const written =
    question
      .slice(0, PROBE)
      .toLowerCase()
      .match(/[\p{L}'’-]+/gu) ?? [];
  let best: Language = "en";
  let most = 0;
  for (const l of LANGUAGES) {
    const n = written.filter((w) => FUNCTION_WORDS.get(l)!.has(w)).length;
    if (n > most) [best, most] = [l, n];
  }
  return best;
}

/** Dutch and German write a date's noun as a compound's last part ("vervaldatum", "Rechnungsdatum"). */
const COMPOUNDING = new Set<Language>(["nl", "de"]);
const pattern = (t: Table, l: Language, compound = false) =>
  t[l].length === 0 ? undefined : new RegExp(compound ? `${anyOf(t[l])}(?![\\p{L}])` : wholeWords(t[l]), "iu");
type Rules = Array<[Asks, RegExp | undefined]>;
const READINGS = new Map(
  LANGUAGES.map((l) => {
    // A question word decides first: "When is the total amount due?" asks a date.
    const questionWords: Rules = [
      ["date", pattern(ASKS_WHEN, l)],
      ["place", pattern(ASKS_WHERE, l)],
      ["person", pattern(ASKS_WHO, l)],
      ["count", pattern(ASKS_COUNT, l)],
      ["amount", pattern(ASKS_QUANTITY, l)],
    ];
    const nouns: Rules = [
      ["open", pattern(CONTACT_NOUNS, l)],
      ["date", pattern(DATE_NOUNS, l, COMPOUNDING.has(l))],
      ["place", pattern(PLACE_NOUNS, l)],
      ["amount", pattern(MONEY_WORDS, l)],
      ["person", pattern(PERSON_NOUNS, l)],
    ];
    const which = ASKS_WHICH[l].length ? new RegExp(`${wholeWords(ASKS_WHICH[l])}((?:\\s+[\\p{L}-]+){1,3})`, "iu") : undefined;
    const yesNo = new RegExp(`^\\s*${wholeWords(YES_NO[l])}`, "iu");
    return [l, { questionWords, nouns, which, yesNo, bought: pattern(BOUGHT, l), contact: pattern(CONTACT_NOUNS, l) }];
  }),
);

/** The kind of the rule matching first in the question, if any. */
function first(rules: Rules, q: string): Asks | undefined {
  let at = Number.POSITIVE_INFINITY;
  let kind: Asks | undefined;
  for (const [k, re] of rules) {
    const i = re ? q.search(re) : -1;
    if (i >= 0 && i < at) [at, kind] = [i, k];
  }
  return kind;
}

/** A plural noun after "which" ("which products", "welke artikelen"): not a function word, not a possessive. */
const PLURAL_ENDING: Record<Language, RegExp> = { en: /s$/, nl: /(en|s)$/, fr: /[sx]$/, de: /(en|e|er)$/, pl: /[yie]$/ };

export function askedOf(question: string): Asked {
  const q = question.slice(0, PROBE);
  const language = languageOf(q);
  const r = READINGS.get(language)!;
  const tax = TAX.test(q);
  // A tax's amount or a compared amount of money is read by the grammar, wherever it is said.
  const money = asksTaxAmount(q) || comparesMoney(q);
  let asks = first(r.questionWords, q) ?? (money ? "amount" : first(r.nouns, q));
  const which = r.which?.exec(q);
  // "What did I buy", "Welke tablet heb ik gekocht": an item bought.
  if (!asks && which && r.bought?.test(q.slice(which.index))) asks = "item";
  if (!asks) {
    const after = which?.[1]?.trim().split(/\s+/) ?? [];
    const plural = after.some(
      (w) => PLURAL_ENDING[language].test(w.toLowerCase()) && !/['’]/.test(w) && !FUNCTION_WORDS.get(language)!.has(w.toLowerCase()),
    );
    asks = plural ? "list" : r.yesNo.test(q) ? "yes/no" : "open";
  }
  const contact = asks === "place" || (r.contact?.test(q) ?? false);
  return { asks, tax, contact, language };
}
