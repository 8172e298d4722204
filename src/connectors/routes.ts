// The connector control plane (D18, D22): GET/POST /v1/connectors, PATCH/DELETE /v1/connectors/{id}.

import { Elysia, t } from "elysia";
import { assertNotRevoked, type GuardServices, guard } from "../auth/guard";
import { JSON_PARSE } from "../http/json-body";
import { ErrorBody } from "../http/model";
import { infoOf } from "../http/request-context";
import { ConnectorList, ConnectorView, CreateConnectorBody, DeletedConnector, UpdateConnectorBody } from "./model";
import type { ConnectorRegistry } from "./registry";

export const connectorRoutes = (services: GuardServices & { connectors: ConnectorRegistry }) => {
  const { connectors } = services;
  const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 507: ErrorBody };
  const security = [{ bearer: [] }];
  return new Elysia({ name: "corpus/connectors" })
    .use(guard(services))
    .get("/v1/connectors", async ({ principal }) => ({ connectors: await connectors.list(principal.user) }), {
      guard: { route: "GET /v1/connectors" },
      response: { 200: ConnectorList, ...errors },
      detail: { tags: ["connectors"], summary: "The user's connectors and the operator's, with status", security },
    })
    .post(
      "/v1/connectors",
      async ({ principal, body, request, info }) => {
        const live = () => assertNotRevoked(services.auth, principal, infoOf(request, info));
        await live();
        return connectors.add(principal.user, body, live);
      },
      {
        guard: { route: "POST /v1/connectors" },
        parse: [...JSON_PARSE],
        body: CreateConnectorBody,
        response: { 200: ConnectorView, ...errors },
        detail: {
          tags: ["connectors"],
          summary: "Add a connector; one that cannot connect is saved with status error and a reason",
          security,
        },
      },
    )
    .patch(
      "/v1/connectors/:id",
      async ({ principal, params, body, request, info }) => {
        const live = () => assertNotRevoked(services.auth, principal, infoOf(request, info));
        await live();
        return connectors.update(principal.user, params.id, body, live);
      },
      {
        guard: { route: "PATCH /v1/connectors/:id" },
        parse: [...JSON_PARSE],
        params: t.Object({ id: t.String({ maxLength: 63 }) }),
        body: UpdateConnectorBody,
        response: { 200: ConnectorView, ...errors },
        detail: {
          tags: ["connectors"],
          summary: "Change a connector's label or config; a changed source is read afresh, secrets left out are kept",
          security,
        },
      },
    )
    .delete(
      "/v1/connectors/:id",
      async ({ principal, params }) => {
        await connectors.remove(principal.user, params.id);
        return { id: params.id, deleted: true as const };
      },
      {
        guard: { route: "DELETE /v1/connectors/:id" },
        params: t.Object({ id: t.String({ maxLength: 63 }) }),
        response: { 200: DeletedConnector, ...errors },
        detail: { tags: ["connectors"], summary: "Remove a connector and its local index", security },
      },
    );
};
