// The records of an index: sealed with the owner's key and bound to their row, their words
// blinded into the word index, their chunks' texts sealed and listed (to be embedded), keyed by a
// keyed hash of the source they were read from, with its size and mtime.
import type { Database } from "bun:sqlite";
import { sealingOf } from "../../crypto/aead";
import { RecordMemo } from "../../retrieval/record-memo";
import { connectorVectors } from "../../vectors/embedded";
import { splitPartition } from "../../vectors/sqlite";
import { RecordWords, TERMS_FORMAT } from "../index-terms";
import { Turns } from "../turns";
import type { SourceRecord } from "../types";
import type { IndexContext } from "./context";
import type { ScanEntry } from "./sync";
import { termsLength } from "./word-statistics";

/** Known sources by their keys (a keyed hash), with the size and mtime last read. */
export function knownSources(ctx: IndexContext): Map<string, { size: number; mtime: number }> {
  const shown = visible(ctx);
  const rows = ctx.db
    .query<{ source: string; size: number; mtime: number }, Array<string | number>>(
      `SELECT DISTINCT source, size, mtime FROM connector_docs d WHERE owner = ?${shown.sql}`,
    )
    .all(ctx.owner, ...shown.params);
  return new Map(rows.map((r) => [r.source, { size: r.size, mtime: r.mtime }]));
}

/** A record made ready to store (prepareRecords): its words blinded, its chunks' texts (to embed), it and them sealed to its row. */
interface PreparedRecord {
  title: string;
  content: string;
  chunks: string[];
  sealed: Buffer;
  sealedChunks: Buffer[];
}

/** A record and its chunks' texts sealed to the row `doc` (each chunk to its place in it): the embedded store's and the shared one's alike. */
export function sealedTo(keys: IndexContext["keys"], r: SourceRecord, chunks: string[], doc: number) {
  return {
    sealed: keys.seal(JSON.stringify(r), `doc/${doc}`),
    sealedChunks: chunks.map((text, ord) => keys.seal(text, chunkRow(doc, ord))),
  };
}

/** Records made ready to store, their rows from `firstDoc` on (each sealed bound to its row). */
export interface PreparedRecords {
  firstDoc: number;
  records: PreparedRecord[];
  /** How many of them are indexed by their words in part (RecordWords: past a bound, D31). */
  cutWords?: number;
}

/** What a chunk's sealed text is bound to: its record's row and its place in it. */
export const chunkRow = (doc: number, ord: number) => `chunk/${doc}/${ord}`;

/**
 * The texts a record's chunks were embedded as (sealed with them, as the reading worker cut them:
 * connectors-011), opened in their order; undefined where any has none (stored before they were),
 * or the row no longer holds the record read (`sealed`, its sealed bytes as read: SQLite's
 * length() of a blob reads none of it). A question cites from these instead of cutting the record
 * again on the serving thread (D31). Remembered while the row holds the same sealing, as opened
 * records are (openRecords): each question citing a record read and opened every chunk of it
 * again (2.8 of the serving thread's ms a question of scripts/bench/query.ts).
 */
export function storedChunkTexts(ctx: IndexContext, doc: number, sealed: Uint8Array): readonly string[] | undefined {
  const read = () => {
    const rows = ctx.db
      .query<{ ord: number; text: Uint8Array | null }, [number, string, number]>(
        `SELECT c.ord, c.text FROM connector_chunks c JOIN connector_docs d ON d.doc = c.doc
         WHERE c.doc = ? AND d.owner = ? AND length(d.record) = ? ORDER BY c.ord`,
      )
      .all(doc, ctx.owner, sealed.length);
    storedChunkReads.count++;
    // None (kept as none: the row's chunks are what they were for this sealing of it).
    if (rows.length === 0 || rows.some((r, i) => r.ord !== i || !r.text)) return [];
    return Object.freeze(rows.map((r) => ctx.keys.open(r.text!, chunkRow(doc, r.ord))));
  };
  const texts = storedChunks.get(`${databaseId(ctx.db)}\u0000${ctx.owner}\u0000${doc}`, sealingOf(sealed), read);
  return texts.length ? texts : undefined;
}

