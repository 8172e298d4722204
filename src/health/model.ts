import { Type } from "@sinclair/typebox";
import { type Static, t } from "elysia";

export const RootHealth = t.Object({
  status: t.Literal("ok"),
  service: t.String({ examples: ["corpus"] }),
  version: t.String({ examples: ["0.1.0"] }),
});

export const ServiceHealth = t.Object({
  status: t.Union([t.Literal("healthy"), t.Literal("unhealthy")]),
  service: t.Union([t.Literal("auth"), t.Literal("connectors")]),
  reason: t.Optional(t.String({ description: "Why the service is unhealthy." })),
});

/** Work the service promised in its answers and has not done yet, per kind (D29). */
export const OwedWorkCounts = t.Object(
  {
    archive_vectors: Type.Integer({
      minimum: 0,
      description: "Archived answer chunks waiting for their vector; deep_search finds them once it is stored.",
    }),
    connector_chunks: Type.Integer({
      minimum: 0,
      description: "Chunks of local connectors (files, mail folders) waiting for their vector.",
    }),
    webhook_deliveries: Type.Integer({ minimum: 0, description: "Webhook events queued and not delivered yet (retried for 24 hours)." }),
    deletion_steps: Type.Integer({
      minimum: 0,
      description: "Deletions (of a user or a connector) whose word-index purge and WAL checkpoint are still to run.",
    }),
  },
  {
    description:
      "Work promised in answers and not done yet, per kind: recorded with the answer and resumed at start after a crash. Counts only, of all users.",
  },
);
export type OwedWorkCountsT = Static<typeof OwedWorkCounts>;
export type OwedKind = keyof OwedWorkCountsT;

export const ConnectorsHealth = t.Object({
  ...ServiceHealth.properties,
  pending: t.Optional(OwedWorkCounts),
});
