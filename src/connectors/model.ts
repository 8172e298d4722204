// The connector routes' schemas (D10, D18). Each kind's config schema is in its record (kinds.ts),
// which validates what users add and what the operator file lists.
import { type Static, Type } from "@sinclair/typebox";
import { t } from "elysia";
import { CONNECTOR_ID_PATTERN } from "../ids";
import { CONNECTOR_KINDS, KINDS } from "./kinds";
import { RATE_WINDOW_MS } from "./progress";

export { CONNECTOR_ID_PATTERN };

export const CreateConnectorBody = t.Object(
  {
    id: t.String({ pattern: CONNECTOR_ID_PATTERN, description: "chosen by the user; lower-case letters, digits, _ and -" }),
    kind: t.UnionEnum([...CONNECTOR_KINDS]),
    label: t.Optional(t.String({ minLength: 1, maxLength: 200 })),
    config: t.Record(t.String(), t.Unknown(), {
      description: `per kind: ${Object.entries(KINDS)
        .map(([kind, record]) => `${kind} {${Object.keys(record.schema.properties).join(", ")}}`)
        .join("; ")}`,
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
      description: "indexing: files read into the word index; embedding: chunks (or a live source's newest records) given vectors",
    }),
    unit: t.UnionEnum(["files", "chunks", "records"], {
      description:
        "what done and total count: files while indexing, chunks while embedding, records while a live source's newest are embedded ahead",
    }),
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

/** The OAuth grant of an IMAP connector that signs in with one (oauth/grants.ts GrantState). */
export const ConnectorGrant = t.Object(
  {
    provider: t.String({ description: "the OAuth provider, as the operator names it" }),
    state: t.UnionEnum(["none", "waiting", "granted", "error"], {
      description:
        "none: access not granted yet; waiting: a grant was started and not finished; granted (with a reason when the last attempt to grant it again failed); error: refused by the provider, unusable, or the last attempt failed, with the reason",
    }),
    granted_at: t.Optional(t.String({ description: "when access was granted (ISO 8601)" })),
    access_expires_at: t.Optional(t.String({ description: "when the access token in use expires; it is refreshed before (ISO 8601)" })),
    waiting_until: t.Optional(t.String({ description: "a grant started and not finished must be finished before then (ISO 8601)" })),
    reason: t.Optional(t.String()),
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
      "indexing while records are read, embedding while chunks (or a live source's newest records) wait for vectors, ok once both are done, error with a reason; checking while the first check of a source has not answered yet",
  }),
  reason: t.Optional(t.String()),
  records: t.Optional(Type.Integer()),
  indexed: t.Optional(
    t.Object({ chunks: Type.Integer(), embedded: Type.Integer() }, { description: "ahead-of-time embedding: chunks embedded of total" }),
  ),
  progress: t.Optional(ConnectorProgress),
  grant: t.Optional(ConnectorGrant),
  config: t.Optional(
    t.Record(t.String(), t.Unknown(), { description: "the configuration without secrets; absent on operator connectors" }),
  ),
  created_at: t.Optional(t.String()),
});
export type ConnectorViewT = Static<typeof ConnectorView>;

export const ConnectorList = t.Object({ connectors: t.Array(ConnectorView) });
export const DeletedConnector = t.Object({ id: t.String(), deleted: t.Literal(true) });
