// DELETE /v1/delete_my_data (first document part 4; D13): acts at once.
import { Type } from "@sinclair/typebox";
import { Elysia, t } from "elysia";
import { type GuardServices, guard } from "../auth/guard";
import { ErrorBody } from "../http/model";
import { type DeletionServices, deleteUser } from "./deletion";

export const DeletionResponse = t.Object({
  status: t.Literal("deletion_confirmed"),
  details: t.Object({
    oauth_tokens_revoked: Type.Integer(),
    query_history_deleted: t.Boolean(),
    archive_entries_removed: Type.Integer(),
    webhooks_unregistered: Type.Integer(),
    profile_deleted: t.Boolean(),
  }),
  message: t.String(),
});

export const userRoutes = (s: GuardServices & DeletionServices) =>
  new Elysia({ name: "corpus/users" }).use(guard(s)).delete("/v1/delete_my_data", ({ principal }) => deleteUser(s, principal.user), {
    guard: { route: "DELETE /v1/delete_my_data" },
    response: { 200: DeletionResponse, 401: ErrorBody, 403: ErrorBody, 507: ErrorBody },
    detail: {
      tags: ["account"],
      summary: "Delete every piece of the user's data, at once and for good; revokes their tokens; signals user.deleted",
      security: [{ bearer: [] }],
    },
  });
