// What a cited chunk's candidate statements are read from (answer-source.ts sourceReading: its statements,
// statements.ts statementLines, their sentences and words), read once per version of the chunk
// instead of on every question (issue 36): choosing the chunk a document is cited by (cite.ts,
// answer.ts chunkFitFor) read every statement of every chunk of every returned result again for
// each question, ~45% of the serving thread's CPU per question in shape B. Shape C's answer reads
// its sources (the text around each cited chunk, answer-source.ts) the same way, remembered apart.
// What a question does with them (its features, its scores) stays per question. Keyed by owner,
// connector, record and chunk (record-memo.ts recordKey: never shared between users, D25), kept
// while what is read is the same, bounded by the characters the readings hold, oldest out first.
import type { AnswerSource } from "./answer";
import { type Sentence, type SourceReading, sourceReading } from "./answer-source";
import { RecordMemo } from "./record-memo";
import type { Statement } from "./statements";

/**
 * Characters the memo holds (each statement's text and label, each word, and ITEM_OVERHEAD per
 * statement, per word and per entry): ~4 MB, as the chunk cache (chunk-cache.ts CHUNK_CACHE_CHARS)
 * whose chunks they are read from; a chunk is read twice at most (a contact asked or not).
 */
export const STATEMENTS_KEPT_CHARS = 4_000_000;
/**
 * Characters shape C's source memo holds, counted as STATEMENTS_KEPT_CHARS: a source is up to 8 kB
 * of its record (answer-source.ts), read into ~3-4 times its characters, so 4 M kept ~150 of them and
 * the answer evaluation's 407 questions asked again read 1,174 sources afresh (issue 36).
 */
export const SOURCES_KEPT_CHARS = 16_000_000;
/** What a statement's or a word's object and an entry cost beside their characters: an empty chunk's entry is no free entry. */
const ITEM_OVERHEAD = 32;
/** What a sentence's word costs: a reference to the text's word (answer-source.ts sourceReading interns them). */
const WORD_REF = 8;

const charsOf = (reading: SourceReading) => {
  let chars = ITEM_OVERHEAD;
  for (const s of reading.statements) chars += s.text.length + (s.label?.length ?? 0) + ITEM_OVERHEAD;
  const own = new Set<string>();
  for (const sentences of reading.sentences)
    for (const s of sentences) {
      chars += s.text.length + (s.label?.length ?? 0) + ITEM_OVERHEAD + s.words.length * WORD_REF;
      for (const w of s.words) if (!reading.words.has(w)) own.add(w);
    }
  // A sentence's word the text's words do not hold (lines joined) is a string of its own.
  for (const w of own) chars += w.length + ITEM_OVERHEAD;
  for (const w of reading.headWords) chars += w.length + ITEM_OVERHEAD;
  for (const w of reading.words) chars += w.length + ITEM_OVERHEAD;
  return chars;
};

/** A statement shared between questions, made read-only: a change would reach every later question's reading. */
function frozen(s: Statement): Statement {
  if (s.meanings) Object.freeze(s.meanings);
  return Object.freeze(s);
}

/**
 * What is read of `s`, made read-only to be shared between questions: its statements and sentences
 * frozen, their lists typed read-only (SourceReading) but not frozen. JavaScriptCore stores a frozen
 * array's items apart from a plain array's; its optimised loops over one left their code at each
 * loop's end (an out-of-bounds read) and were compiled again: ~6 such exits per answer in
 * answer.ts candidatesOf and charsOf below, ~10x slower loops (BUN_JSC_printEachOSRExit, answers-load.ts).
 */
function readOnce(s: AnswerSource, contactWanted: boolean): SourceReading {
  const read = sourceReading(s, contactWanted);
  return Object.freeze({
    statements: read.statements.map(frozen),
    sentences: read.sentences.map((ss) => ss.map((x: Sentence) => Object.freeze(x))),
    headWords: read.headWords,
    words: read.words,
    cellLines: read.cellLines,
  });
}

export class ChunkStatements {
  private readonly memo = new RecordMemo<SourceReading>(STATEMENTS_KEPT_CHARS, charsOf);
  /** Shape C's sources, apart: a record's few kB around its cited chunk would push the chunks out. */
  private readonly sources: RecordMemo<SourceReading>;
  /** Chunks read so far, remembered or not (tests count the work). */
  reads = 0;
  /** Shape C's sources read so far, remembered or not (tests count the work). */
  sourceReads = 0;

  /** `sourcesKeptChars`: what shape C's sources may hold (tests fill a smaller one). */
  constructor(sourcesKeptChars = SOURCES_KEPT_CHARS) {
    this.sources = new RecordMemo<SourceReading>(sourcesKeptChars, charsOf);
  }

  /** What is read of a document's chunk `text`, of the chunk `key` (recordKey and the chunk's place), as a question asking a contact or not reads it. */
  of(key: string, text: string, contactWanted: boolean): SourceReading {
    return this.memo.get(`${key}\u0000${contactWanted ? "contact" : "other"}`, text, () => {
      this.reads++;
      return readOnce({ text }, contactWanted);
    });
  }

  /**
   * What shape C's answer reads of the source `s` of the record `key` (recordKey), as a question
   * asking a contact or not reads it; again when its text, its head or its type is another.
   */
  ofSource(key: string, s: AnswerSource, contactWanted: boolean): SourceReading {
    const read = `${s.type ?? ""}\u0000${s.head ?? ""}\u0001${s.text}`;
    return this.sources.get(`${key}\u0000${contactWanted ? "contact" : "other"}`, read, () => {
      this.sourceReads++;
      return readOnce({ text: s.text, type: s.type, head: s.head }, contactWanted);
    });
  }

  /** Characters held now (tests). */
  get chars(): number {
    return this.memo.size + this.sources.size;
  }
}