/** Characters of stored chunk texts kept (storedChunkTexts): ~4 MB, as the chunks cut on this thread (retrieval/chunk-cache.ts). */
export const STORED_CHUNKS_CHARS = 4_000_000;
/** What a chunk's string costs beside its characters. */
const CHUNK_OVERHEAD = 32;
const storedChunks = new RecordMemo<readonly string[]>(STORED_CHUNKS_CHARS, (texts) =>
  texts.reduce((n, t) => n + t.length + CHUNK_OVERHEAD, RECORD_OVERHEAD),
);
/** Reads of a record's stored chunks from the database (tests count the work: a record cited again is not read again). */
export const storedChunkReads = { count: 0 };

/** The row the next record stored takes: past every number given, a removed row's too (connectors-015: never given again). */
const nextDoc = (db: Database) =>
  db
    .query<{ n: number }, []>(
      "SELECT max(coalesce((SELECT max(doc) FROM connector_docs), 0), coalesce((SELECT max(given) FROM connector_doc_numbers), 0)) + 1 AS n",
    )
    .get()!.n;

/**
 * `records` made ready for putRecords, the event loop turning whenever `turns`' budget is spent
 * (D31): words blinded (TermBlinder.textInTurns) and each sealed to the row it will take, so that
 * the transaction only inserts. 100,000 tiny records of an mbox were blinded, chunked, sealed and
 * stored in one go, holding the serving thread ~10 s. `chunks`, each record's texts to embed, are
 * as the reading worker cut them (D31: cutting never runs here; the chunker only when none are given).
 */
export async function prepareRecords(
  ctx: IndexContext,
  records: SourceRecord[],
  turns = new Turns(),
  chunks?: string[][],
): Promise<PreparedRecords> {
  const { keys } = ctx;
  const { words, cutWords } = await blindRecords(ctx, records, turns, chunks);
  // Rows are taken from here on unless another source takes one meanwhile (then putRecords seals again).
  const firstDoc = nextDoc(ctx.db);
  const out: PreparedRecord[] = [];
  for (const [i, r] of records.entries()) {
    out.push({ ...words[i]!, ...sealedTo(keys, r, words[i]!.chunks, firstDoc + i) });
    await turns.maybe();
  }
  return { firstDoc, records: out, cutWords };
}

/**
 * Each record's words blinded (TermBlinder.textInTurns, up to RecordWords' bound) and its chunks'
 * texts (`chunks` as the reading worker cut them, else the chunker's), the event loop turning
 * whenever `turns`' budget is spent (D31); how many records were indexed by their words in part.
 */
export async function blindRecords(
  ctx: Pick<IndexContext, "keys" | "chunker">,
  records: SourceRecord[],
  turns: Turns,
  chunks?: string[][],
): Promise<{ words: Array<{ title: string; content: string; chunks: string[] }>; cutWords: number }> {
  const words: { title: string; content: string; chunks: string[] }[] = [];
  let cutWords = 0;
  for (const [i, r] of records.entries()) {
    const bound = new RecordWords();
    const title = await ctx.keys.blinder.textInTurns(r.title, turns, bound);
    const content = await ctx.keys.blinder.textInTurns(r.content, turns, bound);
    if (bound.cut) cutWords++;
    words.push({ title, content, chunks: chunks?.[i] ?? ctx.chunker(r) });
    await turns.maybe();
  }
  return { words, cutWords };
}

