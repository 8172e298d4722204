// The records of an index: sealed with the owner's key and bound to their row, their words
// blinded into the word index, their chunks listed (to be embedded), keyed by a keyed hash of
// the source they were read from, with its size and mtime.
import type { Database } from "bun:sqlite";
import { TERMS_FORMAT } from "../index-terms";
import { Turns } from "../turns";
import type { SourceRecord } from "../types";
import type { IndexContext } from "./context";
import type { ScanEntry } from "./sync";

/** Known sources by their keys (a keyed hash), with the size and mtime last read. */
export function knownSources(ctx: IndexContext): Map<string, { size: number; mtime: number }> {
  const rows = ctx.db
    .query<{ source: string; size: number; mtime: number }, [string]>(
      "SELECT DISTINCT source, size, mtime FROM connector_docs WHERE owner = ?",
    )
    .all(ctx.owner);
  return new Map(rows.map((r) => [r.source, { size: r.size, mtime: r.mtime }]));
}

/** A record made ready to store (prepareRecords): its words blinded, its number of chunks, it sealed to its row. */
interface PreparedRecord {
  title: string;
  content: string;
  chunks: number;
  sealed: Buffer;
}

/** Records made ready to store, their rows from `firstDoc` on (each sealed bound to its row). */
export interface PreparedRecords {
  firstDoc: number;
  records: PreparedRecord[];
}

/** The row the next record stored takes. */
const nextDoc = (db: Database) => db.query<{ n: number }, []>("SELECT coalesce(max(doc), 0) + 1 AS n FROM connector_docs").get()!.n;

/**
 * `records` made ready for putRecords, the event loop turning whenever `turns`' budget is spent
 * (D31): words blinded (TermBlinder.textInTurns), chunks counted (the chunker tokenizes) and each
 * sealed to the row it will take, so that the transaction only inserts. 100,000 tiny records of
 * an mbox were blinded, chunked, sealed and stored in one go, holding the serving thread ~10 s.
 */
export async function prepareRecords(ctx: IndexContext, records: SourceRecord[], turns = new Turns()): Promise<PreparedRecords> {
  const { keys } = ctx;
  const words: { title: string; content: string; chunks: number }[] = [];
  for (const r of records) {
    const title = await keys.blinder.textInTurns(r.title, turns);
    const content = await keys.blinder.textInTurns(r.content, turns);
    words.push({ title, content, chunks: ctx.chunker(r).length });
    await turns.maybe();
  }
  // Rows are taken from here on unless another source takes one meanwhile (then putRecords seals again).
  const firstDoc = nextDoc(ctx.db);
  const out: PreparedRecord[] = [];
  for (const [i, r] of records.entries()) {
    out.push({ ...words[i]!, sealed: keys.seal(JSON.stringify(r), `doc/${firstDoc + i}`) });
    await turns.maybe();
  }
  return { firstDoc, records: out };
}

/** `records` made ready for putRecords in one go, from row `firstDoc` on (few records; or `prepared`, sealed to rows taken since, sealed again). */
function prepareNow(ctx: IndexContext, records: SourceRecord[], firstDoc: number, prepared?: PreparedRecords): PreparedRecords {
  const { keys } = ctx;
  return {
    firstDoc,
    records: records.map((r, i) => ({
      ...(prepared?.records[i] ?? {
        title: keys.blinder.text(r.title),
        content: keys.blinder.text(r.content),
        chunks: ctx.chunker(r).length,
      }),
      sealed: keys.seal(JSON.stringify(r), `doc/${firstDoc + i}`),
    })),
  };
}

/** Whether another source took a row `prepared` were sealed to (since prepareRecords). */
const rowsTaken = (db: Database, prepared: PreparedRecords) =>
  db
    .query<{ n: number }, [number, number]>("SELECT count(*) AS n FROM connector_docs WHERE doc BETWEEN ? AND ?")
    .get(prepared.firstDoc, prepared.firstDoc + prepared.records.length - 1)!.n > 0;

/**
 * Records per transaction while a source's records are written or removed (D31): ~10 ms of tiny
 * records here (100,000 of an mbox in one transaction held the serving thread ~1.5 s, ~3.2 s
 * replacing them); fewer once the turn's budget is spent (long records, many chunks).
 */
