// Bringing an index up to date with a scan of its source: what changed is read, what vanished
// removed; the source files are only ever read.
import { statSync } from "node:fs";
import { setImmediate as nextTurn } from "node:timers/promises";
import { NoUserKey } from "../../crypto/user-keys";
import { isStorageError } from "../../store/storage-errors";
import { type ReadRecords, SourceSkipped } from "../types";
import type { LocalIndex } from "./index";

/** Records whose words are written again in one turn of the event loop, at most (~2 ms each for a mail)… */
const REWRITE_RECORDS = 20;
/** …and fewer once this much text was blinded (~25 ms of Chinese, cut in pairs). */
export const REWRITE_CHARS = 100_000;

export interface ScanEntry {
  source: string;
  size: number;
  mtime: number;
}

/** How far a sync has come: sources read (or failed) of those to read, told before the first and after each. */
export type SyncProgress = (done: number, total: number) => void;

/**
 * Brings the index up to date with `entries` (from a scan of the source): new or changed
 * sources are read with `read` (with their chunks, cut where they were read), vanished ones removed. Returns how many were read. A source
 * `read` skips (SourceSkipped) is kept as skipped in the index (skipped.ts) and not read again,
 * after a restart too, until it changes. Once `stopped` says so (the connector is closing),
 * nothing more is read or written. `beforeRead`, when it answers a promise, is awaited before a
 * source is read, and what it throws ends the sync (the owner's key read again: D33).
 */
export async function syncIndex(
  index: LocalIndex,
  entries: ScanEntry[],
  read: (e: ScanEntry) => Promise<ReadRecords>,
  onProgress: SyncProgress = () => {},
  stopped: () => boolean = () => false,
  beforeRead: () => Promise<unknown> | undefined = () => undefined,
): Promise<{ read: number; removed: number; failed: string[]; skipped: string[]; cutWords: number }> {
  // Awaited only from the shared store: the embedded one tells its progress's total in this turn, as the status shows at once.
  let known = index.known();
  if (known instanceof Promise) known = await known;
  let skipped = index.skipped();
  if (skipped instanceof Promise) skipped = await skipped;
  // What to read is decided first, so that progress has a total.
  const toRead: ScanEntry[] = [];
  let replaced = 0;
  for (const e of entries) {
    const source = index.sourceKey(e.source);
    const k = known.get(source);
    known.delete(source);
    if (k && k.size === e.size && k.mtime === e.mtime) continue;
    const s = skipped.get(source);
    skipped.delete(source);
    if (s && s.size === e.size && s.mtime === e.mtime) continue;
    const unskipped = s && index.unskip(source);
    if (unskipped instanceof Promise) await unskipped;
    if (k) replaced++;
    toRead.push(e);
  }
  // Left: skipped sources no longer there.
  for (const source of skipped.keys()) {
    const unskipped = index.unskip(source);
    if (unskipped instanceof Promise) await unskipped;
  }
  let readCount = 0;
  const failed: string[] = [];
  const newlySkipped: string[] = [];
  // Records indexed by their words in part (past RecordWords' bound), for the log.
  let cutWords = 0;
  onProgress(0, toRead.length);
  // Stopped (the connector closing): what was read so far, nothing more read, written or removed.
  const sofar = () => ({ read: readCount, removed: 0, failed, skipped: newlySkipped, cutWords });
  // What a put or removal stopped or killed (kill -9) on the way left hidden goes first; the source it wrote is read again.
  if (!(await index.removeUnfinished(stopped))) return sofar();
  for (const [i, e] of toRead.entries()) {
    if (stopped()) return sofar();
    // Outside the file's own failures: a deleted owner, or an unreachable shared database, is no unreadable file.
    const checking = beforeRead();
    if (checking) {
      await checking;
      if (stopped()) return sofar();
    }
    try {
      const records = await readOnceMoreIfAsked(read, e);
      if (stopped()) return sofar();
      // Made ready with turns of the event loop: a record of 4 M characters, or 100,000 tiny ones, held the serving thread for seconds (D31).
      // Their chunks as the reading worker cut them: cutting was the longest part left here (53 ms of CPU in a turn).
      const prepared = await index.prepare(records, records.chunks);
      if (stopped()) return sofar();
      if (!(await index.put(e, records, prepared, stopped))) return sofar();
      readCount++;
      cutWords += prepared.cutWords ?? 0;
    } catch (error) {
      // The owner was deleted meanwhile: nothing more of theirs is read or written.
      if (error instanceof NoUserKey) throw error;
      // A full disk is no unreadable file: the sync stops and is retried once writes succeed (D29).
      if (isStorageError(error)) throw error;
      if (error instanceof SourceSkipped) {
        // Its earlier records (if it changed into what is skipped) go.
        const source = index.sourceKey(e.source);
        if (!(await index.removeSource(source, stopped))) return sofar();
        await index.skip(source, e, error.message);
        newlySkipped.push(error.message);
      } else failed.push(e.source);
    }
    onProgress(i + 1, toRead.length);
    // A file's parse resolves on microtasks only: without a turn of the event loop between files,
    // requests waited while several were read (GET / stalled 40-75 ms through the Enron maildir).
    await nextTurn();
  }
  // Stopped during the turn after the last file: nothing is removed either.
  if (stopped()) return sofar();
  for (const source of known.keys()) if (!(await index.removeSource(source, stopped))) return sofar();
  if (replaced || known.size) index.purgeRemoved();
  return { read: readCount, removed: known.size, failed, skipped: newlySkipped, cutWords };
}

/**
 * Records whose words are of an older format (index-terms.ts TERMS_FORMAT) have them written
 * again, a batch a turn: after the first scan since an upgrade, once what is indexed answers
 * (a word the format does not change is the same term in both, so questions meanwhile lose
 * nothing else). Stops, writing nothing more, once `stopped` says so. How many were rewritten.
 */
export async function rewriteStaleWords(index: LocalIndex, stopped: () => boolean = () => false): Promise<number> {
  let rewritten = 0;
  while (!stopped()) {
    const n = await index.reblindStale(REWRITE_RECORDS, REWRITE_CHARS);
    if (n === 0) break;
    rewritten += n;
    await nextTurn();
  }
  if (rewritten && !stopped()) index.purgeRemoved();
  return rewritten;
}

export function scanEntry(path: string, source = path): ScanEntry {
  const st = statSync(path);
  return { source, size: st.size, mtime: Math.floor(st.mtimeMs) };
}

/** `read(e)`, once more where the skip says the bound measured more than this source (SourceSkipped.again). */
async function readOnceMoreIfAsked(read: (e: ScanEntry) => Promise<ReadRecords>, e: ScanEntry): Promise<ReadRecords> {
  try {
    return await read(e);
  } catch (error) {
    if (!(error instanceof SourceSkipped) || !error.again) throw error;
    return await read(e);
  }
}
