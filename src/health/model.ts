import { t } from "elysia";

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