export const RECORDS_PER_TRANSACTION = 500;

/**
 * Where a source's new records are written, a transaction at a time, until all are (then switched
 * in at once: readers, which all ask for their index's owner, never see half a source, nor none,
 * nor both its old and new records); and where records put aside wait to be removed a
 * transaction at a time. No connector's key: a connector's id never starts with ":".
 */
export const stagedOwner = (owner: string) => `${owner}/:staged`;
export const retiredOwner = (owner: string) => `${owner}/:retired`;

/** Records `records[from..to)` ready to insert: `prepared`'s if their rows are still free, else sealed again to the next free ones. */
function readyBatch(ctx: IndexContext, records: SourceRecord[], from: number, to: number, prepared?: PreparedRecords): PreparedRecords {
  const slice = prepared && { firstDoc: prepared.firstDoc + from, records: prepared.records.slice(from, to) };
  if (slice && !rowsTaken(ctx.db, slice)) return slice;
  return prepareNow(ctx, records.slice(from, to), nextDoc(ctx.db), slice);
}

/**
 * Replaces every record of `entry.source` with `records` (`prepared`, when given, are they made
 * ready: prepareRecords). They are written under the staged key in transactions of at most
 * RECORDS_PER_TRANSACTION records (fewer once the turn's budget is spent), the event loop turning
 * between two (D31), then switched in at once, the old ones put aside and removed the same way. Once `stopped` says so, nothing more is
 * written: what was staged stays hidden until the next put or sync removes it (as after a crash).
 * Whether the records were switched in.
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
  const staged = stagedOwner(owner);
  // Left by a put stopped or killed on the way.
  if (!(await removeUnfinished(ctx, stopped, turns))) return false;
  const insertDoc = db.query(
    "INSERT INTO connector_docs (doc, owner, source, size, mtime, record_date, terms_format, record) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
  );
  const insertTerms = db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)");
  const insertChunk = db.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (?, ?, ?)");
  for (let from = 0; from < records.length; ) {
    if (stopped()) return false;
    const to = Math.min(records.length, from + RECORDS_PER_TRANSACTION);
    from = db.transaction(() => {
      const ready = readyBatch(ctx, records, from, to, prepared);
      let i = 0;
      while (i < ready.records.length) {
        const doc = ready.firstDoc + i;
        const p = ready.records[i]!;
        insertDoc.run(doc, staged, source, entry.size, entry.mtime, records[from + i]!.date, TERMS_FORMAT, p.sealed);
        insertTerms.run(doc, p.title, p.content);
        for (let ord = 0; ord < p.chunks; ord++) insertChunk.run(doc, staged, ord);
        i++;
        if (turns.due()) break;
      }
      return from + i;
    })();
    // Between two transactions only: a source of one batch is written as it was read.
    if (from < records.length) await turns.next();
  }
  if (stopped()) return false;
  db.transaction(() => {
    retire(ctx, source);
    db.query("UPDATE connector_chunks SET owner = ? WHERE owner = ?").run(owner, staged);
    db.query("UPDATE connector_docs SET owner = ? WHERE owner = ?").run(owner, staged);
  })();
  await removeOwner(db, retiredOwner(owner), stopped, turns);
  return true;
}

/** Puts the records of a source (by its key) aside, in one statement a table: readers no longer see them; removeUnfinished removes them. */
function retire(ctx: IndexContext, source: string): void {
  const retired = retiredOwner(ctx.owner);
  ctx.db
    .query("UPDATE connector_chunks SET owner = ? WHERE doc IN (SELECT doc FROM connector_docs WHERE owner = ? AND source = ?)")
    .run(retired, ctx.owner, source);
  ctx.db.query("UPDATE connector_docs SET owner = ? WHERE owner = ? AND source = ?").run(retired, ctx.owner, source);
}

/** Removes what a put or a removal left staged or put aside (stopped, or killed), a transaction at a time; false if stopped meanwhile. */
export async function removeUnfinished(ctx: IndexContext, stopped: () => boolean = () => false, turns = new Turns()): Promise<boolean> {
  return (
    (await removeOwner(ctx.db, stagedOwner(ctx.owner), stopped, turns)) && removeOwner(ctx.db, retiredOwner(ctx.owner), stopped, turns)
  );
}

