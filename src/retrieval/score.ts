// Step 2: every connector's candidates scored by words (their source's BM25, or BM25 over them)
// and by meaning (the source's vectors, or those of their chunks seen before); then each
// connector's word scores put on the one scale of the whole pool.
import { OPERATOR_OWNER } from "../auth/subjects";
import type { ActiveConnector } from "../connectors/registry";
import { shownRecord } from "../connectors/source-url";
import type { SearchHit, SourceRecord } from "../connectors/types";
import { cosine } from "../embedding/embedder";
import type { EmbeddingService } from "../embedding/service";
import { bm25Of, type CountedText, type WordCounts, wordCounts, wordCountsChars, wordCountsOf } from "./bm25";
import { embeddingText } from "./chunk";
import type { Answer } from "./gather";
import { leadingName, markRareWords, rareWordsApply } from "./rare-words";
import { RecordMemo, recordKey } from "./record-memo";
import { byBest, minMax } from "./scales";
import { isRow, type Question, type RankedChunk } from "./types";

/** The note for an operator connector that failed: why is for the operator's log, not for users. */
export const OPERATOR_UNAVAILABLE = "unavailable right now";

export interface Scoring {
  embeddings: EmbeddingService;
  /** A record's chunks, from the query service's cache. */
  chunksOf(owner: string, connectorId: string, record: SourceRecord): string[];
}

/** The pool of scored candidates, best not yet known, and the notes of the connectors. */
export function scoreCandidates(
  q: Question,
  active: ActiveConnector[],
  answers: Answer[],
  s: Scoring,
): { pool: RankedChunk[]; notes: string[] } {
  const pool: RankedChunk[] = [];
  /** For each candidate: its connector's place among the answers, and its record as its source gave it (its words on the pool's scale). */
  const groupOf: number[] = [];
  const poolRecords: Array<{ key: string; record: SourceRecord }> = [];
  const notes: string[] = [];
  let pendingVectors = 0;
  // A quoted phrase's words count as the question's words: the record holding "price caps"
  // asked for is not outranked by every record holding the question's other words.
  const scoredWords = [...q.terms, ...q.plan.phrases];
  answers.forEach((answer, i) => {
    const a = active[i]!;
    if (answer.status === "rejected") {
      notes.push(failureNote(a, answer.reason));
      return;
    }
    const hits = answer.value.hits.filter((h) => !q.options.sourceType || h.record.type === q.options.sourceType);
    const progress = a.connector.progress?.();
    if (progress?.reading)
      notes.push(`${a.id}: indexing, ${progress.reading.done} of ${progress.reading.total} files read; answering from what is read`);
    else if (progress && progress.embedded < progress.total)
      notes.push(`${a.id}: embedding, ${progress.embedded} of ${progress.total} chunks embedded; answering from what is ready`);
    if (hits.length === 0) return;
    const owner = a.owner === "operator" ? OPERATOR_OWNER : q.options.user;
    const lexical = wordScores(hits, scoredWords, (h) => recordKey(owner, a.id, h.record.id));
    for (const [j, h] of hits.entries()) {
      const meaning = denseScore(q, a, owner, h, s);
      if (meaning === "no chunks") continue;
      if (meaning.pending) pendingVectors++;
      groupOf.push(i);
      poolRecords.push({ key: recordKey(owner, a.id, h.record.id), record: h.record });
      pool.push({
        connectorId: a.id,
        connectorLabel: a.label,
        owner,
        // As users are shown it: an operator connector's record names no host, account or path.
        record: shownRecord(a, h.record),
        chunkIndex: meaning.chunk ?? -1,
        text: "",
        score: 0,
        lexical: lexical[j]!,
        dense: meaning.dense,
        chunks: meaning.chunks,
        storedChunks: h.storedChunks,
      });
    }
  });
  // The pool's texts read for both, and only when either needs them: BM25 over the pool (two
  // sources or more), and which of a short question's words are rare. Each record's words are
  // counted once per version of its text, not for every question it is a candidate of (issue 36).
  const rare = rareWordsApply(scoredWords, pool.length, q.plan.dayWords);
  if (new Set(groupOf).size >= 2 || rare) {
    const counted = wordCountsOf(
      poolRecords.map(({ key, record }) => poolWords.getOfRecord(key, record, poolText)),
      scoredWords,
    );
    calibrateLexical(pool, groupOf, counted, scoredWords);
    if (rare)
      markRareWords(
        pool,
        counted,
        scoredWords,
        new Set([...q.plan.names, ...leadingName(q.plan.text)]),
        wholeWordsOf(poolRecords, counted, scoredWords),
        q.plan.dayWords,
      );
  }
  if (pendingVectors)
    notes.push(`${pendingVectors} records seen for the first time were ranked by their words; their meaning is being indexed`);
  return { pool, notes };
}

