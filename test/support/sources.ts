// Connector records the tests hand to the service: the operator's connectors file and the
// test Dovecot's account as an IMAP connector's config.
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
