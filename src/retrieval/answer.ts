// Shape C's extractive answer (D9): the sentences of the best chunks that speak to the
// question, each followed by the citation marker of its source. Sentences are chosen for the
// question's kind (when/where: the one with the date and the place; how much: the total with its
// currency), from the best-ranked source that has one; a source's lines are read as statements
// (a mail's wrapped lines joined, a label with its value below it); header, quoting and
// boilerplate lines are never an answer (issue 16).
import { ORDER_RANK, ORDERED_BY, type SourceRecord } from "../connectors/types";
import { isTotalLine, PART_OF_TOTAL, TAX, TOTAL } from "./amounts";
import { words } from "./bm25";
import { documentDates } from "./document-dates";
import { CURRENCY_CODE_WORDS, CURRENCY_SIGNS, CURRENCY_WORDS } from "./language/currencies";
import { asksTaxAmount, comparesMoney } from "./language/grammar";
import { wholeWords } from "./language/patterns";
import { ASKS_QUANTITY, ASKS_WHEN, all, MONEY_WORDS } from "./language/words";

export interface AnswerSource {
  text: string;
  metadata?: SourceRecord["metadata"];
  /** A mail's lines are wrapped prose, joined again before sentences are cut. */
  type?: SourceRecord["type"];
  /** False when the record's amounts fail the question's amount condition (amounts.ts): its amount is no answer to it. */
  meetsAmount?: boolean;
}

