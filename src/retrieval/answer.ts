// Shape C's extractive answer (D9, D32): candidate statements of the cited chunks (a sentence, a
// labelled line "Label: value", a table cell with its row's identifying cells), each scored by the
// named features of ANSWER_FEATURES against the question's plan (what it asks, its words and
// names); the best one to four, each followed by the citation marker of its source. A source's
// lines are read as statements by statements.ts; header and boilerplate lines are never an answer (issue 16).
import type { SourceRecord } from "../connectors/types";
import { isTotalLine, PART_OF_TOTAL, TAX, TOTAL } from "./amounts";
import { meetingRowsAnswer, orderedRowAnswer } from "./answer-rows";
import { COMPANY, FORWARD_TAIL, linesOf, MERCHANT_AT, type SourceReading, sourceReading } from "./answer-source";
import { type Asked, type Asks, DUE_ASKED, TAX_WORDS } from "./asked";
import { words } from "./bm25";
import { DATE_OR_TIME, documentDates } from "./document-dates";
import { anyOf, wholeWords } from "./language/patterns";
import { ARTICLES, AT_PLACE, all, CONTACT_NOUNS, DATE_NOUNS, MONEY_WORDS, PERSON_NOUNS, PLACE_NOUNS, TOTAL_LABELS } from "./language/words";
import type { QueryPlan } from "./plan";
import { sendersOf } from "./senders";
import type { ChunkStatements } from "./statement-memo";
import {
  CONTACT,
  CONTACTS_IN_LINE,
  type Holds,
  isBoilerplate,
  MONEY,
  meaningsOf,
  NOT_AN_ITEM,
  PAID_WITH,
  SENTENCE,
  SENTENCE_PROBE,
} from "./statements";

export interface AnswerSource {
  text: string;
  metadata?: SourceRecord["metadata"];
  /** A mail's lines are wrapped prose, joined again before sentences are cut. */
  type?: SourceRecord["type"];
  /** False when the record's amounts fail the question's amount condition (amounts.ts): its amount is no answer to it. */
  meetsAmount?: boolean;
  /** True when the document's own days are all outside the days asked (evidence.ts datedAsAsked): another day's receipt answers nothing. */
  otherDays?: boolean;
  /** The ranking's score of the record: how far below the first source it is. */
  score?: number;
  /** What names the record: its title, a mail's sender, a document's first lines (a receipt's merchant). */
  head?: string;
  /** Its record's key (record-memo.ts recordKey) and its window's: what is read of it is remembered per version (statement-memo.ts). */
  key?: string;
}

const MAX_SENTENCES = 4;

/** A place's name after a word saying where ("at the Energizer", "bij Coolblue"), in any language of the tables. */
const PLACE = new RegExp(`${wholeWords(all(AT_PLACE))}\\s+(${anyOf(all(ARTICLES))}\\s+)?\\p{Lu}[\\p{L}'-]`, "u");

/** What answering reads of the question's plan (plan.ts): the question's text is never read again. */
export type AnswerPlan = Pick<QueryPlan, Exclude<keyof Asked, "by"> | "terms" | "names" | "order" | "amounts">;

/** A statement that may answer, as the features read it. */
interface Candidate {
  text: string;
  /** Its words, when read with its statement and remembered (statement-memo.ts); else words(text). */
  words?: readonly string[];
  /** Its source's place among the cited sources, from 0. */
  source: number;
  /** Its source's ranking score over the first source's (1 for the first). */
  rankShare: number;
  /** The question's names its source's head holds (its title, sender, merchant), as a share of them. */
  named: number;
  /** The question's names its source's text holds, as a share of them. */
  namedInRecord: number;
  /** Its place within its source. */
  at: number;
  /** A labelled line's label, or a table's columns answered ("Vervaldatum", "HireDate"). */
  label?: string;
  /** What its label means in any language (statements.ts: "Vervaldatum" is due, "Gesamtbetrag" total). */
  meanings?: string[];
  /** In the message a mail quotes or forwards, not in the mail's own words. */
  quoted: boolean;
  /** Its source's amounts fail the question's amount condition (amounts.ts): no amount of it answers. */
  failsAmount: boolean;
  /** A table's cells whose column is of the kind asked ("City" for where, "HireDate" for when): they hold it. */
  ofKind?: boolean;
  /** What its layout says it holds (statements.ts): an item's row, a total, a tax, a payment, a person. */
  holds?: Holds;
}

