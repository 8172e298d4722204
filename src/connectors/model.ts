// Connector schemas (D10, D18): one TypeBox schema per kind's config, used to validate what
// users add and what the operator file lists, and to write the OpenAPI document.
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { CONNECTOR_ID_PATTERN } from "../ids";
import { RATE_WINDOW_MS } from "./progress";
import { CONNECTOR_KINDS } from "./types";

export { CONNECTOR_ID_PATTERN };

const Identifier = Type.String({
  pattern: "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)?$",
  maxLength: 128,
  description: "table or column name",
});

export const FolderConfig = Type.Object(
  { path: Type.String({ minLength: 1, maxLength: 4096, description: "absolute folder path" }) },
  { additionalProperties: false },
);

export const ImapConfigSchema = Type.Object(
  {
    host: Type.String({ minLength: 1, maxLength: 253 }),
    port: Type.Integer({ minimum: 1, maximum: 65535, default: 993 }),
    secure: Type.Boolean({ default: true, description: "TLS from the start (port 993)" }),
    user: Type.String({ minLength: 1, maxLength: 256 }),
    password: Type.String({ maxLength: 1024, description: "stored encrypted, never returned" }),
    mailbox: Type.String({ minLength: 1, maxLength: 256, default: "INBOX" }),
  },
  { additionalProperties: false },
);

export const SqlTableSchema = Type.Object(
  {
    name: Identifier,
    id: Identifier,
    title: Identifier,
    text: Type.Array(Identifier, { minItems: 1, maxItems: 32 }),
    date: Type.Optional(Identifier),
    url: Type.Optional(Type.String({ pattern: "^https?://", maxLength: 2048, description: "source_url template with {id}" })),
  },
  { additionalProperties: false },
);

export const SqlConfigSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 4096, description: "a SQLite file path or a postgres:// URL (stored encrypted)" }),
    tables: Type.Array(SqlTableSchema, { minItems: 1, maxItems: 50 }),
  },
  { additionalProperties: false },
);

export const CONFIG_SCHEMAS: Record<(typeof CONNECTOR_KINDS)[number], TSchema> = {
  maildir: FolderConfig,
  files: FolderConfig,
  imap: ImapConfigSchema,
  sql: SqlConfigSchema,
};

export const CreateConnectorBody = t.Object(
  {
    id: t.String({ pattern: CONNECTOR_ID_PATTERN, description: "chosen by the user; lower-case letters, digits, _ and -" }),
    kind: t.UnionEnum([...CONNECTOR_KINDS]),
    label: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    config: t.Record(t.String(), t.Unknown(), {
      description: "per kind: maildir/files {path}; imap {host, port, secure, user, password, mailbox}; sql {url, tables}",
    }),
  },
  { additionalProperties: false },
);
export type CreateConnector = Static<typeof CreateConnectorBody>;

export const UpdateConnectorBody = t.Object(
  {
    label: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    config: t.Optional(
      t.Record(t.String(), t.Unknown(), {
        description: "fields to change, merged over the stored config; a secret left out (or sent back as shown, ***) is kept",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type UpdateConnector = Static<typeof UpdateConnectorBody>;

/** A phase under way (progress.ts ProgressView); absent once the connector is `ok` or in `error`. */
export const ConnectorProgress = t.Object(
  {
    phase: t.UnionEnum(["indexing", "embedding"], {
      description: "indexing: files read into the word index; embedding: chunks given vectors",
    }),
    unit: t.UnionEnum(["files", "chunks"], { description: "what done and total count: files while indexing, chunks while embedding" }),
    done: Type.Integer({ minimum: 0 }),
    total: Type.Integer({ minimum: 0 }),
    rate_per_second: t.Union([Type.Number({ minimum: 0 }), t.Null()], {
      description: `units per second over the last ${RATE_WINDOW_MS / 1000} s; null until the phase has done something`,
    }),
    eta_seconds: t.Union([Type.Integer({ minimum: 0 }), t.Null()], { description: "seconds left at that rate; null while unknown" }),
    started_at: t.String({ description: "when the phase started (ISO 8601)" }),
  },
  { additionalProperties: false },
);

export const ConnectorView = t.Object({
  id: t.String(),
  kind: t.String(),
  label: t.String(),
  owner: t.UnionEnum(["user", "operator"]),
  status: t.UnionEnum(["ok", "indexing", "embedding", "error", "checking"], {
    description:
      "indexing while records are read, embedding while chunks wait for vectors, ok once both are done, error with a reason; checking while the first check of a source has not answered yet",
  }),
  reason: t.Optional(t.String()),
  records: t.Optional(Type.Integer()),
  indexed: t.Optional(
    t.Object({ chunks: Type.Integer(), embedded: Type.Integer() }, { description: "ahead-of-time embedding: chunks embedded of total" }),
  ),
  progress: t.Optional(ConnectorProgress),
  config: t.Optional(
    t.Record(t.String(), t.Unknown(), { description: "the configuration without secrets; absent on operator connectors" }),
  ),
  created_at: t.Optional(t.String()),
});
export type ConnectorViewT = Static<typeof ConnectorView>;

export const ConnectorList = t.Object({ connectors: t.Array(ConnectorView) });
export const DeletedConnector = t.Object({ id: t.String(), deleted: t.Literal(true) });