function failureNote(a: ActiveConnector, reason: unknown): string {
  // An operator connector's reason names its host, account or URL, which users are not shown.
  if (a.owner === "operator") return `${a.id}: ${OPERATOR_UNAVAILABLE}`;
  const message = reason instanceof Error ? reason.message : "failed";
  return message.startsWith(`${a.id}:`) ? message : `${a.id}: ${message}`;
}

/**
 * A connector's word scores, 0..1: the source's own BM25 where it has one (a record it found
 * only by meaning scored lowest), else BM25 over these candidates (IMAP, SQL).
 */
function wordScores(hits: SearchHit[], terms: string[], keyOf: (h: SearchHit) => string): number[] {
  const ownScores = hits.some((h) => h.lexical !== undefined);
  const local = ownScores
    ? []
    : bm25Of(
        wordCountsOf(
          hits.map((h) => recordWords.getOfRecord(keyOf(h), h.record, wordsText)),
          terms,
        ),
        terms,
      );
  const lowest = ownScores ? Math.min(...hits.filter((h) => h.lexical !== undefined).map((h) => h.lexical!)) : 0;
  const lexical = hits.map((h, j) => h.lexical ?? (ownScores ? lowest : (local[j] ?? 0)));
  // A source's own BM25 ranked these out of all it holds: its weakest is the floor. A source
  // that gave every record containing a word (SQL, IMAP) gave matches only: each scores its
  // share of the best (train split of scripts/eval/business.ts: shop 0.722 -> 0.949).
  const scale = ownScores ? minMax(lexical) : byBest(lexical);
  return lexical.map(scale);
}

/**
 * A candidate's meaning: the source's similarity where it embeds its own chunks (a folder's
 * index gives the vectors it has; the rest are on their way: chunking them, looking them up and
 * queueing them again on every question held the request thread for ~1 s per question while a
 * large folder embedded); else its chunks' vectors seen before, and the unseen queued. Those a
 * question makes are the asker's (D25), also for an operator's source: another user's answers
 * must not tell that someone asked about a row, and a deletion takes them too. An operator's
 * source's rows embedded ahead are the operator's, read by every user.
 */
function denseScore(
  q: Question,
  a: ActiveConnector,
  owner: string,
  h: SearchHit,
  s: Scoring,
): { dense?: number; chunk?: number; chunks?: string[]; pending?: boolean } | "no chunks" {
  if (h.dense !== undefined || a.connector.progress) return { dense: h.dense, chunk: h.chunk };
  const chunks = s.chunksOf(owner, a.id, h.record);
  if (chunks.length === 0) return "no chunks";
  // No question vector (the model could not be loaded): by words alone, nothing queued for a model that is not there.
  const question = q.vector;
  if (!question) return { chunk: h.chunk, chunks };
  const texts = chunks.map((c) => embeddingText(h.record.title, c));
  const asker = q.options.user;
  let dense: number | undefined;
  let chunk = h.chunk;
  s.embeddings.cachedFor(owner, asker, texts, recordKey(owner, a.id, h.record.id)).forEach((v, k) => {
    if (!v) return;
    const sim = cosine(question, v);
    if (dense === undefined || sim > dense) {
      dense = sim;
      chunk = k;
    }
  });
  if (dense !== undefined) return { dense, chunk, chunks };
  // Seen for the first time: embedded in the background, ready for the next question.
  void s.embeddings.embed(asker, texts, "background", q.options.stillAllowed).catch(() => {});
  return { chunk, chunks, pending: true };
}

