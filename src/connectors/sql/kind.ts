// `sql` (D18, D19): tables of a SQLite file or a PostgreSQL database, read where they are.
import { defineKind } from "../kind";
import { SqlConfigSchema } from "./config";
import { isPostgresUrl, redactUrl, SqlConnector } from "./connector";
import { parsePostgresUrl } from "./postgres-url";

export const sqlKind = defineKind({
  title: "SQL database",
  schema: SqlConfigSchema,
  indexedLocally: false,
  datesAreFileTimes: false,
  create: (config, { check, pin }) => new SqlConnector(config, check, { pin }),
  redact: (config) => ({ ...config, url: redactUrl(config.url) }),
  // A SQLite file is a local path, under the user's roots like a folder (D23).
  localPath: (config) => (isPostgresUrl(config.url) ? undefined : "url"),
  remoteHost: (config) => (isPostgresUrl(config.url) ? { host: parsePostgresUrl(config.url).host, field: "config.url" } : undefined),
  // The URL sent back as shown (its password ***) keeps the stored one, for the same server only.
  keepSecrets: (change, stored) =>
    typeof change.url === "string" && change.url.includes("***") && redactUrl(change.url) === redactUrl(stored.url)
      ? { ...change, url: stored.url }
      : change,
  form: [
    { name: "url", label: "Database", input: "text", placeholder: "postgres://reader:…@db:5432/shop or a SQLite path" },
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