/** The question as the features read it: the plan, its words and its names as the index folds them. */
interface Reading {
  plan: AnswerPlan;
  want: Set<string>;
  /** The question's names that say which record: not a tax's ("VAT", "BTW"). */
  names: string[];
  /** Asked who, the names saying whom the question is about, not the one asked; none in German, which capitalises every noun. */
  about: string[];
  /** What the labels it names mean, in any language ("due date", "Gesamtbetrag"). */
  meanings: Set<string>;
}
const readingOf = (plan: AnswerPlan): Reading => ({
  plan,
  want: new Set(plan.terms.flatMap(words)),
  names: plan.names.filter((n) => !TAX_WORDS.includes(n)),
  about: plan.asks === "person" && plan.language !== "de" ? plan.names : [],
  meanings: new Set(meaningsOf(plan.terms.join(" "))),
});

type FeatureName = "kind" | "beside" | "total" | "label" | "focus" | "words" | "names" | "own" | "rank" | "head" | "record" | "merchant";

/**
 * The named features a candidate statement is scored by, each value times its weight. Tuned on the
 * train half of scripts/eval/answers.ts, which switches each off (--without <name>) to say what it is worth.
 */
export const ANSWER_FEATURES: Record<FeatureName, { weight: number; reason: string }> = {
  kind: { weight: 4.5, reason: "it holds the kind of fact asked: a date for when, an amount for how much, an item's priced line" },
  beside: {
    weight: 1,
    reason: "asked who, someone the question does not name beside a word it asks by ('Steve Reynolds (the govs assistant)')",
  },
  total: { weight: 2, reason: "asked an amount, the record's total (or the tax or the net asked for), not a line item or change" },
  label: { weight: 1.5, reason: "its label or table column names the thing asked ('Due Date' for the due date, 'HireDate' for hired)" },
  focus: { weight: 1.5, reason: "each word of what is asked about ('total' of 'the total of the invoice') it or its label holds" },
  words: { weight: 1, reason: "each of the question's words it repeats: nearness to what the question is about" },
  names: { weight: 0.5, reason: "each word the question writes as a name (a vendor, a person) that it holds" },
  own: { weight: 1, reason: "the record's own words, not the message a mail quotes or forwards" },
  rank: { weight: 9, reason: "its source's ranking score over the first's: the ranking already weighed the sources" },
  head: { weight: 1, reason: "the question's names in its source's title, sender or first lines: the record it is about" },
  record: { weight: 3, reason: "the question's names anywhere in its source: the record named, over a better-ranked one's line" },
  merchant: { weight: 3, reason: "asked which shop, the line a receipt or an invoice opens with (its merchant), not an item's" },
};

/** A candidate's words: remembered with its statement, or read now. */
const wordsOf = (c: Candidate) => c.words ?? words(c.text);

