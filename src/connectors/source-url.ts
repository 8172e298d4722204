// The source_url a user is shown for a record (issue 13 finding 5). Each connector kind writes
// its records' URLs from its own config: imap://user@host:port/mailbox;UIDVALIDITY=v/;UID=n,
// postgres://host:port/db#table/id, file:///absolute/path. For a user's own connector that is
// where the record lives, and theirs to see. An operator's connector (CORPUS_CONNECTORS_FILE)
// is shared by every user, who is shown its id, kind, label and status only, never its account,
// host, database or path: its records are cited as corpus://<connector id>/<the record's path
// inside the connector> (D8 `path`), unless the operator gave the table a public URL template
// (D18 `url`, e.g. https://shop.example/orders/{id}), which is meant to be shown. Whoever owns
// the connector, no source_url carries a password.
import type { SourceRecord } from "./types";

export const CITATION_SCHEME = "corpus:";

/** Whose connector a record came from. */
export interface RecordOrigin {
  id: string;
  owner: "user" | "operator";
}

/**
 * corpus://<connector>/<path>, each segment of the path percent-encoded but for the characters a
 * path segment may hold as they are (RFC 3986 pchar: sub-delims, ":" and "@"), so a mail's
 * `INBOX;UIDVALIDITY=v/;UID=n` (RFC 5092) reads as written.
 */
export function citation(connectorId: string, path: string): string {
  return `${CITATION_SCHEME}//${connectorId}/${path.split("/").map(pathSegment).join("/")}`;
}
const pathSegment = (s: string) =>
  encodeURIComponent(s).replace(/%(24|26|2B|2C|3B|3D|3A|40)/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));

/** `url` without a password (and so with no credentials but a user name at most). */
function withoutPassword(url: string): string {
  const at = url.indexOf("@");
  if (at < 0) return url;
  try {
    const u = new URL(url);
    if (!u.password) return url;
    u.password = "";
    return u.href;
  } catch {
    return url;
  }
}

const isWebUrl = (url: string) => /^https?:\/\//i.test(url);

/** The source_url users are shown for `record` of `origin`. */
export function sourceUrlFor(origin: RecordOrigin, record: SourceRecord): string {
  if (origin.owner === "operator")
    return isWebUrl(record.source_url) ? withoutPassword(record.source_url) : citation(origin.id, record.path);
  return withoutPassword(record.source_url);
}

/**
 * The shown copies of frozen records (a local index's, opened once per version: documents.ts
 * openRecords), made once each: citing every candidate of every question again, with a copy of
 * its record, was ~6% of the serving thread's CPU (issue 36). A frozen record's source_url and path
 * cannot change, so neither can its copy, frozen too (record-memo.ts then knows it met again).
 */
const shownCopies = new WeakMap<SourceRecord, { origin: RecordOrigin; shown: SourceRecord }>();

/** `record` as users are shown it: the same object when its source_url needs no change. */
export function shownRecord(origin: RecordOrigin, record: SourceRecord): SourceRecord {
  const known = shownCopies.get(record);
  if (known && known.origin.id === origin.id && known.origin.owner === origin.owner) return known.shown;
  const url = sourceUrlFor(origin, record);
  const shown = url === record.source_url ? record : { ...record, source_url: url };
  if (Object.isFrozen(record) && Object.isFrozen(record.metadata))
    shownCopies.set(record, { origin: { id: origin.id, owner: origin.owner }, shown: Object.freeze(shown) });
  return shown;
}
