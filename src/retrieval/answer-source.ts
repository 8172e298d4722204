// A ranked record as shape C's answer reads it (answer.ts, D32): its text around the cited chunk,
// its ranking score and what names it (a title, a mail's sender, a document's first lines); and
// what is read of it whatever the question asks (its statements, their sentences and words),
// remembered per version by statement-memo.ts. The rules that choose an answer are answer.ts's.
import type { AnswerSource } from "./answer";
import { words } from "./bm25";
import { wholeWords } from "./language/patterns";
import { all, COMPANY_FORMS } from "./language/words";
import { recordKey } from "./record-memo";
import { isBoilerplate, LABELLED, SENTENCE, type Statement, statementLines } from "./statements";
import type { RankedChunk } from "./types";

/** The most of a record an answer reads: all of it, or this much around its cited chunk (a sentence cut at a chunk's end is read whole). */
const RECORD_PROBE = 8_000;
/** How much of a document's start names it (a receipt's merchant, an invoice's vendor). */
export const HEAD_CHARS = 200;

/** A ranked record as an answer reads it: its text around the cited chunk, its score and what names it. */
export function answerSourceOf(c: RankedChunk, meetsAmount: boolean, otherDays = false): AnswerSource {
  const { content, title, type, metadata } = c.record;
  const at = Math.max(0, content.indexOf(c.text.trim().split("\n")[0]!.slice(0, 40)));
  const from = content.length <= RECORD_PROBE ? 0 : Math.max(0, Math.min(at - RECORD_PROBE / 4, content.length - RECORD_PROBE));
  const text = content.trim() ? content.slice(from, from + RECORD_PROBE) : c.text;
  const head = [title, metadata.from, type === "email" ? "" : content.slice(0, HEAD_CHARS)].join("\n");
  // Keyed by where the window starts too: a long record's windows around its chunks are each
  // remembered, not one evicting another as questions cite its other chunks (issue 36).
  const key = `${recordKey(c.owner, c.connectorId, c.record.id)}\u0000${from}`;
  return { text, metadata, type, meetsAmount, ...(otherDays ? { otherDays } : {}), score: c.score, head, key };
}

/** A company's legal form or trade in a line (words.ts COMPANY_FORMS): a merchant's name, among a document's first MERCHANT_AT statements. */
export const [COMPANY, MERCHANT_AT] = [new RegExp(wholeWords(all(COMPANY_FORMS)), "iu"), 5] as const;

/** A mail's forwarded header wrapped before its time ("… on 04/02/2001" / "02:42 PM -----"): no date answered. */
export const FORWARD_TAIL = /^\d{1,2}:\d{2}(:\d{2})?\s?([AP]M)?\s?-{3,}$/i;

/** What candidates are read from of a source whatever the question asks but a contact: remembered per chunk's version (statement-memo.ts). */
export interface SourceReading {
  statements: readonly Statement[];
  /** Each statement's sentences (statements[i]'s are sentences[i]), as every question reads them. */
  sentences: readonly (readonly Sentence[])[];
  /** The words of what names it (its head: title, sender, first lines), and of its text. */
  headWords: ReadonlySet<string>;
  words: ReadonlySet<string>;
  /** Its lines are each "Column: value" (more than one, none boilerplate): read as a table row's cells. */
  cellLines: boolean;
}

/** A text's lines as a row's cells are read: trimmed, blank ones dropped. */
export const linesOf = (text: string) =>
  text
    .split("\n")
    .map((x) => x.trim())
    .filter(Boolean);
const CELL_LINE = /^[\w .-]{1,40}:\s/;
/** Lines shaped "Column: value" outside a table too, never a mail's header block. */
function cellLinesOf(text: string, contactWanted: boolean): boolean {
  const lines = linesOf(text);
  return lines.length > 1 && lines.every((l) => CELL_LINE.test(l)) && !lines.some((l) => isBoilerplate(l, contactWanted));
}

/** A statement's sentence as candidatesOf reads it whatever is asked: what a question reads of it is not read again per question. */
export interface Sentence {
  text: string;
  /** Never an answer: boilerplate, or a mail's forwarded header's tail. */
  never: boolean;
  /** Its words (none read of a sentence that is never an answer). */
  words: readonly string[];
  /** It holds a letter: without one, only a date asked is answered by it. */
  letter: boolean;
  /** Its own label ("Total: 12.00"), where it writes one. */
  label?: string;
}

/** A statement's sentences; `interned` gives each word as one string shared by every sentence holding it. */
function sentencesOf(statement: Statement, s: AnswerSource, contactWanted: boolean, interned: (w: string) => string): Sentence[] {
  return statement.text.split(SENTENCE).map((sentence) => {
    const text = sentence.trim();
    const never = isBoilerplate(text, contactWanted, s.type !== "email") || (s.type === "email" && FORWARD_TAIL.test(text));
    if (never) return { text, never, words: [], letter: false };
    const labelled = LABELLED.exec(text);
    const label = labelled?.[1] ?? labelled?.[2];
    return { text, never, words: words(text).map(interned), letter: /\p{L}/u.test(text), ...(label ? { label } : {}) };
  });
}

export function sourceReading(s: AnswerSource, contactWanted: boolean): SourceReading {
  // Read when asked for: a table row's candidates are its cells, not its statements.
  let statements: readonly Statement[] | undefined;
  let sentences: readonly (readonly Sentence[])[] | undefined;
  let cellLines: boolean | undefined;
  const textWords = new Set(words(s.text));
  return {
    get statements() {
      statements ??= statementLines(s, contactWanted);
      return statements;
    },
    get sentences() {
      if (!sentences) {
        // The text's words once each: a sentence's words are references to them, not copies.
        const canonical = new Map([...textWords].map((w) => [w, w]));
        const interned = (w: string) => {
          const known = canonical.get(w);
          if (known !== undefined) return known;
          canonical.set(w, w);
          return w;
        };
        sentences = this.statements.map((statement) => sentencesOf(statement, s, contactWanted, interned));
      }
      return sentences;
    },
    // Read once per version with the rest (statement-memo.ts), not split again on every question (issue 36).
    get cellLines() {
      cellLines ??= cellLinesOf(s.text, contactWanted);
      return cellLines;
    },
    headWords: new Set(words(s.head ?? (s.type === "email" ? "" : s.text.slice(0, HEAD_CHARS)))),
    words: textWords,
  };
}