const FEATURE_VALUES: Record<FeatureName, (c: Candidate, r: Reading) => number> = {
  kind: (c, r) => (c.failsAmount && r.plan.asks === "amount" ? 0 : c.ofKind || merchantLine(c, r) ? 1 : fitOf(c, r)),
  total: (c, r) => {
    const probe = c.text.slice(0, SENTENCE_PROBE);
    // The net asked ("before VAT", "exclusief BTW", "HT") is a part of the total, its line; the change asked ("wisselgeld", "Wechselgeld") its own line.
    const line = r.plan.tax
      ? TAX.test(probe)
      : r.meanings.has("change")
        ? (c.meanings ?? meaningsOf(probe)).includes("change")
        : r.meanings.has("net")
          ? PART_OF_TOTAL.test(probe)
          : isTotalLine(probe);
    return r.plan.asks === "amount" && !c.failsAmount && MONEY.test(probe) && line ? 1 : 0;
  },
  label: (c, r) => {
    if (c.label === undefined) return 0;
    // A label meaning what the question names, in any language ("Vervaldatum" for the due date), or
    // under the party it names ("Adres:" under "Nabywca:" for the buyer's address), names it too.
    return labelFit(c.label, r.plan, r.want) + (c.meanings?.some((m) => r.meanings.has(m)) ? 1 : 0);
  },
  beside: (c, r) => (r.plan.asks === "person" && personBeside(c.text.slice(0, SENTENCE_PROBE), r) ? 1 : 0),
  focus: (c, r) => {
    const held = [...wordsOf(c), ...(c.label ? labelWords(c.label) : []), ...taxNames(c.text)];
    return r.plan.focus.filter((f) => !r.about.includes(f) && held.some((w) => sameWord(w, f))).length;
  },
  words: (c, r) => new Set(wordsOf(c).filter((w) => r.want.has(w))).size,
  names: (c, r) => new Set(wordsOf(c).filter((w) => r.plan.names.includes(w))).size,
  own: (c) => (c.quoted ? 0 : 1),
  rank: (c) => c.rankShare - 1,
  head: (c) => c.named,
  record: (c) => c.namedInRecord,
  merchant: (c, r) => (merchantLine(c, r) ? 1 : 0),
};
const fitOf = (c: Candidate, r: Reading) => holdsFit(r.plan, c.holds) ?? kindFit(r.plan, c.text);
/** Asked which shop, a statement near a document's start naming a company ("SIN THYE & COMPANY"): the merchant it opens with. */
const merchantLine = (c: Candidate, r: Reading) => r.plan.merchant && c.at < MERCHANT_AT && COMPANY.test(c.text.slice(0, SENTENCE_PROBE));

/** A tax is asked by any of its names: the question's "VAT" is the invoice's "BTW", "TVA" or "MwSt". */
const taxNames = (text: string) => (TAX.test(text.slice(0, SENTENCE_PROBE)) ? TAX_WORDS : []);
const FEATURE_NAMES = Object.keys(ANSWER_FEATURES) as FeatureName[];
/** A candidate's feature values, each read once: a candidate is first kept by some, then scored by all. */
const valuesOf = (c: Candidate, r: Reading) => {
  const known: Partial<Record<FeatureName, number>> = {};
  return (f: FeatureName) => (known[f] ??= FEATURE_VALUES[f](c, r));
};
const scoreOf = (value: (f: FeatureName) => number) => FEATURE_NAMES.reduce((s, f) => s + ANSWER_FEATURES[f].weight * value(f), 0);

const PLACE_LINE = CONTACT.slice(1, 6);
/** A person's name: two capitalised words, an initial between them or not ("Salah M. Mattoo"), or two in capitals. */
const PERSON = /\b\p{Lu}\p{Ll}+\s+(?:\p{Lu}\.\s+)?\p{Lu}\p{Ll}+|\b\p{Lu}{3,}\s+\p{Lu}{3,}\b/gu;
/** A name none of whose words the question writes as a name, nor begun by an article ("The State"). */
const unnamed = (name: string, names: string[]) => !ARTICLE_FIRST.test(name) && words(name).every((w) => !names.includes(w));
const ARTICLE_FIRST = new RegExp(`^${anyOf(all(ARTICLES))}\\s`, "iu");
/** How many words apart a name and a word of the question are beside each other. */
const BESIDE_WORDS = 4;
/** Someone the question does not name, within BESIDE_WORDS words of a word of what it asks about, not whom ("assistant", "name"). */
function personBeside(probe: string, r: Reading): boolean {
  const asked = r.plan.focus.filter((w) => !r.about.includes(w));
  const near = (ws: string[]) => words(ws.join(" ")).some((w) => asked.some((a) => sameWord(w, a)));
  const beside = (m: RegExpMatchArray) =>
    near(probe.slice(0, m.index).split(/\s+/).slice(-BESIDE_WORDS)) ||
    near(
      probe
        .slice(m.index! + m[0].length)
        .split(/\s+/)
        .slice(0, BESIDE_WORDS + 1),
    );
  return [...probe.matchAll(PERSON)].some((m) => unnamed(m[0], r.plan.names) && beside(m));
}
/** A priced line of a record that is no total, tax, payment or part of a total: an item bought. */
const isItemLine = (probe: string) =>
  MONEY.test(probe) && !TOTAL.test(probe) && !PART_OF_TOTAL.test(probe) && !TAX.test(probe) && !NOT_AN_ITEM.test(probe);

