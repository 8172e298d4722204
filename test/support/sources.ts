// Connector records the tests hand to the service: the operator's connectors file, an operator's
// SQLite table, and the test Dovecot's account as an IMAP connector's config.
import { Database } from "bun:sqlite";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers";
import type { TestServers } from "./servers";

/** An operator connectors file (CORPUS_CONNECTORS_FILE) holding `sources`, in `dir`; returns its path. */
export function operatorFile(sources: object[], dir = tempDir("corpus-operator-")): string {
  const file = join(dir, "connectors.json");
  writeFileSync(file, JSON.stringify(sources));
  return file;
}

/** The test Dovecot's account as an IMAP connector's config (plain IMAP on loopback, its INBOX). */
export const imapConfig = ({ host, port, user, password }: TestServers["imap"], mailbox = "INBOX") => ({
  host,
  port,
  secure: false,
  user,
  password,
  mailbox,
});

/** The test Dovecot's INBOX as an operator's IMAP connector. */
export const imapSource = (imap: TestServers["imap"], id: string, label: string) => ({ id, kind: "imap", label, config: imapConfig(imap) });

/** The status of a source that answers: `ok`, or `embedding` while its newest records are embedded ahead (a live SQL source). */
export const ANSWERING = /^(ok|embedding)$/;

/** An SQL connector without a label (it shows its id). */
export const sqlSource = (id: string, url: string, tables: object[]) => ({ id, kind: "sql", config: { url, tables } });

/**
 * The environment that gives the operator an SQL connector `id` over a new SQLite file with one
 * table `table` (id, title, body) holding `rows` ([title, body] each, ids from 1).
 */
export function operatorSqliteTable(id: string, table: string, rows: Array<[title: string, body: string]>): Record<string, string> {
  const file = join(tempDir(`corpus-${id}-`), `${id}.sqlite`);
  const db = new Database(file);
  db.exec(`CREATE TABLE ${table} (id INTEGER PRIMARY KEY, title TEXT, body TEXT)`);
  const put = db.query(`INSERT INTO ${table} VALUES (?, ?, ?)`);
  db.transaction(() => rows.forEach(([title, body], i) => put.run(i + 1, title, body)))();
  db.close();
  return { CORPUS_CONNECTORS_FILE: operatorFile([sqlSource(id, file, [{ name: table, id: "id", title: "title", text: ["body"] }])]) };
}

/** A shop's orders as operatorSqliteTable takes them: `n` short ones, "order 1" on. */
export const shopOrders = (n: number) =>
  Array.from({ length: n }, (_, k): [string, string] => [`order ${k + 1}`, `Order ${k + 1} shipped to warehouse ${(k + 1) % 13}`]);
