// What a question asks (D32): one reading, made once per question into its plan (plan.ts), that
// ranking, citing and answering share. The language tables' rows read it first: the question's
// language by its function words, then the first question word of a kind ("when", "waar", "wer"),
// else the first noun or verb of one ("the due date", "het bedrag", "gekocht"); the grammar reads
// a tax's amount and compared money. Where the tables read nothing (their default, "open"), the
// embedding model's nearest prototypes decide (asked/classify.ts), from the vector ranking embeds.
import { PART_OF_TOTAL, TAX } from "./amounts";
import { type AskedByModel, storedPrototypes } from "./asked/classify";
import type { Asks } from "./asked/prototypes";
import { words } from "./bm25";
import { asksTaxAmount, comparesMoney } from "./language/grammar";
import { anyOf, wholeWords } from "./language/patterns";
import {
  APPROVING,
  ARTICLES,
  ASKS_COUNT,
  ASKS_HOW,
  ASKS_QUANTITY,
  ASKS_WHEN,
  ASKS_WHERE,
  ASKS_WHICH,
  ASKS_WHO,
  AUTHORING,
  AUXILIARIES,
  all,
  BALANCE_NOUNS,
  BOUGHT,
  CONTACT_NOUNS,
  COUNTED,
  DATE_NOUNS,
  DUE,
  FILLER_WORDS,
  IDENTIFIER_NOUNS,
  IS,
  type Language,
  MERCHANT_NOUNS,
  MONEY_WORDS,
  NAMING_VERBS,
  PARTITIVE,
  PERSON_NOUNS,
  PLACE_NOUNS,
  PREPOSITIONS,
  PRONOUNS,
  QUESTION_WORDS,
  SPENDING,
  STATED_TERMS,
  TAX_NOUNS,
  TAX_ON,
  type Table,
  WAS,
  YES_NO,
} from "./language/words";
import { namesIn } from "./rare-words";

export { ASKED_KINDS, type Asks } from "./asked/prototypes";

export interface Asked {
  asks: Asks;
  /**
   * What decided the kind: a question word of a kind or the grammar ("word"), a noun or verb of
   * one ("noun"), no word the tables know ("none": "open", a plural after "which" a list, a first
   * auxiliary a yes/no), or the embedding model's nearest prototypes ("model").
   */
  by: "word" | "noun" | "none" | "model";
  /** A tax is named: its line is the amount asked ("how much VAT"), else a part of the total. */
  tax: boolean;
  /** A place or a way to reach someone is asked: contact lines (address, phone, e-mail) are answers. */
  contact: boolean;
  /** A deadline is asked ("until when", "the due date"): its label ("Vervaldatum", "Zahlungsziel") says which date answers. */
  due: boolean;
  /** Who wrote, sent or announced something is asked: a mail's senders answer (senders.ts). */
  author: boolean;
  /** Who approved something is asked: the sender of the mail approving it answers. */
  approver: boolean;
  /** How something was paid is asked ("How did I pay …", "Hoe is … betaald?", "Jak zapłacono …"): a means of paying answers. */
  paying: boolean;
  /** Which shop is asked ("Which shop sold me …", "welke winkel"): the company a receipt opens with answers. */
  merchant: boolean;
  language: Language;
  /** What the question asks about, its first words after the question word ("total" of "what was the total of the invoice"), as the index folds them. */
  focus: string[];
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

/** A language's function words and its deadline's words: "Do kiedy …" is Polish by "do kiedy", not English by "do". */
const LANGUAGE_WORDS = new Map(LANGUAGES.map((l) => [l, new Set([...FUNCTION_WORDS.get(l)!, ...DUE[l].flatMap((r) => r.split(" "))])]));

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
    const n = written.filter((w) => LANGUAGE_WORDS.get(l)!.has(w)).length;
    if (n > most) [best, most] = [l, n];
  }
  return best;
}

/** Auxiliaries of a verb, not "is" or "was": after "which" or "what", the noun they are followed by is the verb's subject. */
const DOING = new Map(LANGUAGES.map((l) => [l, new Set(AUXILIARIES[l].filter((a) => !IS[l].includes(a) && !WAS[l].includes(a)))]));