/** The holdings that are the kind asked, and another's worth: an item, a list or a count is of a document's item rows ("Which flowers did I buy"). */
const HOLDS_ASKED: Partial<Record<Asks, [Holds[], number | undefined]>> = {
  item: [["item"], 0],
  list: [["item"], 0],
  count: [["item"], 0],
  person: [["person", "addressee"], undefined],
  place: [["address", "addressee"], undefined],
};
/** How much a statement holds the kind asked, where its layout says what it holds; else (undefined) its text says. */
function holdsFit(plan: Pick<AnswerPlan, "asks">, holds: Holds | undefined): number | undefined {
  const asked = holds === undefined ? undefined : HOLDS_ASKED[plan.asks];
  return asked === undefined ? undefined : asked[0].includes(holds!) ? 1 : asked[1];
}
/** A count of something not bought ("Within how many days …"): a number right before the thing counted ("7 DAYS") is it. */
const countsAsked = (text: string, r: Reading) =>
  r.plan.asks === "count" && (text.slice(0, SENTENCE_PROBE).match(/\d\s?\p{L}+/gu) ?? []).some((m) => words(m).some((w) => r.want.has(w)));

/**
 * The kind of fact an answer is built for: a way to reach someone (a phone, an e-mail, a website)
 * when one is asked and no place is, else what the question asks. The answer evaluation prints it.
 */
export const answeredKind = (plan: Pick<AnswerPlan, "asks" | "contact">): Asks | "contact" =>
  plan.contact && plan.asks !== "place" ? "contact" : plan.asks;

/** How much a statement holds the kind of fact asked, from 0 to 1. */
export function kindFit(plan: Pick<AnswerPlan, "asks" | "contact" | "names"> & { paying?: boolean }, sentence: string): number {
  const probe = sentence.slice(0, SENTENCE_PROBE);
  if (plan.paying && PAID_WITH.test(probe)) return 1;
  if (answeredKind(plan) === "contact" && (CONTACTS_IN_LINE.some((re) => re.test(probe)) || CONTACT.some((re) => re.test(probe)))) return 1;
  switch (plan.asks) {
    // A calendar day more than a time or a weekday ("DATE: 17/04/18" over "ORDER TIME: 10:15:18").
    case "date":
      return documentDates(probe).length > 0 ? 1 : DATE_OR_TIME.test(probe) ? 0.75 : 0;
    case "place":
      return PLACE.test(probe) || PLACE_LINE.some((re) => re.test(probe)) ? 1 : 0;
    case "amount":
      return MONEY.test(probe) ? 1 : 0;
    case "item":
    case "list":
      return isItemLine(probe) ? 1 : 0;
    case "count":
      return isItemLine(probe) ? 1 : /\d/.test(probe) ? 0.5 : 0;
    case "person":
      // Someone the question does not name: "Who is Governor Geringer's assistant?" is not answered by "Governor Geringer", nor by "the State Senate" of its hearing.
      return [...probe.matchAll(PERSON)].some((m) => unnamed(m[0], plan.names)) ? 0.5 : 0;
    default:
      return 0;
  }
}