/** `records` made ready for putRecords in one go, from row `firstDoc` on (few records; or `prepared`, sealed to rows taken since, sealed again). */
function prepareNow(ctx: IndexContext, records: SourceRecord[], firstDoc: number, prepared?: PreparedRecords): PreparedRecords {
  const { keys } = ctx;
  return {
    firstDoc,
    records: records.map((r, i) => {
      const words = prepared?.records[i] ?? { ...recordTerms(keys, r), chunks: ctx.chunker(r) };
      return { ...words, ...sealedTo(keys, r, words.chunks, firstDoc + i) };
    }),
  };
}

/**
 * Records per transaction while a source's records are written or removed (D31): ~10 ms of tiny
 * records here (100,000 of an mbox in one transaction held the serving thread ~1.5 s, ~3.2 s
 * replacing them); fewer once the turn's budget is spent (long records, many chunks).
 */
export const RECORDS_PER_TRANSACTION = 500;

/** Past any row: no row is hidden from there on. */
const NO_ROW = Number.MAX_SAFE_INTEGER;

/** The records of an index hidden from its readers while a put or removal writes (connector_hidden). */
interface Hidden {
  /** Its rows from here on: being staged. */
  from_doc: number | null;
  /** With below_doc: the rows of this source below it, put aside and being removed. */
  source: string | null;
  below_doc: number | null;
}

const hiddenOf = (ctx: Pick<IndexContext, "db" | "owner">) =>
  ctx.db.query<Hidden, [string]>("SELECT from_doc, source, below_doc FROM connector_hidden WHERE owner = ?").get(ctx.owner);

/**
 * The condition that a record (connector_docs `d`) is not hidden, as SQL with its values: every
 * reader of records or their chunks asks it, so none sees half a source being written, nor both
 * its old and new records, nor none while they are switched (one statement, however many).
 */
export function visible(ctx: Pick<IndexContext, "db" | "owner">): {
  sql: string;
  params: Array<string | number>;
  /** The same condition of a record's number and source, for rows read before (a phrase's hits kept: candidates.ts). */
  shown: (doc: number, source: string) => boolean;
} {
  const h = hiddenOf(ctx);
  const [from, source, below] = [h?.from_doc ?? NO_ROW, h?.source ?? "", h?.below_doc ?? 0];
  return {
    sql: " AND d.doc < ? AND NOT (d.source = ? AND d.doc < ?)",
    params: [from, source, below],
    shown: (doc, of) => doc < from && !(of === source && doc < below),
  };
}

/** Records `records[from..to)` ready to insert from row `least` on: `prepared`'s if no number of theirs was given since (to another source, kept or removed), else sealed again to the next free ones. */
function readyBatch(
  ctx: IndexContext,
  records: SourceRecord[],
  from: number,
  to: number,
  least: number,
  prepared?: PreparedRecords,
): PreparedRecords {
  const slice = prepared && { firstDoc: prepared.firstDoc + from, records: prepared.records.slice(from, to) };
  if (slice && slice.firstDoc >= Math.max(least, nextDoc(ctx.db))) return slice;
  return prepareNow(ctx, records.slice(from, to), Math.max(least, nextDoc(ctx.db)), slice);
}

/**
 * Replaces every record of `entry.source` with `records` (`prepared`, when given, are they made
 * ready: prepareRecords). They are written hidden (connector_hidden: the index's rows from the
 * first they take on) in transactions of at most RECORDS_PER_TRANSACTION records (fewer once the
 * turn's budget is spent), the event loop turning between two (D31); then one statement shows
 * them and hides the old ones, which are removed the same way. Once `stopped` says so, nothing
 * more is written: what is hidden stays so until the next put or sync removes it (as after a
 * crash). Whether the records were switched in.
 */
