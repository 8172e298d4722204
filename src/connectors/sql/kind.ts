// `sql` (D18, D19): tables of a SQLite file or a PostgreSQL, MySQL or MariaDB database, read where they are.
import { DomainError } from "../../errors";
import { defineKind } from "../kind";
import { SqlConfigSchema } from "./config";
import { holdsRedacted, redactUrl, SqlConnector } from "./connector";
import { isServerUrl, parseServerUrl, serverEngine } from "./server-url";

export const sqlKind = defineKind({
  title: "SQL database",
  schema: SqlConfigSchema,
  indexedLocally: false,
  datesAreFileTimes: false,
  create: (config, { check, pin }) => new SqlConnector(config, check, { pin }),
  redact: (config) => ({ ...config, url: redactUrl(config.url) }),
  // A SQLite file is a local path, under the user's roots like a folder (D23).
  localPath: (config) => (isServerUrl(config.url) ? undefined : "url"),
  // An unknown scheme is refused here, naming it (serverEngine), before anything takes it for a path.
  remoteHost: (config) => (serverEngine(config.url) ? { host: parseServerUrl(config.url).host, field: "config.url" } : undefined),
  // The URL sent back as shown (its password ***) keeps the stored one. Only where it went before:
  // with anything else of the URL changed (server, port, user, database, parameters) the password
  // is needed again, as for IMAP; `***` itself is never stored as a password (issue 35 item 7).
  keepSecrets(change, stored) {
    if (typeof change.url !== "string" || !holdsRedacted(change.url)) return change;
    if (redactUrl(change.url) === redactUrl(stored.url)) return { ...change, url: stored.url };
    throw new DomainError(
      "invalid",
      "config.url: give the password again to change the URL; the stored one is sent only where it was sent before",
    );
  },
  form: [
    {
      name: "url",
      label: "Database",
      input: "text",
      placeholder: "postgres://reader:…@db:5432/shop, mysql://reader:…@db:3306/shop or a SQLite path",
    },
    {
      name: "tables",
      label: "Tables (JSON)",
      input: "json",
      initial: JSON.stringify([
        { name: "invoice", id: "invoice_id", title: "customer", text: ["customer", "total"], date: "invoice_date" },
      ]),
    },
  ],
});