/** The words of each kind's labels and columns ("Due Date", "Vervaldatum", "BillingCity"), as a label's end. */
const KIND_LABEL: Partial<Record<Asks | "contact", RegExp>> = Object.fromEntries(
  (
    [
      ["date", DATE_NOUNS],
      ["amount", { ...TOTAL_LABELS, en: [...TOTAL_LABELS.en, ...MONEY_WORDS.en] }],
      ["place", PLACE_NOUNS],
      ["person", PERSON_NOUNS],
      ["contact", CONTACT_NOUNS],
    ] as const
  ).map(([k, t]) => [k, new RegExp(`${anyOf(all(t))}(?![\\p{L}])`, "iu")]),
);
/** A label's words: "HireDate" is hire and date, "Billing Address (street)" billing, address and street. */
const labelWords = (label: string) => words(label.replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2"));
/** The same word by its first four letters at least ("hired" and "HireDate", "billed" and "BillingCity"). */
const sameWord = (a: string, b: string) => a === b || (a.length >= 4 && b.length >= 4 && a.slice(0, 4) === b.slice(0, 4));

/** How well a label names the thing asked: a word of the question (1), a deadline's label for a deadline (1), the asked kind's label (0.5). */
function labelFit(label: string, plan: Pick<AnswerPlan, "asks" | "contact" | "due">, want: Set<string>): number {
  const named = labelWords(label).some((l) => [...want].some((w) => sameWord(l, w))) ? 1 : 0;
  const due = plan.due && DUE_ASKED.test(label) ? 1 : 0;
  const kind = KIND_LABEL[answeredKind(plan)];
  return named + due + (kind?.test(label.replace(/(\p{Ll})(\p{Lu})/gu, "$1 $2")) ? 0.5 : 0);
}

/** A table's cell as a line: "Column: value". */
const CELL = /^([\w .()-]{1,40}):\s(.*)$/u;

/**
 * A table row's candidates: the whole row, and the cells whose column names the thing asked with
 * the cells that say which row it is (those naming the question's words, else the first).
 */
function rowCandidates(lines: string[], base: Omit<Candidate, "text" | "at">, r: Reading): Candidate[] {
  const cells = lines.map((l) => ({ line: l, column: CELL.exec(l)?.[1] ?? "" }));
  const named = cells.filter((c) => words(c.line.slice(c.column.length)).some((w) => r.want.has(w)));
  const ids = named.length ? named : cells.slice(0, 1);
  // A question word the identifying cells' columns already name says which row, not which column ("billed to Oslo").
  const usedByIds = new Set([...r.want].filter((w) => ids.some((c) => labelWords(c.column).some((l) => sameWord(l, w)))));
  const want = new Set([...r.want].filter((w) => !usedByIds.has(w)));
  const fits = cells.map((c) => (ids.includes(c) ? 0 : labelFit(c.column, r.plan, want)));
  const best = Math.max(0, ...fits);
  const row = { ...base, text: lines.join("; "), at: 0 };
  if (best === 0) return [row];
  const asked = cells.filter((c, i) => ids.includes(c) || fits[i] === best);
  const label = asked.map((c) => c.column).join(" ");
  const ofKind = cells.some((c, i) => fits[i] === best && labelFit(c.column, r.plan, new Set()) > 0);
  return [row, { ...base, text: asked.map((c) => c.line).join("; "), at: 1, label, ofKind }];
}

/**
 * A source's candidate statements: a table row's, else its sentences that can answer (not headers
 * or boilerplate). `read` gives what is read of it when that is remembered (statement-memo.ts).
 */
function candidatesOf(
  s: AnswerSource,
  source: number,
  r: Reading,
  rankShare = 1,
  read: () => SourceReading = () => sourceReading(s, r.plan.contact),
): Candidate[] {
  const reading = read();
  const share = (held: ReadonlySet<string>) => (r.names.length ? r.names.filter((n) => held.has(n)).length / r.names.length : 0);
  const named = share(reading.headWords);
  const namedInRecord = share(reading.words);
  const base = { source, rankShare, named, namedInRecord, quoted: false, failsAmount: s.meetsAmount === false };
  // A table row's lines are its cells (it has one that is not blank); lines shaped "Column: value" elsewhere too (answer-source.ts).
  const row = s.metadata?.table !== undefined ? /\S/.test(s.text) : reading.cellLines;
  if (row) return rowCandidates(linesOf(s.text), base, r);
  // Who wrote it, if not someone the question names ("Who invited Steve Kean": not Steve Kean's own mail).
  // Who approved what it asks: the mail's own sender, whose words approve it, not a forwarded message's.
  const from = String(s.metadata?.from ?? "");
  const senders = s.type !== "email" ? [] : r.plan.author ? sendersOf(s.text, from || undefined) : r.plan.approver && from ? [from] : [];
  const out: Candidate[] = senders
    .filter((name) => !words(name).some((w) => r.names.includes(w)))
    .map((name, at) => ({ ...base, text: `From: ${name}`, at, label: "From", ofKind: true }));
  let closing = false;
  let intro: string | undefined;
  let signer: string | undefined;
  for (const [i, statement] of reading.statements.entries()) {
    // An address is a contact line: an answer only when a place or a contact is asked (issue 16).
    if (statement.holds === "address" && !r.plan.contact) continue;
    // A mail's signature (a name alone under "Thanks," or "Thank you!"): who wrote it, for who is asked.
    const signed = closing && r.plan.asks === "person" && SIGNATURE.test(statement.text);
    closing = s.type === "email" && /[,!]$/.test(statement.text) && statement.text.length <= CLOSING_CHARS;
    // A mail's sentence introducing the next line ("The new dates are:") says what that line is: its label.
    const introduced = intro;
    intro = s.type === "email" && INTRO.test(statement.text) ? statement.text.replace(/:$/, "") : undefined;
    // Asked who, a signature's name with the title under it ("Mary M. McCann" / "Manager, Corporate Communications").
    const title = signer !== undefined && statement.text.length <= TITLE_CHARS ? `${signer}, ${statement.text}` : undefined;
    signer = r.plan.asks === "person" && s.type === "email" && SIGNATURE.test(statement.text) ? statement.text : undefined;
    if (title) out.push({ ...base, text: title, at: out.length, quoted: statement.quoted });
    if (signed) out.push({ ...base, text: statement.text, at: out.length, quoted: statement.quoted, ofKind: true });
    else
      for (const { text, never, words, letter, label: own } of reading.sentences[i]!) {
        // Short lines say nothing, but an amount ("TOTAL 13.80") or a date ("8-9-2022") of the kind asked;
        // an amount without a word says not what it is ("148.00" under "NAME CARD 1 X 148.00").
        if (never || (text.length <= 12 && kindFit(r.plan, text) === 0)) continue;
        if (!letter && !(r.plan.asks === "date" && documentDates(text).length > 0)) continue;
        const label = statement.label ?? own ?? introduced;
        out.push({
          ...base,
          text,
          words,
          at: out.length,
          quoted: statement.quoted,
          ...(label ? { label } : {}),
          ...(statement.meanings ? { meanings: statement.meanings } : {}),
          ...(statement.holds ? { holds: statement.holds } : {}),
          ...(countsAsked(text, r) ? { ofKind: true } : {}),
        });
      }
  }
  return out;
}
/** A sentence ending in a colon, the line after it what it announces. */
const INTRO = /^\p{L}.{10,200}:$/u;
/** A name alone on its line: one to four capitalised words. */
const SIGNATURE = /^\p{Lu}[\p{L}.'-]{0,20}(?:\s\p{Lu}[\p{L}.'-]{0,20}){0,3}$/u;
/** The longest line taken as a closing above a signature ("Best regards,", "Thank you!"), and as a title under its name. */
const [CLOSING_CHARS, TITLE_CHARS] = [30, 60];