/** Dutch and German write a date's noun as a compound's last part ("vervaldatum", "Rechnungsdatum"). */
const COMPOUNDING = new Set<Language>(["nl", "de"]);
const pattern = (t: Table, l: Language, compound = false) =>
  t[l].length === 0 ? undefined : new RegExp(compound ? `${anyOf(t[l])}(?![\\p{L}])` : wholeWords(t[l]), "iu");
/** A kind, the pattern that asks it, and where in the question it may start (a verb of buying after "what"). */
type Rules = Array<[Asks, RegExp | undefined, number?]>;
const READINGS = new Map(
  LANGUAGES.map((l) => {
    // A question word decides first: "When is the total amount due?" asks a date.
    const questionWords: Rules = [
      ["date", pattern(ASKS_WHEN, l)],
      ["place", pattern(ASKS_WHERE, l)],
      ["person", pattern(ASKS_WHO, l)],
      ["count", pattern(ASKS_COUNT, l)],
      // "Ile litrów", "hoeveel stuks": a quantity of a thing counted or measured is a count.
      ["count", new RegExp(`${wholeWords(ASKS_QUANTITY[l])}\\s+${wholeWords(COUNTED[l], "(?:e?s)?")}`, "iu")],
      ["amount", pattern(ASKS_QUANTITY, l)],
      // Last: at the same place "how much" and "wie hoch" ask a quantity.
      // Not before a verb asking what something reads ("Wie lautet das Rechnungsdatum?"): its noun asks.
      [
        "open",
        NAMING_VERBS[l].length
          ? new RegExp(`${wholeWords(ASKS_HOW[l])}(?!\\s+${wholeWords(NAMING_VERBS[l])})`, "iu")
          : pattern(ASKS_HOW, l),
      ],
    ];
    // A contact, a record's number or an amount is asked whatever else is named ("the e-mail
    // address", "the serial number of the iPad I bought", "what did the drink cost").
    const reach: Rules = [
      ["open", pattern(CONTACT_NOUNS, l)],
      ["open", pattern(IDENTIFIER_NOUNS, l, COMPOUNDING.has(l))],
      ["amount", pattern(MONEY_WORDS, l, COMPOUNDING.has(l))],
      // "What did the Budapest customer spend", "het saldo van".
      ["amount", pattern({ ...SPENDING, [l]: [...SPENDING[l], ...BALANCE_NOUNS[l]] }, l)],
    ];
    const nouns: Rules = [
      ["date", pattern(DATE_NOUNS, l, COMPOUNDING.has(l))],
      ["place", pattern(PLACE_NOUNS, l)],
      ["person", pattern(PERSON_NOUNS, l)],
      ["person", pattern(MERCHANT_NOUNS, l)],
    ];
    const which = ASKS_WHICH[l].length ? new RegExp(`${wholeWords(ASKS_WHICH[l])}((?:\\s+[\\p{L}-]+){1,3})`, "iu") : undefined;
    const yesNo = new RegExp(`^\\s*${wholeWords(YES_NO[l])}`, "iu");
    const terms = pattern(STATED_TERMS, l, COMPOUNDING.has(l));
    const [bought, contact, authoring, approving, how, spending, merchant] = [
      BOUGHT,
      CONTACT_NOUNS,
      AUTHORING,
      APPROVING,
      ASKS_HOW,
      SPENDING,
      MERCHANT_NOUNS,
    ].map((t) => pattern(t, l));
    return [l, { questionWords, reach, nouns, which, yesNo, terms, bought, contact, authoring, approving, how, spending, merchant }];
  }),
);

/** A deadline asked, in any language the tables speak: a label's words ("vervaldatum") are asked in others too. */
export const DUE_ASKED = new RegExp(anyOf(all(DUE)), "iu");

/** The kind of the rule matching first in the question, if any. */
function first(rules: Rules, q: string): Asks | undefined {
  let at = Number.POSITIVE_INFINITY;
  let kind: Asks | undefined;
  for (const [k, re, from = 0] of rules) {
    const i = re ? q.slice(from).search(re) : -1;
    if (i >= 0 && i + from < at) [at, kind] = [i + from, k];
  }
  return kind;
}

/** A plural noun after "which" ("which products", "welke artikelen"): not a function word, not a possessive. */
const PLURAL_ENDING: Record<Language, RegExp> = { en: /s$/, nl: /(en|s)$/, fr: /[sx]$/, de: /(en|e|er)$/, pl: /[yie]$/ };

