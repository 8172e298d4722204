// A ranked record as shape C's answer reads it (answer.ts, D32): its text around the cited chunk,
// its ranking score and what names it (a title, a mail's sender, a document's first lines).
import type { AnswerSource } from "./answer";
import { recordKey } from "./record-memo";
import type { RankedChunk } from "./types";

/** The most of a record an answer reads: all of it, or this much around its cited chunk (a sentence cut at a chunk's end is read whole). */
const RECORD_PROBE = 8_000;
/** How much of a document's start names it (a receipt's merchant, an invoice's vendor). */
export const HEAD_CHARS = 200;

/** A ranked record as an answer reads it: its text around the cited chunk, its score and what names it. */
export function answerSourceOf(c: RankedChunk, meetsAmount: boolean): AnswerSource {
  const { content, title, type, metadata } = c.record;
  const at = Math.max(0, content.indexOf(c.text.trim().split("\n")[0]!.slice(0, 40)));
  const from = content.length <= RECORD_PROBE ? 0 : Math.max(0, Math.min(at - RECORD_PROBE / 4, content.length - RECORD_PROBE));
  const text = content.trim() ? content.slice(from, from + RECORD_PROBE) : c.text;
  const head = [title, metadata.from, type === "email" ? "" : content.slice(0, HEAD_CHARS)].join("\n");
  return { text, metadata, type, meetsAmount, score: c.score, head, key: recordKey(c.owner, c.connectorId, c.record.id) };
}
