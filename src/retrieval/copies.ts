// Step 4: copies of one record (the same Message-ID, or the same title and text) collapse into
// the best of them, which lists where the others are; then at most so many per connector.
import type { RankedChunk } from "./types";

/** What makes two records copies of one: the same Message-ID, or the same title and text. */
function copyKeys(c: RankedChunk): string[] {
  const id = c.record.type === "email" ? String(c.record.metadata.message_id ?? "") : "";
  const body = c.record.content.replace(/\s+/g, " ").trim().toLowerCase();
  const text = `text:${c.record.title.toLowerCase().replace(/^((re|fw|fwd):\s*)+/, "")}\u0000${body}`;
  // A body too short to tell messages apart ("see attached") makes no copies by itself.
  const keys = body.length >= 40 ? [text] : [`record:${c.connectorId}\u0000${c.record.id}`];
  return id ? [`id:${id}`, ...keys] : keys;
}

/** Copies of one record (best first) collapse into the first, which lists where the others are. */
export function collapseCopies(sorted: RankedChunk[]): RankedChunk[] {
  const first = new Map<string, RankedChunk>();
  const out: RankedChunk[] = [];
  for (const c of sorted) {
    const keys = copyKeys(c);
    const kept = keys.map((k) => first.get(k)).find(Boolean);
    if (kept) {
      (kept.copies ??= []).push(c.record.source_url);
      continue;
    }
    for (const k of keys) first.set(k, c);
    out.push(c);
  }
  return out;
}

/** The best `perConnector` of each connector, in order. */
export function capPerConnector(sorted: RankedChunk[], perConnector: number): RankedChunk[] {
  const counts = new Map<string, number>();
  return sorted.filter((c) => {
    const n = counts.get(c.connectorId) ?? 0;
    counts.set(c.connectorId, n + 1);
    return n < perConnector;
  });
}
