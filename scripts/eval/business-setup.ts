// What the business evaluations share (business.ts ranks, answers.ts answers): the four sources a
// business user connects (the Enron maildir, the invoices folder, the SROIE receipts as text files,
// the Chinook shop), a real server over them indexed in $CORPUS_EVAL_DIR, the command line, and
// the unit a label names ("mail:<message>", "invoices:<name>", "receipts:<id>", "shop:<Table>/<id>").
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { chinookSource } from "../../test/support/chinook";
import { indexedServer } from "../bench/indexed-server";
import { invoicesFolder } from "../bench/invoices-folder";
import { receiptsFolder } from "../bench/receipts-folder";

const args = process.argv.slice(2);
export const option = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] ? args[i + 1]! : fallback;
};
export const flag = (name: string) => args.includes(`--${name}`);

export const data = join(import.meta.dir, "../../../shared/data");
/** The index (and its embeddings) is kept here between runs: both evaluations may share one. */
export const work = process.env.CORPUS_EVAL_DIR ?? "/tmp/corpus-eval-business";

// Copies of one mail (the same Message-ID, or the same text under another ID) are one answer: a
// label names a file, a ranking is judged by message, counting the first copy only.
const messageOf = new Map<string, string>();
const byBody = new Map<string, string>();
for (const f of readdirSync(join(data, "enron", "messages")).sort()) {
  const raw = readFileSync(join(data, "enron", "messages", f), "latin1");
  let id = /^Message-ID:\s*(\S+)/im.exec(raw.slice(0, 400))?.[1] ?? f;
  const body = raw
    .slice(raw.search(/\r?\n\r?\n/))
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase();
  if (body.length >= 40) {
    const first = byBody.get(body);
    if (first === undefined) byBody.set(body, id);
    else id = first;
  }
  messageOf.set(f.replace(/\.eml$/, ""), id);
}

/** The unit judged: a message, an invoice (its PDF, text and JSON are one), a receipt, a row. */
export function keyOf(connector: string, path: string): string {
  if (connector === "mail") return `mail:${messageOf.get(path.replace(/\.eml$/, "")) ?? path}`;
  if (connector === "invoices") return `invoices:${path.replace(/\..*$/, "")}`;
  if (connector === "receipts") return `receipts:${path.replace(/\.txt$/, "")}`;
  return `${connector}:${path}`;
}
export const connectorOfKey = (key: string) => key.slice(0, key.indexOf(":"));
/** A label's "mail:<file id>" or "invoices:<name>" as the unit judged. */
export const unitOf = (label: string) => {
  const c = connectorOfKey(label);
  return keyOf(c, label.slice(c.length + 1));
};

/** The accounting books of shared/data (beancount, Ledger, GnuCash, QIF, OFX) as one books connector: the answer evaluation's fifth source. */
export const booksSource = () => ({ id: "books", kind: "books", label: "Books", config: { path: join(data, "accounting") } });

/** A real server with the four sources connected by the operator (and `more`); the shop's `tables` as the evaluation reads them. */
export function businessServer(shopTables: object[], more: object[] = []) {
  // The receipts as a folder of text files, as a scanner would leave them; the invoices without
  // their fixtures' expected-field JSON (the labels) or derived copies.
  const receiptsDir = receiptsFolder(data, work);
  return indexedServer(
    work,
    [
      { id: "mail", kind: "maildir", label: "Enron mail", config: { path: join(data, "enron", "messages") } },
      { id: "invoices", kind: "files", label: "Invoices", config: { path: invoicesFolder(data, work) } },
      { id: "receipts", kind: "files", label: "Receipts", config: { path: receiptsDir } },
      chinookSource(shopTables, "shop", "Chinook"),
      ...more,
    ],
    "eval",
  );
}
