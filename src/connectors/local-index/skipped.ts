// Sources left out past a bound or over their reading budget (SourceSkipped, D31), kept in the
// index's own table: a restart does not read them again (a hostile file burnt its 5 s budget
// again after each restart, while it was kept in memory). Each is keyed by the source's key (a
// keyed hash: no path is kept) with the size and mtime it was skipped at, so a changed file is
// read again; its name and reason are sealed with the owner's key, bound to their row, for the
// connector's status to name it.
import type { IndexContext } from "./context";
import type { ScanEntry } from "./sync";

/** A skipped source's name and why, as the status shows them. */
export interface SkippedNote {
  name: string;
  reason: string;
}

/** What a skipped source's note is sealed to (both stores). */
export const sealedAt = (source: string) => `skipped/${source}`;

/** Skipped sources by their keys, with the size and mtime they were skipped at. */
export function skippedSources(ctx: IndexContext): Map<string, { size: number; mtime: number }> {
  const rows = ctx.db
    .query<{ source: string; size: number; mtime: number }, [string]>("SELECT source, size, mtime FROM connector_skipped WHERE owner = ?")
    .all(ctx.owner);
  return new Map(rows.map((r) => [r.source, { size: r.size, mtime: r.mtime }]));
}

/** `entry` (whose key is `source`) is skipped for `reason` until it changes. */
export function skipSource(ctx: IndexContext, source: string, entry: ScanEntry, reason: string): void {
  const note = ctx.keys.seal(JSON.stringify({ name: entry.source, reason } satisfies SkippedNote), sealedAt(source));
  ctx.db
    .query(
      `INSERT INTO connector_skipped (owner, source, size, mtime, note) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (owner, source) DO UPDATE SET size = excluded.size, mtime = excluded.mtime, note = excluded.note`,
    )
    .run(ctx.owner, source, entry.size, entry.mtime, note);
}

/** The source of key `source` is read again at the next scan (it changed or went). */
export function forgetSkipped(ctx: IndexContext, source: string): void {
  ctx.db.query("DELETE FROM connector_skipped WHERE owner = ? AND source = ?").run(ctx.owner, source);
}

export function countSkipped(ctx: IndexContext): number {
  return ctx.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_skipped WHERE owner = ?").get(ctx.owner)!.n;
}

/** The first `limit` skipped sources (in the order they were skipped), opened. */
export function skippedNotes(ctx: IndexContext, limit: number): SkippedNote[] {
  return ctx.db
    .query<{ source: string; note: Uint8Array }, [string, number]>(
      "SELECT source, note FROM connector_skipped WHERE owner = ? ORDER BY skip LIMIT ?",
    )
    .all(ctx.owner, limit)
    .map((r) => JSON.parse(ctx.keys.open(r.note, sealedAt(r.source))) as SkippedNote);
}