export async function putRecords(
  ctx: IndexContext,
  entry: ScanEntry,
  records: SourceRecord[],
  prepared?: PreparedRecords,
  stopped: () => boolean = () => false,
  turns = new Turns(),
): Promise<boolean> {
  const { db, owner, keys } = ctx;
  const source = keys.blinder.source(entry.source);
  // Left by a put stopped or killed on the way.
  if (!(await removeUnfinished(ctx, stopped, turns))) return false;
  const first = Math.max(nextDoc(db), prepared?.firstDoc ?? 0);
  db.query("INSERT INTO connector_hidden (owner, from_doc) VALUES (?, ?)").run(owner, first);
  const insertDoc = db.query(
    "INSERT INTO connector_docs (doc, owner, source, size, mtime, record_date, terms_format, terms_length, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertTerms = db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)");
  const insertChunk = db.query("INSERT INTO connector_chunks (doc, owner, ord, text) VALUES (?, ?, ?, ?)");
  const given = db.query("UPDATE connector_doc_numbers SET given = max(given, ?)");
  for (let from = 0; from < records.length; ) {
    if (stopped()) return false;
    const to = Math.min(records.length, from + RECORDS_PER_TRANSACTION);
    from = db.transaction(() => {
      const ready = readyBatch(ctx, records, from, to, first, prepared);
      let i = 0;
      while (i < ready.records.length) {
        const doc = ready.firstDoc + i;
        const p = ready.records[i]!;
        insertTerms.run(doc, p.title, p.content);
        insertDoc.run(doc, owner, source, entry.size, entry.mtime, records[from + i]!.date, TERMS_FORMAT, termsLength(db, doc), p.sealed);
        for (const [ord, text] of p.sealedChunks.entries()) insertChunk.run(doc, owner, ord, text);
        i++;
        if (turns.due()) break;
      }
      if (i > 0) given.run(ready.firstDoc + i - 1);
      return from + i;
    })();
    // Between two transactions only: a source of one batch is written as it was read.
    if (from < records.length) await turns.next();
  }
  if (stopped()) return false;
  // The switch: the new records shown, the old hidden, in one statement.
  db.query("UPDATE connector_hidden SET from_doc = NULL, source = ?, below_doc = ? WHERE owner = ?").run(source, first, owner);
  return removeUnfinished(ctx, stopped, turns);
}

/**
 * Removes what is hidden (connector_hidden): a put's records once switched out, or a removed
 * source's; or, left by a put stopped or killed on the way, those it staged. A transaction at a
 * time, the event loop turning between two; false if stopped meanwhile.
 */
export async function removeUnfinished(ctx: IndexContext, stopped: () => boolean = () => false, turns = new Turns()): Promise<boolean> {
  const h = hiddenOf(ctx);
  if (!h) return true;
  // By row from `from_doc` on (`+owner` keeps the planner off the owner's index, whose every older row it scanned each batch).
  const staged = ctx.db.query<{ doc: number }, [string, number, number]>(
    "SELECT doc FROM connector_docs WHERE +owner = ? AND doc >= ? ORDER BY doc LIMIT ?",
  );
  const setAside = ctx.db.query<{ doc: number }, [string, string, number, number]>(
    "SELECT doc FROM connector_docs WHERE owner = ? AND source = ? AND doc < ? LIMIT ?",
  );
  const batch = () =>
    h.from_doc !== null
      ? staged.all(ctx.owner, h.from_doc, RECORDS_PER_TRANSACTION)
      : setAside.all(ctx.owner, h.source ?? "", h.below_doc ?? 0, RECORDS_PER_TRANSACTION);
  for (;;) {
    if (stopped()) return false;
    const docs = batch().map((d) => d.doc);
    removeDocs(ctx.db, docs);
    if (docs.length < RECORDS_PER_TRANSACTION) break;
    await turns.next();
  }
  ctx.db.query("DELETE FROM connector_hidden WHERE owner = ?").run(ctx.owner);
  return true;
}

/**
 * Records whose words are of an older format than TERMS_FORMAT, their words written again from
 * the sealed record (the chunks and vectors stay): up to `records` of them, fewer once `chars`
 * of text were blinded (a long Chinese document is ~100 ms); how many were done. A record whose
 * words cannot be written keeps its old ones (marked done: it is not tried again each scan).
 */