/** Removes every record of `owner`, RECORDS_PER_TRANSACTION at a time with a turn between; false if stopped meanwhile. */
async function removeOwner(db: Database, owner: string, stopped: () => boolean, turns: Turns): Promise<boolean> {
  const batch = db.query<{ doc: number }, [string, number]>("SELECT doc FROM connector_docs WHERE owner = ? LIMIT ?");
  for (;;) {
    if (stopped()) return false;
    const docs = batch.all(owner, RECORDS_PER_TRANSACTION).map((d) => d.doc);
    if (docs.length === 0) return true;
    removeDocs(db, docs);
    if (docs.length < RECORDS_PER_TRANSACTION) return true;
    await turns.next();
  }
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
      }
      mark.run(TERMS_FORMAT, doc);
      done++;
      blinded += r.title.length + r.content.length;
    }
  })();
  return done;
}

/** A record's words, blinded; none if they cannot be cut (its old ones stay). */
function blindedWords(keys: IndexContext["keys"], r: SourceRecord): { title: string; content: string } | undefined {
  try {
    return { title: keys.blinder.text(r.title), content: keys.blinder.text(r.content) };
  } catch (error) {
    if (error instanceof RangeError) return undefined;
    throw error;
  }
}

/** Removes every record of a source, by its key: put aside at once, then removed a transaction at a time (false if stopped meanwhile). */
export async function removeSource(ctx: IndexContext, source: string, stopped: () => boolean = () => false): Promise<boolean> {
  ctx.db.transaction(() => retire(ctx, source))();
  return removeOwner(ctx.db, retiredOwner(ctx.owner), stopped, new Turns());
}

/**
 * Removes records: their words, chunks, vectors and rows, in one transaction, a table at a time:
 * deleting from each table in turn for each record took ~5x as long (100,000 records of an mbox:
 * ~8 s against ~1.6 s, the word index's deletes interleaved with the others').
 */
export function removeDocs(db: Database, docs: number[]): void {
  if (docs.length === 0) return;
  const terms = db.query("DELETE FROM connector_terms WHERE rowid = ?");
  const chunksOf = db.query<{ chunk: number }, [number]>("SELECT chunk FROM connector_chunks WHERE doc = ?");
  const vector = db.query("DELETE FROM connector_vec WHERE chunk_id = ?");
  const chunks = db.query("DELETE FROM connector_chunks WHERE doc = ?");
  const row = db.query("DELETE FROM connector_docs WHERE doc = ?");
  db.transaction(() => {
    for (const doc of docs) terms.run(doc);
    for (const doc of docs) for (const { chunk } of chunksOf.all(doc)) vector.run(chunk);
    for (const doc of docs) chunks.run(doc);
    for (const doc of docs) row.run(doc);
  })();
}

/** A record as it is stored (sealed), if it is. */
export function sealedRecord(ctx: IndexContext, doc: number): Uint8Array | undefined {
  return ctx.db.query<{ record: Uint8Array }, [number]>("SELECT record FROM connector_docs WHERE doc = ?").get(doc)?.record;
}

/** A record's sealed bytes, opened. */
export function openRecord(ctx: IndexContext, doc: number, sealed: Uint8Array): SourceRecord {
  return JSON.parse(ctx.keys.open(sealed, `doc/${doc}`)) as SourceRecord;
}

/** Records by their doc, opened, in one read. */
export function openRecords(ctx: IndexContext, docs: number[]): Map<number, SourceRecord> {
  const rows = ctx.db
    .query<{ doc: number; record: Uint8Array }, [string]>(
      "SELECT doc, record FROM connector_docs WHERE doc IN (SELECT value FROM json_each(?))",
    )
    .all(JSON.stringify(docs));
  return new Map(rows.map((r) => [r.doc, openRecord(ctx, r.doc, r.record)]));
}

export function countRecords(ctx: IndexContext): number {
  return ctx.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_docs WHERE owner = ?").get(ctx.owner)!.n;
}
