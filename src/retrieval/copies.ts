// Step 4: copies of one record (the same Message-ID, or the same title and text) collapse into
// the best of them, which lists where the others are; then at most so many per connector.
import { RecordMemo, recordKey } from "./record-memo";
import type { RankedChunk } from "./types";

/** Characters of a text's start and of its end that tell texts apart before they are compared whole. */
const SIGNATURE_CHARS = 256;
/** A body shorter than this ("see attached") makes no copies by itself. */
const TELLING_BODY = 40;

const normalisedBody = (content: string) => content.replace(/\s+/g, " ").trim().toLowerCase();

/** Up to `n` characters that are not white space, lowercased (a final sigma as any sigma), from `text`. */
function solid(text: string, n: number, fromEnd: boolean): string {
  // A window of the text, widened while its white space leaves too few characters.
  for (let width = n * 4; ; width *= 4) {
    const window = fromEnd ? text.slice(-width) : text.slice(0, width);
    // Lowercased before it is cut: a letter may lowercase into two ("İ").
    const chars = window
      .toLowerCase()
      .replace(/\s+/g, "")
      .replace(/\u03c2/g, "\u03c3");
    if (chars.length >= n || window.length === text.length) return fromEnd ? chars.slice(-n) : chars.slice(0, n);
  }
}

/**
 * The first and last characters of a text that are not white space, lowercased: texts equal
 * but for white space and case have the same, so only texts that share it are compared whole
 * (normalising every candidate's whole text was a fifth of a question's ranking). `told` says
 * whether the start alone holds enough to tell texts apart.
 */
function signature(content: string): { sig: string; told: boolean } {
  const head = solid(content, SIGNATURE_CHARS, false);
  return { sig: `${head}\u0000${solid(content, SIGNATURE_CHARS, true)}`, told: head.length >= TELLING_BODY };
}

/** Characters of signatures kept (~520 each): ~7,500 records' (issue 36: a tenth of a question's ranking was making them again). */
const SIGNATURES_CHARS = 4_000_000;
/** Each record's signature, made once per version of its text (a frozen record met again: not hashed again). */
const signatures = new RecordMemo(SIGNATURES_CHARS, (s: ReturnType<typeof signature>) => s.sig.length, signature);

/**
 * What makes two records copies of one: the same title and text (white space and case aside),
 * however short the text when they also share a Message-ID and sender (one mail in two folders).
 * Never different texts: a Message-ID and a From are written by the sender, and anyone who saw
 * a thread could send another text under one of its IDs (the real one cut short, or with a P.S.)
 * and hide the real message behind theirs.
 */
interface CopyKeys {
  id?: string;
  /** The title and the text's signature: those that share it are compared whole. */
  text?: string;
  /**
   * A record that has no text key is a copy of itself only: the same record id (its chunks), and
   * the same text, compared as the others' are (two records under one id, a source read anew
   * after its text changed or a UID given to another mail, are two).
   */
  record?: string;
}

const contentOf = (r: RankedChunk["record"]) => r.content;

function copyKeys(c: RankedChunk, body: (c: RankedChunk) => string): CopyKeys {
  const id = c.record.type === "email" ? String(c.record.metadata.message_id ?? "") : "";
  const from = String(c.record.metadata.from ?? "").toLowerCase();
  const { sig, told } = signatures.getOfRecord(recordKey(c.owner, c.connectorId, c.record.id), c.record, contentOf);
  const title = c.record.title.toLowerCase().replace(/^((re|fw|fwd):\s*)+/, "");
  const telling = told || body(c).length >= TELLING_BODY;
  return {
    ...(id ? { id: `id:${from}\u0000${id}\u0000${title}` } : {}),
    ...(telling ? { text: `text:${title}\u0000${sig}` } : { record: `record:${c.owner}\u0000${c.connectorId}\u0000${c.record.id}` }),
  };
}

/** Two texts of one signature are the same text: as they are (most copies are), or once normalised. */
const sameText = (a: RankedChunk, b: RankedChunk, body: (c: RankedChunk) => string) =>
  a.record.content === b.record.content || body(a) === body(b);

/** Copies of one record (best first) collapse into the first, which lists where the others are. */
export function collapseCopies(sorted: RankedChunk[]): RankedChunk[] {
  const bodies = new Map<RankedChunk, string>();
  const body = (c: RankedChunk) => bodies.get(c) ?? bodies.set(c, normalisedBody(c.record.content)).get(c)!;
  const byId = new Map<string, RankedChunk[]>();
  const byRecord = new Map<string, RankedChunk[]>();
  const byText = new Map<string, RankedChunk[]>();
  const out: RankedChunk[] = [];
  for (const c of sorted) {
    const keys = copyKeys(c, body);
    const kept =
      (keys.id && byId.get(keys.id)?.find((k) => sameText(k, c, body))) ||
      (keys.text && byText.get(keys.text)?.find((k) => sameText(k, c, body))) ||
      (keys.record && byRecord.get(keys.record)?.find((k) => sameText(k, c, body)));
    if (kept) {
      (kept.copies ??= []).push(c.record.source_url);
      continue;
    }
    if (keys.id) byId.set(keys.id, [...(byId.get(keys.id) ?? []), c]);
    if (keys.record) byRecord.set(keys.record, [...(byRecord.get(keys.record) ?? []), c]);
    if (keys.text) byText.set(keys.text, [...(byText.get(keys.text) ?? []), c]);
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