export function reblindStale(ctx: IndexContext, records: number, chars: number): number {
  const { db, owner, keys } = ctx;
  const rows = db
    .query<{ doc: number; record: Uint8Array }, [string, number, number]>(
      "SELECT doc, record FROM connector_docs WHERE owner = ? AND terms_format < ? LIMIT ?",
    )
    .all(owner, TERMS_FORMAT, records);
  const remove = db.query("DELETE FROM connector_terms WHERE rowid = ?");
  const insert = db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)");
  const mark = db.query("UPDATE connector_docs SET terms_format = ? WHERE doc = ?");
  const measured = db.query("UPDATE connector_docs SET terms_length = ? WHERE doc = ?");
  let done = 0;
  let blinded = 0;
  db.transaction(() => {
    for (const { doc, record } of rows) {
      if (done > 0 && blinded >= chars) break;
      const r = JSON.parse(keys.open(record, `doc/${doc}`)) as SourceRecord;
      const words = blindedWords(keys, r);
      if (words) {
        remove.run(doc);
        insert.run(doc, words.title, words.content);
        measured.run(termsLength(db, doc), doc);
      }
      mark.run(TERMS_FORMAT, doc);
      done++;
      blinded += r.title.length + r.content.length;
    }
  })();
  return done;
}

/** A record's words as the index takes them (blinded, up to RecordWords' bound), in one go. */
function recordTerms(keys: IndexContext["keys"], r: SourceRecord): { title: string; content: string } {
  const bound = new RecordWords();
  return { title: keys.blinder.text(r.title, bound), content: keys.blinder.text(r.content, bound) };
}