/** The question's vector as ranking embeds it, and the sha256 of the model that embedded it: prototypes meet only their own model's vectors. */
export interface QuestionMeaning {
  vector: Float32Array;
  model: string;
}

/**
 * How much nearer its kind than the runner-up the model must be (the difference of their mean
 * cosines) to decide where the tables read nothing. Tuned on the train halves of the evaluation's
 * questions and of answers-kinds.json's paraphrases: 0.01 reads 0.977 and 0.700 of them (the
 * tables alone 0.977 and 0.500); 0 reads 0.962 and 0.680 (the model's near-ties over the tables'
 * "open"), 0.02 0.977 and 0.680, 0.05 0.977 and 0.560. The model deciding over the tables' weaker
 * readings too was worse at every margin: over a yes/no read by its first word or a list by a
 * plural after "which", 0.977 and 0.680; over a kind read by a noun (margins 0.02 to 0.2), the
 * evaluation's questions fell to 0.939-0.970 and the paraphrases gained nothing.
 */
export const MODEL_MARGIN = 0.01;

/**
 * What `question` asks. With its meaning (the vector ranking embeds), the model reads what the
 * tables do not: the one entry point, for the plan (plan.ts) and the evaluation alike.
 */
export function askedOf(question: string, meaning?: QuestionMeaning): Asked {
  const q = question.slice(0, PROBE);
  const language = languageOf(q);
  const r = READINGS.get(language)!;
  // Not the names a verb asks by ("pay Amazon Web Services": which record, not what of it); German capitalises every noun.
  const focus = focusOf(q, language, language === "de" ? new Set() : questionNames(q));
  // A tax's amount or a compared amount of money is read by the grammar, wherever it is said.
  const taxAmount = asksTaxAmount(q);
  const money = taxAmount || comparesMoney(q);
  // A tax asked about is the amount asked ("how much VAT", "Could you tell me how much VAT I paid":
  // the grammar's, past the focus); "the amount excluding VAT" asks a part of the total.
  const tax = (taxAmount || TAX.test(focus.join(" "))) && !PART_OF_TOTAL.test(focus.join(" "));
  const which = r.which?.exec(q);
  // The noun "which" asks by, past function words and names ("Which Chinook employees"): a plural
  // asks a list ("Which flowers"), but a statement's ("Welche Zahlungsbedingungen").
  // Not past a verb's auxiliary ("What did the customer in Santiago pay?": the customer does, the amount is asked).
  const after = which?.[1]?.trim().split(/\s+/) ?? [];
  const subject = after.length > 0 && DOING.get(language)!.has(after[0]!.toLowerCase());
  const noun = subject
    ? undefined
    : after.find((w) => !FUNCTION_WORDS.get(language)!.has(w.toLowerCase()) && (language === "de" || !/^\p{Lu}/u.test(w)));
  const plural = noun !== undefined && PLURAL_ENDING[language].test(noun.toLowerCase()) && !/['’]/.test(noun) && !r.terms?.test(noun);
  // "What did I buy", "Welke tablet heb ik gekocht": an item bought ("Which flowers did I buy": items), unless a noun of a kind comes first.
  const bought: Rules = which && r.bought ? [[plural ? "list" : "item", r.bought, which.index]] : [];
  // A noun of a kind after "which" decides before any other word ("Which city was the invoice billed to?").
  const byWord = first(r.questionWords, q) ?? (noun ? first(r.nouns, noun) : undefined) ?? (money ? "amount" : undefined);
  const byNoun = byWord ? undefined : (first(r.reach, q) ?? first([...r.nouns, ...bought], q));
  const tables = byWord ?? byNoun ?? (plural ? "list" : r.yesNo.test(q) ? "yes/no" : "open");
  const read: Asked["by"] = byWord ? "word" : byNoun ? "noun" : "none";
  // Only where the tables read nothing at all: a yes/no by its first word, a list by a plural after "which" stand (MODEL_MARGIN).
  const model = tables === "open" && read === "none" && meaning ? modelReading(q, meaning) : undefined;
  const [asks, by] = model && model.margin >= MODEL_MARGIN ? [model.kind, "model" as const] : [tables, read];
  const contact = asks === "place" || (r.contact?.test(q) ?? false);
  const author = asks === "person" && (r.authoring?.test(q) ?? false);
  const approver = asks === "person" && (r.approving?.test(q) ?? false);
  const paying = asks === "open" && (r.how?.test(q) ?? false) && (r.spending?.test(q) ?? false);
  const due = asks === "date" && DUE_ASKED.test(q);
  const merchant = asks === "person" && (r.merchant?.test(q) ?? false);
  return { asks, by, tax, contact, due, author, approver, paying, merchant, language, focus: [...words(focus.join(" "))] };
}

/**
 * The model's kind of a question, by the prototypes of the model that embedded it (none of
 * another model's). A tax's amount is the grammar's to read (it reads it where it is asked): the
 * model read "What's the story with the VAT?" and "What is the VAT rate …?" as amounts, so its
 * runner-up answers there.
 */
function modelReading(q: string, meaning: QuestionMeaning): AskedByModel | undefined {
  const read = storedPrototypes(meaning.model)?.classify(meaning.vector);
  if (read?.kind !== "amount" || !TAX.test(q)) return read;
  return { ...read, kind: read.runnerUp, runnerUp: read.kind };
}

/** A tax's nouns as the index folds them: written in capitals they are no name ("kwota VAT"). */
export const TAX_WORDS = words(all(TAX_NOUNS).join(" "));
/** The words a question writes as names (score.ts namesIn), but a tax's: it is what is asked about. */
function questionNames(q: string): Set<string> {
  const names = namesIn(q);
  for (const tax of TAX_WORDS) names.delete(tax);
  return names;
}

/** The most words a focus has. */
const FOCUS_WORDS = 4;
/** The most words between a polite question's first word and the question it asks ("Could you please tell me how much …"). */
const POLITE_WORDS = 4;
const QUESTION_START = new Map(
  LANGUAGES.map((l) => [
    l,
    new RegExp(
      `^\\s*(?:${wholeWords(YES_NO[l])}(?:\\s+[\\p{L}'’-]+){0,${POLITE_WORDS}}?\\s+)?${wholeWords([...QUESTION_WORDS[l], ...ASKS_QUANTITY[l], ...ASKS_COUNT[l]])}`,
      "iu",
    ),
  ]),
);
const SKIPPED = new Map(LANGUAGES.map((l) => [l, new Set([...FUNCTION_WORDS.get(l)!, ...PRONOUNS[l]])]));
/**
 * A language's words that name nothing to find ("ile", "habe", "für", "ai", "je"): its question
 * words, articles, auxiliaries, prepositions, pronouns and fillers ("muss", "trzeba"); not its verbs of a tax ("charged").
 */
const NOT_SEARCHED = new Map(
  LANGUAGES.map((l) => [
    l,
    new Set(
      [
        QUESTION_WORDS,
        ARTICLES,
        AUXILIARIES,
        IS,
        WAS,
        PARTITIVE,
        ASKS_QUANTITY,
        ASKS_COUNT,
        YES_NO,
        PREPOSITIONS,
        PRONOUNS,
        FILLER_WORDS,
      ].flatMap((t) => t[l].flatMap((r) => r.split(/[\s'’-]+/))),
    ),
  ]),
);
/** Whether `word` (lower case) of a question in `language` names nothing to find. */
export const notSearched = (word: string, language: Language) => NOT_SEARCHED.get(language)!.has(word);
const ENDS_FOCUS = new Map(LANGUAGES.map((l) => [l, new Set(PREPOSITIONS[l])]));

/**
 * What is asked about: after the question word and its verb, articles and pronouns, the words up to
 * a preposition ("What was the total of the Coolblue invoice": total; "How much was the Dairy Champ
 * evaporated milk at Y Soon Fatt": dairy champ evaporated milk).
 */
function focusOf(q: string, language: Language, names: Set<string>): string[] {
  const start = QUESTION_START.get(language)!.exec(q);
  const rest = q.slice(start ? start.index + start[0].length : 0).toLowerCase();
  const out: string[] = [];
  for (const w of rest.match(/[\p{L}\p{N}'’-]+/gu) ?? []) {
    const skipped = SKIPPED.get(language)!.has(w);
    const ends = ENDS_FOCUS.get(language)!.has(w);
    // "Combien de TVA": a preposition before any word of it starts nothing.
    if (out.length === 0 && (skipped || ends)) continue;
    const name = words(w).some((x) => names.has(x));
    if (skipped || ends || out.length === FOCUS_WORDS || (name && out.some((x) => !words(x).some((y) => names.has(y))))) break;
    out.push(w);
  }
  return out;
}