/**
 * How much of a record a source without word scores of its own (IMAP, SQL) is ranked by: its
 * words are counted on the request thread, and a crafted 1 MB mail or row took ~0.1 s of it per
 * question (outside attack). ~15,000 words: a mail's or a row's words, all but a few.
 */
const WORDS_TEXT_CHARS = 100_000;

/**
 * Characters of counted words (bm25.ts wordCountsChars: the runs and their table) each memo keeps:
 * ~8 MB; the 1,702 Enron mails' pool texts count to 4.6 M characters (2.7 M of runs).
 */
export const POOL_WORDS_CHARS = 8_000_000;
/** Each candidate's words as BM25 over the pool reads them, counted once per version of its pool text. */
const poolWords = new RecordMemo<WordCounts>(POOL_WORDS_CHARS, wordCountsChars, wordCounts);

/** Each such record's words, counted once per version of its text (100,000 characters: ~6 ms of every question it was asked in, hashing them ~0.01 ms). */
const recordWords = new RecordMemo<WordCounts>(POOL_WORDS_CHARS, wordCountsChars, wordCounts);

/** The text a source without word scores of its own is ranked by: title and text (a row: its columns). */
const wordsText = (r: SourceRecord) => (isRow(r) ? r.content : `${r.title} ${r.content}`).slice(0, WORDS_TEXT_CHARS);

/** How much of a candidate's content, and of its title or headers, BM25 over the pool reads. */
const POOL_TEXT_CHARS = 6000;
const POOL_HEAD_CHARS = 1000;

/** The text BM25 over the pool reads: title, mail headers, and the start of the content. */
function poolText(r: SourceRecord): string {
  // A row's title is one of its columns, already in its text: counted once, as every column.
  if (isRow(r)) return r.content.slice(0, POOL_TEXT_CHARS);
  const m = r.metadata;
  const head = r.type === "email" ? ` ${m.from ?? ""} ${m.to ?? ""} ${m.cc ?? ""}`.slice(0, POOL_HEAD_CHARS) : "";
  // A title is short; a crafted one of a megabyte is not read twice whole (outside attack).
  const title = r.title.slice(0, POOL_HEAD_CHARS);
  return `${title} ${title}${head} ${r.content.slice(0, POOL_TEXT_CHARS)}`;
}

/**
 * The connector's own scores say which of its records match best, not how well its best
 * matches beside another source's: each connector's best is scaled by BM25 over the whole pool
 * of candidates (one scale), so no source wins by being alone in its group.
 */
function calibrateLexical(scored: RankedChunk[], groupOf: number[], counted: CountedText[], terms: string[]): void {
  if (new Set(groupOf).size < 2) return;
  const pool = bm25Of(counted, terms);
  const best = Math.max(...pool);
  if (!(best > 0)) return;
  const groupBest = new Map<number, number>();
  for (const [k, g] of groupOf.entries()) groupBest.set(g, Math.max(groupBest.get(g) ?? 0, pool[k]!));
  for (const [k, c] of scored.entries()) c.lexical *= groupBest.get(groupOf[k]!)! / best;
}

/**
 * A candidate's words as the rare-word signal reads them when its pool text (the first
 * POOL_TEXT_CHARS) lacks one: a longer record's whole words text (WORDS_TEXT_CHARS), counted once
 * per version. A news digest names the senator or the company asked about past its first 6,000
 * characters: read by its head, "IEP News 4/20" (67 K characters, "Dunn" in three stories) held no
 * rare word and ranked 27th for "Senator Dunn hearing", below mails naming him once in passing.
 */
function wholeWordsOf(records: Array<{ key: string; record: SourceRecord }>, counted: CountedText[], terms: string[]) {
  return (k: number): CountedText => {
    const { key, record } = records[k]!;
    if (record.title.length + record.content.length + 1 <= POOL_TEXT_CHARS) return counted[k]!;
    return wordCountsOf([recordWords.getOfRecord(key, record, wordsText)], terms)[0]!;
  };
}