/** A record's words, blinded; none if they cannot be cut (its old ones stay). */
export function blindedWords(keys: IndexContext["keys"], r: SourceRecord): { title: string; content: string } | undefined {
  try {
    return recordTerms(keys, r);
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** Removes every record of a source, by its key: hidden at once, then removed a transaction at a time (false if stopped meanwhile). */
export async function removeSource(ctx: IndexContext, source: string, stopped: () => boolean = () => false): Promise<boolean> {
  if (!(await removeUnfinished(ctx, stopped))) return false;
  ctx.db.query("INSERT INTO connector_hidden (owner, source, below_doc) VALUES (?, ?, ?)").run(ctx.owner, source, NO_ROW);
  return removeUnfinished(ctx, stopped);
}

/**
 * Removes records: their words, chunks, vectors and rows, in one transaction, a table at a time:
 * deleting from each table in turn for each record took ~5x as long (100,000 records of an mbox:
 * ~8 s against ~1.6 s, the word index's deletes interleaved with the others').
 */
export function removeDocs(db: Database, docs: number[]): void {
  if (docs.length === 0) return;
  const terms = db.query("DELETE FROM connector_terms WHERE rowid = ?");
  const chunksOf = db.query<{ chunk: number; owner: string }, [number]>("SELECT chunk, owner FROM connector_chunks WHERE doc = ?");
  const chunks = db.query("DELETE FROM connector_chunks WHERE doc = ?");
  const row = db.query("DELETE FROM connector_docs WHERE doc = ?");
  db.transaction(() => {
    for (const doc of docs) terms.run(doc);
    // Their vectors, by index (its owner, e.g. "alice/mail"): one removal each from the store.
    const vectors = new Map<string, number[]>();
    for (const doc of docs)
      for (const { chunk, owner } of chunksOf.all(doc)) (vectors.get(owner) ?? vectors.set(owner, []).get(owner)!).push(chunk);
    for (const [partition, ids] of vectors) {
      const { owner, connector } = splitPartition(partition);
      connectorVectors(db).remove(owner, connector, ids);
    }
    for (const doc of docs) chunks.run(doc);
    for (const doc of docs) row.run(doc);
  })();
}

/** A record as it is stored (sealed), if it is. */
export function sealedRecord(ctx: IndexContext, doc: number): Uint8Array | undefined {
  return ctx.db.query<{ record: Uint8Array }, [number]>("SELECT record FROM connector_docs WHERE doc = ?").get(doc)?.record;
}

/** A record's sealed bytes, opened. */
export function openRecord(ctx: Pick<IndexContext, "keys">, doc: number, sealed: Uint8Array): SourceRecord {
  return JSON.parse(ctx.keys.open(sealed, `doc/${doc}`)) as SourceRecord;
}

/**
 * Characters of records (all their texts: openedChars) the opened-records memo keeps, all indexes together:
 * 12-24 MB of strings. Opening (AES-GCM, then JSON.parse) was 9-11% of a question's serving-thread
 * time, and most of a question's candidates were candidates of the questions before it.
 * The Enron maildir's records hold ~12 M: with 4 M kept, opening was still a third of the serving
 * thread's time over the answer evaluation's questions (34.3 ms a question; 20.6 with 12 M).
 */
export const OPENED_RECORDS_CHARS = 12_000_000;

/** What an opened record holds beyond its texts (its fields' names, the objects themselves), counted in its size. */
const RECORD_OVERHEAD = 256;

/**
 * The characters an opened record holds: every text of it, its metadata's too (a mail's To and Cc
 * headers are as long as its sender makes them), so that the memo's bound holds whatever the record.
 */
function openedChars(r: SourceRecord): number {
  let chars = r.id.length + r.title.length + r.content.length + r.source_url.length + r.path.length + RECORD_OVERHEAD;
  for (const [name, value] of Object.entries(r.metadata)) chars += name.length + (typeof value === "string" ? value.length : 8);
  return chars;
}

/**
 * Records opened, each kept while its row holds the same sealing (aead.ts sealingOf: a row written
 * again is sealed anew, with a fresh nonce; its nonce and tag, not a hash of all its bytes, which
 * was 2.9 of the serving thread's ms a question under load), keyed by database, index and row: no cached record is
 * given for a row the reader did not read, so a removed record, or a deleted owner's (their rows
 * go with their key), is never given from it. Shared, so frozen (frozen()).
 */
const opened = new RecordMemo<SourceRecord>(OPENED_RECORDS_CHARS, openedChars);
const databaseIds = new WeakMap<Database, number>();
let databasesSeen = 0;
function databaseId(db: Database): number {
  let id = databaseIds.get(db);
  if (id === undefined) databaseIds.set(db, (id = ++databasesSeen));
  return id;
}

/** A record shared between questions, made read-only: a change would reach every later question's copy. */
function frozen(record: SourceRecord): SourceRecord {
  Object.freeze(record.metadata);
  return Object.freeze(record);
}

/** Records by their doc, opened from their rows as read (or as opened before, while their rows are the same). */
export function openRecords(ctx: IndexContext, rows: Map<number, Uint8Array>): Map<number, SourceRecord> {
  return openRecordsAt(`${databaseId(ctx.db)}\u0000${ctx.owner}\u0000`, ctx, rows);
}

/**
 * The same for the index at `at` (a database's and index's key in the memo: the shared store
 * keys its own, its rows numbered by one sequence for every node, each read again before it is
 * given from here, D33).
 */
export function openRecordsAt(at: string, ctx: Pick<IndexContext, "keys">, rows: Map<number, Uint8Array>): Map<number, SourceRecord> {
  const records = new Map<number, SourceRecord>();
  for (const [doc, sealed] of rows)
    records.set(
      doc,
      opened.get(`${at}${doc}`, sealingOf(sealed), () => frozen(openRecord(ctx, doc, sealed))),
    );
  return records;
}

export function countRecords(ctx: IndexContext): number {
  const shown = visible(ctx);
  return ctx.db
    .query<{ n: number }, Array<string | number>>(`SELECT count(*) AS n FROM connector_docs d WHERE owner = ?${shown.sql}`)
    .get(ctx.owner, ...shown.params)!.n;
}
