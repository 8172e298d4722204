// The kinds table (issue 15 item 2): every connector kind corpus knows, by the name users give
// in `kind`. Adding a kind is a folder with its connector and its record (kind.ts), and one line here.
import { booksKind } from "./books/kind";
import { filesKind } from "./files/kind";
import { imapKind } from "./imap/kind";
import type { ConnectorKindRecord } from "./kind";
import { maildirKind } from "./maildir/kind";
import { sqlKind } from "./sql/kind";

export const KINDS = {
  imap: imapKind,
  maildir: maildirKind,
  files: filesKind,
  sql: sqlKind,
  books: booksKind,
} satisfies Record<string, ConnectorKindRecord>;

export type ConnectorKind = keyof typeof KINDS;
/** Every kind name, in the table's order (the first is the panel form's default). */
export const CONNECTOR_KINDS = Object.keys(KINDS) as [ConnectorKind, ...ConnectorKind[]];

export const isConnectorKind = (kind: unknown): kind is ConnectorKind => typeof kind === "string" && Object.hasOwn(KINDS, kind);
