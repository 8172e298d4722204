// The chunks of an index and their vectors: those still owed one, handed to the embedding
// worker a record at a time, and stored rotated by the owner's secret rotation (D25).
import type { KeyedVector } from "../../crypto/rotation";
import { connectorVectors } from "../../vectors/embedded";
import { splitPartition } from "../../vectors/sqlite";
import type { StoredVector } from "../../vectors/store";
import { Turns } from "../turns";
import type { IndexProgress } from "../types";
import type { IndexContext } from "./context";
import { chunkRow, openRecord, sealedRecord } from "./documents";

/** A chunk owed its vector: its number, its record and place in it, and that record as it was sealed when read. */
export interface OwedChunk {
  chunk: number;
  doc: number;
  ord: number;
  /** The record's sealed bytes (each seal has its own nonce): a record put again since is another. */
  sealed: Uint8Array;
}

/**
 * Chunks still without a vector, with the text to embed: `limit` of them, and the rest of the
 * last record's (a record's chunks go to the model together). Each text is the one stored with
 * the chunk (sealed), as the reading worker cut it (D31): opened, never cut again here. A chunk
 * stored before texts were (connectors-011) has its record cut by the chunker, once per call.
 */
export function pendingChunks(ctx: IndexContext, limit: number): Array<OwedChunk & { text: string }> {
  const { db } = ctx;
  type Row = { chunk: number; doc: number; ord: number; text: Uint8Array | null };
  const rows = db
    .query<Row, [string, number]>(
      "SELECT chunk, doc, ord, text FROM connector_chunks WHERE owner = ? AND embedded = 0 ORDER BY chunk LIMIT ?",
    )
    .all(ctx.owner, limit);
  const last = rows.at(-1);
  if (last && rows.length === limit)
    rows.push(
      ...db
        .query<Row, [number, number]>(
          "SELECT chunk, doc, ord, text FROM connector_chunks WHERE doc = ? AND embedded = 0 AND chunk > ? ORDER BY chunk",
        )
        .all(last.doc, last.chunk),
    );
  const records = new Map<number, { sealed: Uint8Array; texts?: string[] }>();
  const out: Array<OwedChunk & { text: string }> = [];
  for (const r of rows) {
    if (!records.has(r.doc)) records.set(r.doc, { sealed: sealedRecord(ctx, r.doc) ?? new Uint8Array() });
    const record = records.get(r.doc)!;
    // A record gone meanwhile has no texts: its chunks go below.
    if (!r.text && !record.texts) record.texts = record.sealed.length ? ctx.chunker(openRecord(ctx, r.doc, record.sealed)) : [];
    const text = r.text ? ctx.keys.open(r.text, chunkRow(r.doc, r.ord)) : record.texts![r.ord];
    if (text === undefined || !record.sealed.length) db.query("DELETE FROM connector_chunks WHERE chunk = ?").run(r.chunk);
    else out.push({ chunk: r.chunk, doc: r.doc, ord: r.ord, sealed: record.sealed, text });
  }
  return out;
}

/**
 * Stores vectors of chunks, rotated: only into a chunk that is still this index's, of the same
 * record (as it was sealed when read) and place, and owed its vector. One removed meanwhile is
 * skipped; its number, given again since to another index's chunk or to the record put again
 * (a file changed while its batch was in the worker), is not written into. Each record's seal is
 * read and compared once per batch, not once per chunk: compared in SQL for each of a 4 M
 * character mail's 64 chunks, it held the serving thread ~0.25 s of CPU a batch (D31, measured).
 */
export function setVectors(ctx: IndexContext, chunks: OwedChunk[], vectors: Float32Array[], rotated?: KeyedVector[]): void {
  const { db } = ctx;
  const owed = db.query<{ n: number }, [number, string, number, number]>(
    "SELECT 1 AS n FROM connector_chunks WHERE chunk = ? AND owner = ? AND doc = ? AND ord = ? AND embedded = 0",
  );
  const mark = db.query("UPDATE connector_chunks SET embedded = 1 WHERE chunk = ?");
  const rotation = ctx.keys.rotation();
  const { owner, connector } = splitPartition(ctx.owner);
  db.transaction(() => {
    const stored: StoredVector[] = [];
    const sameRecord = new Map<number, boolean>();
    chunks.forEach((c, i) => {
      let same = sameRecord.get(c.doc);
      if (same === undefined) {
        const sealed = sealedRecord(ctx, c.doc);
        same = sealed !== undefined && Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength).equals(c.sealed);
        sameRecord.set(c.doc, same);
      }
      if (!same || !owed.get(c.chunk, ctx.owner, c.doc, c.ord)) return;
      stored.push({ id: c.chunk, vector: rotated?.[i] ?? rotation.apply(vectors[i]!) });
      mark.run(c.chunk);
    });
    connectorVectors(db).put(owner, connector, stored);
  })();
}

/**
 * `vectors` rotated by the index's rotation (for setVectors), the event loop turning whenever
 * `turns`' budget is spent (D31): a long record's 64 chunks and the rest of a batch, rotated in
 * setVectors' transaction, were its largest part (~15-25 ms of one turn of the serving thread).
 */
export async function rotatedInTurns(
  ctx: Pick<IndexContext, "keys">,
  vectors: Float32Array[],
  turns = new Turns(),
): Promise<KeyedVector[]> {
  const rotation = ctx.keys.rotation();
  const out: KeyedVector[] = [];
  for (const v of vectors) {
    out.push(rotation.apply(v));
    await turns.maybe();
  }
  return out;
}

/** Chunks in all, and those with their vector: as counted when written (migration connectors-010), one row read. */
export function embeddingProgress(ctx: IndexContext): IndexProgress {
  const row = ctx.db
    .query<{ total: number; embedded: number }, [string]>("SELECT total, embedded FROM connector_chunk_counts WHERE owner = ?")
    .get(ctx.owner);
  return { total: row?.total ?? 0, embedded: row?.embedded ?? 0 };
}
