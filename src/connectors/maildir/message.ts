// A mail's text and headers as a record, parsed with mailparser (headers, text and HTML parts,
// attachments' names, decoded charsets), and mbox files cut into their messages. Runs in the
// reading worker (reading/worker.ts), never on the thread that serves requests (D31).
import type { AddressObject } from "mailparser";
import { boundedText } from "../files/limits";
import type { SourceRecord } from "../types";

/**
 * Characters of a mail's HTML made into text by html-to-text; longer HTML has its tags dropped
 * instead. 24 MB of HTML in one mail took mailparser ~45 s and 2.6 GB (issue 35).
 */
export const MAX_MAIL_HTML_CHARS = 2 * 1024 * 1024;

/** HTML's text without its tags, in one pass (a tag is read up to the next `<` at most). */
const withoutTags = (html: string) => boundedText(html).replace(/<[^<>]*>/g, " ");

/** mboxrd: messages start at lines "From "; ">From " lines are unquoted one level. */
export function splitMbox(text: string): string[] {
  const messages: string[] = [];
  let current: string[] | undefined;
  for (const line of text.split("\n")) {
    if (line.startsWith("From ")) {
      if (current) messages.push(current.join("\n"));
      current = [];
      continue;
    }
    current?.push(/^>+From /.test(line) ? line.slice(1) : line);
  }
  if (current) messages.push(current.join("\n"));
  return messages;
}

const addresses = (a: AddressObject | AddressObject[] | undefined) =>
  a
    ? (Array.isArray(a) ? a : [a])
        .flatMap((x) => x.value.map((v) => v.address ?? v.name))
        .filter(Boolean)
        .join(", ")
    : "";

export async function parseMessage(raw: Buffer | string, id: string, path: string, url: string): Promise<SourceRecord> {
  // Loaded on first use: the parser takes ~0.1 s to load, which start-up need not pay.
  const { simpleParser } = await import("mailparser");
  const m = await simpleParser(raw, {
    skipHtmlToText: false,
    skipTextLinks: true,
    skipImageLinks: true,
    maxHtmlLengthToParse: MAX_MAIL_HTML_CHARS,
  });
  const from = addresses(m.from);
  const attachments = m.attachments
    .map((a) => a.filename)
    .filter(Boolean)
    .join(", ");
  // HTML too long (or nested deeper than 1,000 levels) is not made into text by mailparser: its tags are dropped here.
  const body = (m.text || (typeof m.html === "string" ? withoutTags(m.html) : "")).trim();
  return {
    id,
    title: m.subject?.trim() || "(no subject)",
    content: body,
    source_url: url,
    date: m.date && !Number.isNaN(m.date.getTime()) ? m.date.toISOString() : null,
    type: "email",
    path,
    metadata: {
      from,
      to: addresses(m.to),
      cc: addresses(m.cc),
      subject: m.subject ?? "",
      message_id: m.messageId ?? "",
      attachments,
    },
  };
}

/** Where a mail file's records are found: their id and path, and their address (`#n` after each for an mbox's n-th message). */
export interface MailPlace {
  id: string;
  url: string;
  /** An mbox file: its messages are cut apart first. */
  mbox: boolean;
}

/** The records of a mail file, one message at a time; `onRecord` is told after each. */
export async function mailRecords(raw: Buffer, place: MailPlace, onRecord: () => void = () => {}): Promise<SourceRecord[]> {
  if (!place.mbox) return [await parseMessage(raw, place.id, place.id, place.url)];
  const records: SourceRecord[] = [];
  for (const [i, part] of splitMbox(raw.toString("latin1")).entries()) {
    const n = `#${i + 1}`;
    records.push(await parseMessage(Buffer.from(part, "latin1"), `${place.id}${n}`, `${place.id}${n}`, `${place.url}${n}`));
    onRecord();
  }
  return records;
}
