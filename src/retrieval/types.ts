// What the query pipeline's steps hand each other (search.ts runs them in order).
import type { BooksFacts } from "../connectors/books/answer";
import type { SourceRecord } from "../connectors/types";
import type { Logger } from "../log";
import type { QuestionStageTimes } from "../questions/stages";
import type { QueryPlan } from "./plan";

export interface RankedChunk {
  connectorId: string;
  connectorLabel: string;
  /** Whose keys hold the record's vectors: the user, or the operator for their connectors. */
  owner: string;
  record: SourceRecord;
  /** Position of the chunk within its record. */
  chunkIndex: number;
  text: string;
  score: number;
  lexical: number;
  dense?: number;
  /** Of the question's rare words (few candidates hold them: a vendor's or a shop's name), the share this record holds, and RARE_NAME (3) more when it holds all those written as names (score.ts). */
  rare?: number;
  /** Other copies of the same record (the same Message-ID or the same text), by source URL. */
  copies?: string[];
  /** The record's chunks, while ranking (dropped before results are returned). */
  chunks?: string[];
  /** The record's chunks as its index stored them (SearchHit.storedChunks), read when it is cited. */
  storedChunks?: () => string[] | undefined;
}

export interface QueryOptions {
  user: string;
  question: string;
  /** Earlier questions of the conversation, oldest first. */
  context?: string[];
  connectorIds?: string[];
  /** Results kept per connector. */
  perConnector: number;
  sourceType?: "email" | "file";
  dateFrom?: Date;
  dateTo?: Date;
  now?: Date;
  denseWeight?: number;
  timeoutMs?: number;
  /** Candidates asked of each connector (default: three times perConnector, at least 20). */
  candidates?: number;
  /** Whether the best chunk's text is wanted (evaluation needs only the ranking). */
  texts?: boolean;
  /**
   * Only the first `limit` results that `keep` keeps are returned (shape C: five of up to five per
   * connector): only they are cited (their chunk chosen and its text set); the others come back
   * without a text. All are cited without it.
   */
  returned?: { limit: number; keep?: (c: RankedChunk) => boolean };
  /** For the DEBUG lines of this question (CORPUS_DEBUG_MODE). */
  requestId?: string;
  /**
   * False once the asker may no longer have anything written for them (their token revoked: their
   * deletion, D25): what the question queued in the background is then not kept.
   */
  stillAllowed?: () => boolean;
  /** Told how long each stage took (the operator's metrics, D35). */
  stages?: QuestionStageTimes;
}

export interface QueryOutcome {
  plan: QueryPlan;
  /** The question's embedding; none when the model could not be loaded (ranked by words, with a note). */
  vector?: Float32Array;
  /** Best first; at most `perConnector` per connector (and the transactions a books answer cites, first). */
  chunks: RankedChunk[];
  /** Shape C's answer when made from every record of a source rather than the ranked chunks: a sum over books (D34). */
  answer?: string;
  /** That answer as data (corpus_answer): the sums, commodities, period and transactions it says. */
  answerFacts?: BooksFacts;
  connectorsSearched: number;
  totalFound: number;
  notes: string[];
}

/** A question as the steps see it: the plan, the words asked (with the previous turn's), the options. */
export interface Question {
  options: QueryOptions;
  plan: QueryPlan;
  terms: string[];
  /** None when the model could not be loaded: candidates are ranked by their words. */
  vector?: Float32Array;
  /**
   * DEBUG lines (CORPUS_DEBUG_MODE): shapes and numbers only, no word of the question, no text,
   * title, path or id of a record (the data folder keeps those sealed or hashed; a log is no place for them either).
   */
  debug?: Logger;
}

export const elapsedMs = (since: number) => Math.round((performance.now() - since) * 10) / 10;

/** A row of a table (SQL), as opposed to a mail or a document. */
export const isRow = (r: SourceRecord) => r.metadata.table !== undefined;
