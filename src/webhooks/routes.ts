// POST/GET /v1/webhooks, DELETE /v1/webhooks/{id} (D14, D5). The secret is shown once.

import { Elysia, t } from "elysia";
import { assertNotRevoked, type GuardServices, guard } from "../auth/guard";
import type { Config } from "../config";
import { HttpError } from "../http/errors";
import { JSON_PARSE } from "../http/json-body";
import { ErrorBody } from "../http/model";
import { infoOf } from "../http/request-context";
import { type RegisteredWebhook, WEBHOOK_EVENTS, type WebhookStore } from "./store";
import { checkTarget } from "./targets";

const Webhook = t.Object({
  id: t.String({ description: "prefix wh_" }),
  url: t.String(),
  events: t.Array(t.String()),
  created_at: t.String(),
});

/** CORPUS_MAX_WEBHOOKS_PER_USER: the store counts and inserts with nothing between (concurrent adds, on any node, cannot both pass). */
async function register(webhooks: WebhookStore, user: string, url: string, events: string[], max: number): Promise<RegisteredWebhook> {
  const added = await webhooks.add(user, url, events, max);
  if ("atCap" in added)
    throw new HttpError(
      409,
      `you have ${added.atCap} webhooks, the most allowed (CORPUS_MAX_WEBHOOKS_PER_USER=${max}); remove one before registering another`,
    );
  return added;
}

export const webhookRoutes = (s: GuardServices & { webhooks: WebhookStore; config: Config }) => {
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 507: ErrorBody };
  const security = [{ bearer: [] }];
  return new Elysia({ name: "corpus/webhooks" })
    .use(guard(s))
    .post(
      "/v1/webhooks",
      async ({ body, principal, request, info }) => {
        // A refused target is a TargetError, answered 400 by the error mapper.
        await checkTarget(body.url, s.config.CORPUS_WEBHOOK_ALLOW_PRIVATE);
        await assertNotRevoked(s.auth, principal, infoOf(request, info));
        const events = [...new Set(body.events ?? [...WEBHOOK_EVENTS])];
        return register(s.webhooks, principal.user, body.url, events, s.config.CORPUS_MAX_WEBHOOKS_PER_USER);
      },
      {
        guard: { route: "POST /v1/webhooks" },
        parse: [...JSON_PARSE],
        body: t.Object(
          {
            url: t.String({ maxLength: 2048 }),
            events: t.Optional(t.Array(t.UnionEnum([...WEBHOOK_EVENTS]), { minItems: 1, maxItems: 10 })),
          },
          { additionalProperties: false },
        ),
        response: {
          200: t.Object({ ...Webhook.properties, secret: t.String({ description: "shown once: verify X-Corpus-Signature with it" }) }),
          ...errors,
        },
        detail: { tags: ["webhooks"], summary: "Register a webhook (user.deleted)", security },
      },
    )
    .get("/v1/webhooks", async ({ principal }) => ({ webhooks: await s.webhooks.list(principal.user) }), {
      guard: { route: "GET /v1/webhooks" },
      response: { 200: t.Object({ webhooks: t.Array(Webhook) }), ...errors },
      detail: { tags: ["webhooks"], summary: "The user's webhooks (secrets are never shown again)", security },
    })
    .delete(
      "/v1/webhooks/:id",
      async ({ params, principal }) => {
        if (!(await s.webhooks.remove(principal.user, params.id))) throw new HttpError(404, `no webhook with id ${params.id}`);
        return { id: params.id, deleted: true as const };
      },
      {
        guard: { route: "DELETE /v1/webhooks/:id" },
        params: t.Object({ id: t.String({ maxLength: 64 }) }),
        response: { 200: t.Object({ id: t.String(), deleted: t.Literal(true) }), ...errors },
        detail: { tags: ["webhooks"], summary: "Remove a webhook", security },
      },
    );
};
