// A source read live (SQL) keeps no vectors of its own: a record a question meets for the first
// time is ranked by its words only, and its vectors are made for the next question. Its newest
// records are embedded ahead instead, in the background, a page at a time, so that the first
// questions rank them by meaning too (scripts/eval/business.ts, the shop's rows on a fresh data
// folder: nDCG@10 0.743 by words until seen, 0.874 with their vectors).
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "../log";
import { PhaseProgress } from "./progress";
import type { Connector, SourceRecord } from "./types";

/**
 * Newest records of a connector embedded ahead (shared among its tables): a shop's recent orders,
 * not its whole history; ~70 s of one core in the background, and ~8 MB of cached vectors.
 */
export const AHEAD_RECORDS = 5_000;
/** After a try that failed (the source unreachable, a full disk), the next is not sooner than this. */
export const AHEAD_RETRY_MS = 60_000;
/**
 * After a try that embedded all, the next is not sooner than this: rows added since (new orders)
 * are embedded ahead too, and vectors the owner's bounded cache let go are made again. A try over
 * rows already cached costs their reading and a lookup each.
 */
export const AHEAD_REFRESH_MS = 15 * 60_000;
/** The reason a source's status gives while a try that stopped part-way waits for the next. */
export const AHEAD_PAUSED = "embedding ahead paused after an error; it resumes when a question next asks this source";
/** Records a background job embeds at once: a folder's indexing and questions' own vectors take their turns between pages. */
export const AHEAD_PAGE = 64;

export interface Ahead {
  /** Embeds (or finds in the owner's cache) each text, in the background; `wanted` is asked before it runs and stores. */
  embed(texts: string[], wanted: () => boolean): Promise<unknown>;
  /** The texts each record is embedded as (retrieval's chunking), cut off the serving thread (D31: reading/reader.ts chunks). */
  chunks(records: SourceRecord[]): Promise<string[][]>;
  /** False once the connector was closed, removed or changed: nothing more is read, embedded or stored. */
  live(): boolean;
  /** Given the run's progress once the records to embed are read (the connector's status shows it). */
  started(progress: PhaseProgress): void;
  now: () => number;
  log: Logger;
}

/**
 * Reads the connector's newest records and embeds them, a page at a time, each page's records let
 * go once embedded. True once all are (or none was left to read); false when the source could not
 * be read or a page could not be embedded (the source's status says why; a later try goes on).
 */
export async function embedAhead(connector: Connector, a: Ahead): Promise<boolean> {
  if (!connector.newest) return true;
  let records: SourceRecord[];
  try {
    records = await connector.newest(AHEAD_RECORDS);
  } catch {
    return false;
  }
  const run = new PhaseProgress("embedding", "records", 0, records.length, a.now);
  if (records.length) a.started(run);
  let done = 0;
  while (records.length && a.live()) {
    try {
      const page = records.splice(0, AHEAD_PAGE);
      await a.embed((await a.chunks(page)).flat(), a.live);
      done += page.length;
      run.update(done);
      run.report(a.log, "connector embedding ahead");
      // A page found whole in the cache resolves without waiting: the request thread takes its
      // turn between pages all the same (5,000 cached rows held it ~0.7 s).
      await nextTurn();
    } catch (error) {
      // Closing, a full disk, or the connector gone: what is cached stays.
      a.log.debug("embedding ahead stopped", { reason: error instanceof Error ? error.name : "failed" });
      return false;
    }
  }
  // The completion line, as a folder's embedding has: records, seconds, records per second.
  if (done > 0 && records.length === 0) a.log.info("connector embedded ahead", run.summary());
  return true;
}