const MAX_SENTENCES = 4;
/** Sentence ends: a stop before a capital, a digit or a quote ("1:00 p.m. meeting" is one sentence), or a line break. */
const SENTENCE =
  /(?<=[.!?])(?<!\b(?:Mr|Mrs|Ms|Dr|No|Inc|Co|St|vs|incl|Incl|INCL|excl|Excl|EXCL|inkl|Inkl|[A-Z])\.)\s+(?=["'(\p{Lu}\d])|\n+/u;

/** Lines that carry no answer: mail headers and quoting marks, signatures' phone lines, attachments; an invoice's address, phone, e-mail, web and page lines. */
// Bounded repeats, tried on a sentence's first SENTENCE_PROBE characters: a crafted sentence (a
// long run of letters, or of "a@") made the open-ended ones backtrack quadratically.
const BOILERPLATE = [
  /^\s*(from|to|cc|bcc|sent|date|subject|please respond to|importance|x-[\w-]+)\s*:/i,
  /-{3,}\s*(original message|forwarded by)/i,
  /^\s*>/,
  /<[^>\s@]{1,64}@[^>\s]{1,255}>/,
  /^[\s"]*[\w .'-]{1,80}["]?\s*<?[\w.+-]{1,64}@[\w.-]{1,255}>?\s+on\s+\d/i,
  // A phone number alone on its line; not a date written with dashes or dots ("8-9-2022").
  /^(?!\s*\d{1,4}[-.]\d{1,2}[-.]\d{1,4}\s*$)[\s\d()+.-]{7,}$/,
  /^\s*[\w .-]{1,200}\.(pdf|docx?|xlsx?|pptx?|zip|txt|htm)\s*$/i,
];
/**
 * An invoice's or a signature's contact lines: address, phone, e-mail, web, page count. Never an
 * answer unless the question asks for one (where, a phone, an address, a website, a contact).
 */
const CONTACT = [
  /^\s*(tel|phone|fax|mobile|gsm|t|f)\.?\s*:?\s*[\d()+][\d\s()+./-]{6,40}$/i,
  // A number and a capitalised street ("4557 De Silva St"), a street and a number ("Hauptstrasse 12").
  /^\s*\d{1,6}[\w/-]{0,6}\s+(\p{Lu}[\p{L}.'-]{0,29}\s+){1,4}(St|Street|Ave|Avenue|Rd|Road|Blvd|Boulevard|Lane|Ln|Dr|Drive|Way|Plaza|Straat|Weg|Laan|Plein|Rue)\b/u,
  /^\s*\p{Lu}[\p{L}.'-]{1,40}(strasse|straße|straat|weg|laan|gasse)\s+\d{1,5}\w?\b/u,
  // A town with its state and ZIP ("Fremont CA 94538"), a Dutch postcode and town alone, a comma-separated address ending in a postcode.
  /\b\p{Lu}[\p{L}.'-]{1,40},?\s+[A-Z]{2}\s+\d{5}(-\d{4})?\s*$/u,
  /^\s*\d{4}\s?[A-Z]{2}\s+\p{Lu}\p{Ll}{1,40}\s*$/u,
  /,.{0,120},\s*\p{Lu}[\p{L} .'-]{1,40}[-–\s]*\d{5,6}\s*$/u,
  /^\s*(e-?mail\s*:?\s*)?[\w.+-]{1,64}@[\w-]{1,63}(\.[\w-]{1,63}){1,8}\s*$/i,
  /^\s*(web(site)?\s*:?\s*)?(https?:\/\/|www\.)\S{1,300}\s*$/i,
  /^\s*page\s*:?\s*\d{1,4}\s*(\/|of)\s*\d{1,4}\s*$/i,
];
/** Contacts inside a line: a phone number, an e-mail address, a web address (each bounded). */
const CONTACTS_IN_LINE = [
  /\(\d{3}\)[\s-]?\d{3}[\s.-]?\d{4}|\+\d[\d\s().-]{7,18}\d/,
  /[\w.+-]{1,64}@[\w-]{1,63}\.[\w.-]{1,255}/,
  /\b(https?:\/\/|www\.)[\w-]/i,
];
const SENTENCE_PROBE = 400;
/** A document's own "Date:" line: its date, not a mail header (a document is no mail). */
const DOCUMENT_DATE_LINE = /^\s*date\s*:/i;
const isBoilerplate = (s: string, contactWanted = false, document = false) => {
  const probe = s.slice(0, SENTENCE_PROBE);
  if (!(document && DOCUMENT_DATE_LINE.test(probe)) && BOILERPLATE.some((re) => re.test(probe))) return true;
  if (contactWanted) return false;
  // A letterhead's line of several contacts ("Azure Interior. (870)-931-0505 azure@example.com http://…").
  return CONTACT.some((re) => re.test(probe)) || CONTACTS_IN_LINE.filter((re) => re.test(probe)).length >= 2;
};

const DATE_OR_TIME =
  /\b(\d{1,2}:\d{2}|\d{1,2}\s*(a\.?m\.?|p\.?m\.?)|(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?\s+\d{1,2}|\d{1,2}\s+(jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|\d{4}-\d{2}-\d{2}|\d{1,2}\/\d{1,2}\/\d{2,4}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|today)\b/i;
const PLACE = /\b(at|in)\s+(the\s+)?[A-Z][\w'-]+/;
// Bounded, and a number's run starts where a number does: a line of 100,000 digits was tried from
// each digit (quadratic: 11 s of the request thread per source, outside attack).
/** Money: a currency before or after a number ("€ 717,97", "56,02 €", "316,83 PLN", "RM 538.00"), or a number with cents. */
// Without the u flag, as before: case-insensitive Unicode matching made each line's test slower.
const MONEY = new RegExp(
  `${CURRENCY_SIGNS}\\s?\\d|(?<![\\d.,])\\d[\\d.,]{0,30}\\s?(${CURRENCY_SIGNS}|${CURRENCY_WORDS}\\b)|\\b${CURRENCY_CODE_WORDS}\\.?\\s?\\d|(?<![\\d.,])\\d{1,3}(?:[.,\\s]?\\d{3}){0,4}[.,]\\d{2}(?![\\d%]|[.,/-]\\d)`,
  "i",
);
/** A priced line that is no item: a payment, a card, an adjustment, a charge, a tax code's summary (outside attack, SROIE receipts). */
const NOT_AN_ITEM =
  /\b(payment|paid|card|master|visa|credit|debit|adj(ustment)?|service (charge|chrg)|amount|balance|average|ttc|sr\s*@|zrl?|tax code|deposit|tip)\b/i;

/** A word of money a question asking an amount names ("the total", "how much it cost", "het bedrag"). */
const ASKS_MONEY = new RegExp(wholeWords(all(MONEY_WORDS)), "iu");
/** "How much", "hoeveel", "combien", "wie viel", "ile": a question of quantity ("how many" asks a count, not money). */
const ASKS_QUANTITY_WORDS = new RegExp(wholeWords(all(ASKS_QUANTITY)), "iu");

const ASKS_WHEN_WORDS = new RegExp(wholeWords(all(ASKS_WHEN)), "iu");

/** What kind of answer the question wants, by its first words. */
export function kindOf(question: string): {
  when: boolean;
  where: boolean;
  much: boolean;
  bought: boolean;
  tax: boolean;
  contact: boolean;
} {
  const q = question.toLowerCase();
  return {
    // "What did I buy at Guardian?": a receipt's or an invoice's items with their prices.
    bought:
      /\bwhat (did|do) (i|we|you) (buy|purchase|order)\b|\bwhat (was|were) (bought|purchased|ordered)\b/.test(q) ||
      (/\bwhich items?\b/.test(q) && /\b(buy|bought|order|purchase|receipt|invoice|shop)/.test(q)),
    tax: TAX.test(q),
    when: ASKS_WHEN_WORDS.test(q),
    // English only until a place is read in the other languages (PLACE): "Waar is Coolblue
    // gevestigd?" was answered by "in je Mijn Coolblue-account" (answers.ts, train half).
    where: /\bwhere\b/.test(q),
    // "Which invoices are over 1000 EUR?" is answered by the total that is over it.
    much: ASKS_QUANTITY_WORDS.test(q) || ASKS_MONEY.test(q) || asksTaxAmount(q) || comparesMoney(q),
    contact: /\bwhere\b|\b(phone|fax|e-?mail|address|website|web site|url|contact|located|location)\b/.test(q),
  };
}

/** A question of a kind whose answer is one sort of sentence (a date, a place, an amount, an item). */
const asksKind = (kind: ReturnType<typeof kindOf>) => kind.when || kind.where || kind.much || kind.bought;

/**
 * A question for the largest or smallest of something ("which customer in Brazil spent the
 * most") over a table that sorted its matching rows by the column the question names: its first
 * row is the answer, said with that column (an operator maps an aggregate view for such questions).
 */
function orderedRowAnswer(order: "desc" | "asc", sources: AnswerSource[]): string | undefined {
  const i = sources.findIndex((s) => s.metadata?.[ORDER_RANK] === 1);
  if (i < 0) return undefined;
  const row = sources[i]!.text.split("\n")
    .map((l) => l.trim())
    .filter(Boolean)
    .join("; ");
  return `The ${order === "asc" ? "lowest" : "highest"} ${String(sources[i]!.metadata![ORDERED_BY])} among the rows that match: ${row}. [${i + 1}]`;
}

/** A mail's line wrapped before its sentence ended: a long line without an end, and a next line going on. */
const WRAPPED = /^.{40,}[^.!?:]$/u;
const GOES_ON = /^[\p{L}\d("']/u;
/** A line that is only an amount ("593.10", "RM 538.00"), or a currency alone ("RM"): on a receipt, the value of the label above it. */
// Before the number a currency only ("MILO 3.50" is an item, not the value of the line above); after it a currency or a tax code ("36.00 SR").
const AMOUNT_ONLY = new RegExp(
  `^(\\p{Sc}|${CURRENCY_CODE_WORDS})?\\.?\\s?-?\\d[\\d.,]{0,20}\\s?[\\p{Sc}A-Za-z]{0,4}$|^(\\p{Sc}|${CURRENCY_CODE_WORDS})$`,
  "iu",
);

/** The longest line taken as the value of a "Label:" line above it. */
const LABELLED_VALUE = 40;
/** The longest line taken as a date alone ("22-9-2022", "28 MAR 2018"). */
const DATE_ALONE = 12;

/**
 * A source's lines as statements: a mail's wrapped lines joined again (a place or a time cut at a
 * line's end was half a sentence), a label and the amount on the line below it as one.
 */
function statementLines(s: AnswerSource, contactWanted: boolean): string[] {
  const lines = s.text
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);
  const out: string[] = [];
  for (const line of lines) {
    // A statement grows to SENTENCE_PROBE characters at most: what is tested of it stays bounded
    // (a label followed by 50,000 amount lines was re-read at each: quadratic, outside attack).
    const last = out.at(-1);
    // A lone ":" between a label and its value ("TOTAL" / ":" / "27.55") belongs to the label.
    if (line === ":" && last !== undefined && last.length < SENTENCE_PROBE) {
      out[out.length - 1] = `${last}:`;
      continue;
    }
    const joinable = last !== undefined && last.length < SENTENCE_PROBE && !isBoilerplate(last, contactWanted, s.type !== "email");
    const wrapped = joinable && s.type === "email" && WRAPPED.test(last) && GOES_ON.test(line) && !isBoilerplate(line, contactWanted);
    // A label takes the amount below it once ("TOTAL QTY" took its 1, then the next line's 80.91).
    const labelled =
      joinable &&
      ((AMOUNT_ONLY.test(line) && /\p{L}/u.test(last) && !/\d$/.test(last) && !MONEY.test(last)) ||
        // A label and its value below it, as PDFs lay them out ("Invoice Date:" / "03/20/2023").
        (/\p{L}:$/u.test(last) && line.length <= LABELLED_VALUE && !/:$/.test(line)) ||
        // A date alone under a short label without a colon ("Vervaldatum" / "22-9-2022").
        (line.length <= DATE_ALONE && /^\p{L}{3,20}( \p{L}{2,20})?$/u.test(last) && documentDates(line).length > 0));
    if (wrapped || labelled) out[out.length - 1] = `${last} ${line}`;
    else out.push(line);
  }
  return out;
}

/**
 * What a total gains over another amount for "how much": more than a line item's one word of the
 * question ("999900245 IKEA RETAI 36.00" against "TOTAL RM INCLUDING GST 6% 73.30").
 */
const TOTAL_FIT = 2;

/** How well a sentence (or a chunk) is of the kind of answer asked for. */
export function kindFit(kind: ReturnType<typeof kindOf>, sentence: string): number {
  let fit = 0;
  // A date as people write it ("2 p.m.", "June 12") or as a document does ("02 Juillet 2015", "28/11/2022").
  // A calendar day more than a time or a weekday ("DATE: 17/04/18" over "ORDER TIME: 10:15:18").
  if (kind.when) fit += documentDates(sentence.slice(0, SENTENCE_PROBE)).length > 0 ? 2 : DATE_OR_TIME.test(sentence) ? 1.5 : 0;
  if (kind.where && PLACE.test(sentence)) fit += 1;
  // A line item: an amount on a line that is no total, tax or payment.
  if (kind.bought && MONEY.test(sentence)) {
    const probe = sentence.slice(0, SENTENCE_PROBE);
    if (!TOTAL.test(probe) && !PART_OF_TOTAL.test(probe) && !TAX.test(probe) && !NOT_AN_ITEM.test(probe)) fit += 1.5;
  }
  if (kind.much && MONEY.test(sentence)) {
    fit += 1.5;
    // The total, not a line item or the subtotal: "how much did Coolblue invoice" is its Totaal.
    const probe = sentence.slice(0, SENTENCE_PROBE);
    // The tax asked for ("how much GST"): its line is the total asked for; otherwise tax is a part.
    if (kind.tax ? TAX.test(probe) : isTotalLine(probe)) fit += TOTAL_FIT;
  }
  return fit;
}

/**
 * What a sentence loses per place its source is below the first: the ranking already weighed the
 * sources, and a lower one's line of the right kind (a price in another invoice) is not the answer
 * when the first source has one.
 */
const RANK_PENALTY = 1;
/**
 * A when, where or how much answer's further sentences: of the kind asked for, or scoring at most
 * this much below its best (a line that only names the vendor beside the date or total is noise).
 */
const KIND_MARGIN = 0.5;
/**
 * What a sentence of the kind asked for (a date for "when", an amount for "how much") gains over
 * those that only repeat the question's words: "Amazon Web Services Invoice." named three of them
 * and outranked "TOTAL AMOUNT DUE ON August 3, 2014 $4.11", which named none.
 */
const KIND_FIRST = 2;

/**
 * How well a chunk holds the kind of answer `question` asks for (a total for "how much", a date
 * for "when"), or undefined for a question of no such kind: the chunk a document is cited by.
 */
export function chunkFitFor(question: string): ((chunk: string) => number) | undefined {
  const kind = kindOf(question);
  if (!asksKind(kind)) return undefined;
  // Its best statement's: "Total TTC : 56,02 €" beside "Total HT" in the same chunk.
  return (chunk) => Math.max(0, ...statementsOf({ text: chunk.slice(0, CHUNK_PROBE) }, kind).map((x) => kindFit(kind, x)));
}

/** How much of a chunk is read for the kind of answer it holds (a chunk is ~200 tokens; a crafted one can be a megabyte). */
const CHUNK_PROBE = 8_000;

/** A source's statements: a table row whole, else its sentences that can answer (not headers, quoting or boilerplate). */
function statementsOf(s: AnswerSource, kind: ReturnType<typeof kindOf>): string[] {
  const lines = s.text
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);
  // A table row is one statement: the row with all its columns ("BillingCity: Oslo" alone
  // answered "invoices billed to Oslo"); lines shaped "Column: value" elsewhere too, never a mail's header block.
  const row =
    s.metadata?.table !== undefined
      ? lines.length > 0
      : lines.length > 1 && lines.every((l) => /^[\w .-]{1,40}:\s/.test(l)) && !lines.some((l) => isBoilerplate(l, kind.contact));
  if (row) return [lines.join("; ")];
  return (
    statementLines(s, kind.contact)
      .flatMap((line) => line.split(SENTENCE))
      .map((x) => x.trim())
      // Short lines say nothing, but an amount for "how much" ("TOTAL 13.80") and a date for "when" ("8-9-2022").
      .filter(
        (x) =>
          (x.length > 12 || ((kind.much || kind.bought) && MONEY.test(x)) || (kind.when && kindFit(kind, x) > 0)) &&
          !isBoilerplate(x, kind.contact, s.type !== "email"),
      )
  );
}

export function extractiveAnswer(question: string, terms: string[], sources: AnswerSource[], order?: "desc" | "asc"): string {
  const ordered = order ? orderedRowAnswer(order, sources) : undefined;
  if (ordered) return ordered;
  // The planned terms carry the question's meaning; its function words ("the", "was") do not.
  const want = new Set(terms.length ? terms.flatMap(words) : words(question));
  const kind = kindOf(question);
  const kinded = asksKind(kind);
  let picked: Array<{ sentence: string; n: number; score: number; fits: number; order: number }> = [];
  sources.forEach((s, i) => {
    statementsOf(s, kind).forEach((sentence, j) => {
      const overlap = new Set(words(sentence).filter((w) => want.has(w))).size;
      // The sentence of the kind asked for answers even when it repeats few of the question's words.
      // "over £1000" is not answered by a total of $4.11 (outside attack): such a source is quoted for its words only.
      const fits = kind.much && s.meetsAmount === false ? 0 : kindFit(kind, sentence);
      if (overlap > 0 || fits >= 1.5)
        picked.push({
          sentence,
          n: i + 1,
          score: overlap + fits + (kinded && fits >= 1.5 ? KIND_FIRST : 0) - i * RANK_PENALTY,
          fits,
          order: i * 1000 + j,
        });
    });
  });
  const seen = new Set<string>();
  // A when, where or how much question is answered from the best-ranked source that holds such a
  // sentence: another source's total (or a mail quoting one) is not this record's.
  const answering = kinded ? Math.min(...picked.filter((p) => p.fits >= 1.5).map((p) => p.n)) : Number.POSITIVE_INFINITY;
  if (Number.isFinite(answering)) picked = picked.filter((p) => p.n === answering);
  picked.sort((a, b) => b.score - a.score);
  // "How much" is answered by its amount: a line item or an address line beside the total is noise.
  const floor = kinded && picked.length ? picked[0]!.score - KIND_MARGIN : Number.NEGATIVE_INFINITY;
  const best = picked
    .filter((p) => {
      if (seen.has(p.sentence) || (p.score < floor && (kind.much || p.fits === 0))) return false;
      seen.add(p.sentence);
      return true;
    })
    // A date, a place, a total is one or two sentences; what was bought, a few items.
    .slice(0, kinded && !kind.bought ? 2 : MAX_SENTENCES)
    .sort((a, b) => a.order - b.order);
  if (best.length === 0) {
    const first = sources[0]?.text
      .split(SENTENCE)
      .map((x) => x.trim())
      .find((x) => x.length > 12 && !isBoilerplate(x, kind.contact));
    return first ? `${first} [1]` : "No connected source answers this question.";
  }
  return best.map((b) => `${/[.!?]$/.test(b.sentence) ? b.sentence : `${b.sentence}.`} [${b.n}]`).join(" ");
}