/** Kinds answered by one or two statements of one source: a date, a place, an amount, a count, a person. */
const ONE_FACT = new Set<Asks>(["date", "place", "amount", "count", "person"]);
/** The least kind a statement holds to speak to the question without its words: a date or a time, an amount, a place. */
const KIND_FLOOR = 0.75;
/** Below the best statement, how far another of its source may score and still be said beside it. */
const MARGIN = 0.5;

/**
 * Shape C's answer of `sources` to the question of `plan`. With `remembered`, what is read of a
 * source with a key is read once per version of it (statement-memo.ts), not on every question.
 */
export function extractiveAnswer(plan: AnswerPlan, sources: AnswerSource[], remembered?: ChunkStatements): string {
  const rows = plan.order
    ? orderedRowAnswer(plan.order, sources)
    : plan.amounts.some((a) => a.comparison)
      ? meetingRowsAnswer(sources)
      : undefined;
  if (rows) return rows;
  const r = readingOf(plan);
  const kinded = ONE_FACT.has(plan.asks) || plan.asks === "item";
  const best = Math.max(...sources.map((s) => s.score ?? 0));
  const readOf = (s: AnswerSource) =>
    remembered && s.key !== undefined ? () => remembered.ofSource(s.key!, s, r.plan.contact) : undefined;
  const scored = sources
    .flatMap((s, i) => candidatesOf(s, i, r, s.score !== undefined && best > 0 ? s.score / best : 1 / (1 + i), readOf(s)))
    .flatMap((c) => {
      const value = valuesOf(c, r);
      // A statement speaks to the question by its words (or its label's), or by holding the kind of fact asked.
      return value("words") > 0 || value("focus") > 0 || value("kind") >= KIND_FLOOR ? [{ c, score: scoreOf(value) }] : [];
    })
    .sort((a, b) => b.score - a.score);
  // A fact asked is answered by one source, the best statement's (its source's rank, head and names
  // are features of it), by its statements of the kind asked: another record's total is not this one's,
  // nor is a record whose amounts fail the question's condition or whose days are not those asked. A list is of one document's items, or of many table rows.
  const answering = scored.find(({ c }) => !c.failsAmount && !sources[c.source]!.otherDays)?.c.source;
  const from = plan.asks === "list" && sources[answering ?? 0]?.metadata?.table !== undefined ? undefined : answering;
  const own = scored.filter(({ c }) => c.source === from);
  const ofKind = kinded || plan.asks === "list" ? own.filter(({ c }) => FEATURE_VALUES.kind(c, r) > 0) : [];
  const eligible = from === undefined ? scored : ofKind.length ? ofKind : own;
  const top = eligible[0];
  const first = () =>
    sources[0]?.text.split(SENTENCE).find((x) => x.trim().length > 12 && !isBoilerplate(x, plan.contact) && !FORWARD_TAIL.test(x.trim()));
  if (!top) return first() ? `${first()!.trim()} [1]` : "No connected source answers this question.";
  const seen = new Set<string>();
  const said = eligible
    .filter(({ score }) => !kinded || score >= top.score - MARGIN)
    .filter(({ c }) => !seen.has(c.text) && Boolean(seen.add(c.text)))
    .slice(0, ONE_FACT.has(plan.asks) ? 2 : MAX_SENTENCES)
    .sort((a, b) => a.c.source - b.c.source || a.c.at - b.c.at);
  return said.map(({ c }) => `${/[.!?]$/.test(c.text) ? c.text : `${c.text}.`} [${c.source + 1}]`).join(" ");
}

/**
 * How well a chunk answers the plan: its best statement's score (of the kind asked, when one is);
 * the chunk a document is cited by. With `remembered`, a chunk's statements are read once per
 * version of the chunk of `key` (statement-memo.ts), not on every question.
 */
export function chunkFitFor(plan: AnswerPlan, remembered?: ChunkStatements): (chunk: string, key?: string) => number {
  const r = readingOf(plan);
  const kinded = ONE_FACT.has(plan.asks) || plan.asks === "item";
  // Of a chunk's first CHUNK_PROBE characters (a chunk is ~200 tokens; a crafted one can be a megabyte).
  const scores = (chunk: string, key?: string) => {
    const text = chunk.slice(0, CHUNK_PROBE);
    const read = remembered && key !== undefined ? () => remembered.of(key, text, r.plan.contact) : undefined;
    return candidatesOf({ text }, 0, r, 1, read).flatMap((c) => {
      const value = valuesOf(c, r);
      return !kinded || value("kind") > 0 ? [scoreOf(value)] : [];
    });
  };
  return (chunk, key) => Math.max(0, ...scores(chunk, key));
}
const CHUNK_PROBE = 8_000;
