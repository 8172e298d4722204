// The records of an index: sealed with the owner's key and bound to their row, their words
// blinded into the word index, their chunks listed (to be embedded), keyed by a keyed hash of
// the source they were read from, with its size and mtime.
import type { Database } from "bun:sqlite";
import { TERMS_FORMAT } from "../index-terms";
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

/** A record's words as the index stores them (blinded). */
export interface BlindedWords {
  title: string;
  content: string;
}

/** The words of `records`, blinded a slice at a time (TermBlinder.textInTurns), for putRecords. */
export async function blindInTurns(ctx: IndexContext, records: SourceRecord[]): Promise<BlindedWords[]> {
  const out: BlindedWords[] = [];
  for (const r of records) out.push({ title: ctx.keys.blinder.text(r.title), content: await ctx.keys.blinder.textInTurns(r.content) });
  return out;
}

/** Replaces every record of `entry.source` with `records`; `words`, when given, are theirs blinded (blindInTurns). */
export function putRecords(ctx: IndexContext, entry: ScanEntry, records: SourceRecord[], words?: BlindedWords[]): void {
  const { db, owner, keys } = ctx;
  const source = keys.blinder.source(entry.source);
  db.transaction(() => {
    removeSource(ctx, source);
    const insertDoc = db.query<{ doc: number }, [string, string, number, number, string | null, number]>(
      "INSERT INTO connector_docs (owner, source, size, mtime, record_date, terms_format, record) VALUES (?, ?, ?, ?, ?, ?, x'') RETURNING doc",
    );
    const sealDoc = db.query("UPDATE connector_docs SET record = ? WHERE doc = ?");
    const insertTerms = db.query("INSERT INTO connector_terms (rowid, title, content) VALUES (?, ?, ?)");
    const insertChunk = db.query("INSERT INTO connector_chunks (doc, owner, ord) VALUES (?, ?, ?)");
    for (const [i, r] of records.entries()) {
      const { doc } = insertDoc.get(owner, source, entry.size, entry.mtime, r.date, TERMS_FORMAT)!;
      sealDoc.run(keys.seal(JSON.stringify(r), `doc/${doc}`), doc);
      const w = words?.[i];
      insertTerms.run(doc, w?.title ?? keys.blinder.text(r.title), w?.content ?? keys.blinder.text(r.content));
      const n = ctx.chunker(r).length;
      for (let ord = 0; ord < n; ord++) insertChunk.run(doc, owner, ord);
    }
  })();
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

/** Removes every record of a source, by its key. */
export function removeSource(ctx: IndexContext, source: string): void {
  const docs = ctx.db
    .query<{ doc: number }, [string, string]>("SELECT doc FROM connector_docs WHERE owner = ? AND source = ?")
    .all(ctx.owner, source);
  for (const { doc } of docs) removeDoc(ctx.db, doc);
}

/** Removes one record: its words, chunks, vectors and row. */
export function removeDoc(db: Database, doc: number): void {
  db.query("DELETE FROM connector_terms WHERE rowid = ?").run(doc);
  for (const { chunk } of db.query<{ chunk: number }, [number]>("SELECT chunk FROM connector_chunks WHERE doc = ?").all(doc)) {
    db.query("DELETE FROM connector_vec WHERE chunk_id = ?").run(chunk);
  }
  db.query("DELETE FROM connector_chunks WHERE doc = ?").run(doc);
  db.query("DELETE FROM connector_docs WHERE doc = ?").run(doc);
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
