// The one interface every connector kind implements (issue: connectors; D18). A connector
// only ever reads its source (D19) and answers a retrieval request with records.
import type { ProgressView } from "./progress";

/** A record of a source: a mail, a file, a row. */
export interface SourceRecord {
  /** Stable within its connector. */
  id: string;
  title: string;
  content: string;
  /** Where the record lives in its origin tool (never with credentials). */
  source_url: string;
  /** ISO 8601, or null when the source has none. */
  date: string | null;
  /** "email" for mail, "file" for everything else (D8). */
  type: "email" | "file";
  /** Location inside the connector, e.g. "orders/1042" or "INBOX/4711" (D8 `path`). */
  path: string;
  metadata: Record<string, string | number | boolean | null>;
}

/**
 * A source's records as read for its index: with `chunks`, each record's texts to embed (in
 * order), cut where the records were read, in the reading worker (D31: never on the serving
 * thread); without them (a source read otherwise), the index cuts them.
 */
export type ReadRecords = SourceRecord[] & { chunks?: string[][] };

/** What a search asks of a connector; planning (terms, phrases, dates) happens before. */
export interface RetrievalRequest {
  terms: string[];
  phrases: string[];
  dateFrom?: Date;
  /** Exclusive. */
  dateTo?: Date;
  limit: number;
  /** The question's embedding, for sources that keep vectors. */
  vector?: Float32Array;
  /** Aborted once the search gave up on this connector: work not yet done is dropped. */
  signal?: AbortSignal;
  /** Who asks, for sources that share one connection among users (fair turns). */
  caller?: string;
  /**
   * The question asks for the largest (desc) or smallest (asc) of a quantity its terms name:
   * a source that can sorts by the column so named (SQL), and says so in ORDERED_BY/ORDER_RANK.
   */
  order?: "desc" | "asc";
  /**
   * The question's words written as names (plan.ts, folded): a source sorted as `order` asks
   * answers without the question's words only when none is a name ("the largest invoice of Helena"
   * is not the largest of all).
   */
  names?: string[];
}

/** Metadata of a record from a source sorted as `order` asked: the column, and the record's place (1 = first). */
export const ORDERED_BY = "corpus_ordered_by";
export const ORDER_RANK = "corpus_order_rank";

/**
 * A table's key column, not an amount: "InvoiceId", "customer_id", "ID", and as PostgreSQL folds
 * unquoted names, "customerid"; not "amount_paid", "prepaid" or "valid".
 */
export const isKeyColumn = (name: string) =>
  /(^|[^a-zA-Z])(id|Id|ID)$|[a-z](Id|ID)$/.test(name) || /^(?!(un|pre)?paid$|(in)?valid$|bid$)[a-z]+id$/.test(name);

/** A record with the scores its source could give it. */
export interface SearchHit {
  record: SourceRecord;
  /** BM25 from the source's own full-text index (higher is better). */
  lexical?: number;
  /** Cosine similarity of the best chunk to the question. */
  dense?: number;
  /** Which chunk of the record matched best, where known. */
  chunk?: number;
  /** The record's chunks as its index stored them (cut where it was read, D31), read when asked; undefined where it has none. */
  storedChunks?: () => string[] | undefined;
}

export interface IndexProgress {
  /** Chunks in the source. */
  total: number;
  /** Chunks with an embedding. */
  embedded: number;
  /** Files read of those a sync under way reads (none when no sync is reading). */
  reading?: { done: number; total: number };
}

/** `indexing` while records are read, `embedding` while chunks wait for vectors, `ok` once both are done. */
/** checking: never checked yet in this process, and the first check has not answered yet. */
export type ConnectorState = "ok" | "indexing" | "embedding" | "error" | "checking";

export interface ConnectorStatus {
  status: ConnectorState;
  reason?: string;
  /** Records in the source, where known. */
  records?: number;
  /** While indexing or embedding: how far, how fast, how long left. */
  progress?: ProgressView;
}

export interface Connector {
  /** Its kind's name in the kinds table (kinds.ts). */
  readonly kind: string;
  /** Connects or scans as needed; never throws: a failure is status "error" with a reason. */
  health(): Promise<ConnectorStatus>;
  search(request: RetrievalRequest): Promise<SourceRecord[]>;
  /** Sources with their own index answer with scores (lexical and, with a vector, dense). */
  rank?(request: RetrievalRequest): Promise<SearchHit[]>;
  /** How far ahead-of-time embedding has come. */
  progress?(): IndexProgress;
  /**
   * A source read live (no index of its own): its newest records, about `limit` in all (shared
   * among its tables) and each of bounded size, which the registry embeds ahead of the questions
   * that will meet them (embed-ahead.ts).
   */
  newest?(limit: number): Promise<SourceRecord[]>;
  close(): Promise<void>;
}

/** A failure to show the user as it is (no secrets, no stack). */
export class ConnectorError extends Error {}

/** A source left out on purpose, past a bound (its message says which): not read again until it changes. */
export class SourceSkipped extends Error {
  /**
   * The bound was measured over the whole process (its memory): another user's work may have
   * grown it meanwhile, so the source is read once more before it is kept skipped (D31).
   */
  readonly again: boolean;
  constructor(message: string, { again = false }: { again?: boolean } = {}) {
    super(message);
    this.again = again;
  }
}

/** Control characters (a NUL, a bell, an escape, a line break) read as a space: a question or a needle holding one means the same without it. */
export const controlsAsSpaces = (text: string) => text.replace(/\p{Cc}+/gu, " ");

/**
 * Terms and phrases as one list of needles, lower-cased, for sources that match substrings. A
 * control character (a NUL, a line break pasted into a phrase) is a space: PostgreSQL refuses a
 * NUL in a value and IMAP has no way to quote a line break, which failed the whole search.
 */
export function needles(request: RetrievalRequest): string[] {
  return [...new Set([...request.phrases, ...request.terms].map(needleOf).filter(Boolean))];
}

/** Control characters and runs of spaces as one space, trimmed: how a quoted phrase is read (plan.ts) and matched. */
export const oneSpaced = (text: string) => controlsAsSpaces(text).replace(/\s+/g, " ").trim();

/** A term or phrase as a needle: oneSpaced, lower case. */
const needleOf = (s: string) => oneSpaced(s).toLowerCase();

/**
 * Needles a source that matches substrings (SQL LIKE, IMAP SEARCH) is asked for at most: each
 * one costs a pass over every text, and a 450-word question held a server for 70 s (issue 13).
 */
export const MAX_SEARCH_NEEDLES = 8;

/**
 * Function words of the languages beside English most often met in business data (Spanish,
 * Portuguese, French, Italian, German, Dutch); the planner leaves out English ones already.
 */
const FUNCTION_WORDS = new Set(
  "de la le les du des da do das dos del el los las en et un una une uno y e o em na no com con por para pour sur au aux il lo di al che und der die den dem ein eine von zu im am mit het een van".split(
    " ",
  ),
);

/** The needles worth such a search: phrases first, then the longest terms (the rarer, as a rule). */
export function searchNeedles(request: RetrievalRequest, max = MAX_SEARCH_NEEDLES): string[] {
  const all = needles(request);
  // Read as the needles are: a phrase holding a control character is still the phrase.
  const phrases = new Set(request.phrases.map(needleOf));
  // A stable sort: terms of one length keep the question's order.
  const terms = all.filter((n) => !phrases.has(n)).sort((a, b) => b.length - a.length);
  // A function word of another language ("de", "la", "los") is in nearly every text of its own:
  // asked as a substring it filled the limit with rows that merely held it. Asked only when
  // nothing else is; a code of two letters ("XJ", "PL") is asked as any word.
  const meaningful = terms.filter((n) => !FUNCTION_WORDS.has(n));
  return [...all.filter((n) => phrases.has(n)), ...(meaningful.length ? meaningful : terms)].slice(0, max);
}
