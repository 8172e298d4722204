// Health routes of the second document (part 4): `GET /`, `/api/auth/health`,
// `/api/connectors/health`; 503 while what they report on is unavailable. The connectors' one
// also counts the work still owed from answers (D29), with no names: the route needs no token.
import { Elysia } from "elysia";
import { constantBody } from "../http/response";
import type { Awaitable } from "../store/shared";
import { SERVICE_NAME, SERVICE_VERSION } from "../version";
import { type HealthChecks, runChecks } from "./checks";
import { ConnectorsHealth, type OwedWorkCountsT, RootHealth, ServiceHealth } from "./model";

const ROOT_BODY = constantBody({ status: "ok", service: SERVICE_NAME, version: SERVICE_VERSION } as const);

/** `owed` gives the counts of owed work, or undefined when they cannot be read (the database is down). */
export const healthRoutes = (checks: HealthChecks, owed: () => Awaitable<OwedWorkCountsT | undefined> = () => undefined) => {
  const serviceRoute =
    (service: keyof HealthChecks) =>
    async ({ set }: { set: { status?: number | string } }) => {
      const result = await runChecks(checks[service]);
      const pending = service === "connectors" ? await owed() : undefined;
      const extra = pending ? { pending } : {};
      if (result.healthy) return { status: "healthy" as const, service, ...extra };
      set.status = 503;
      return { status: "unhealthy" as const, service, reason: result.reason, ...extra };
    };
  return new Elysia({ name: "corpus/health" })
    .get("/", () => ROOT_BODY, { response: RootHealth, detail: { tags: ["health"], summary: "Service health" } })
    .get("/api/auth/health", serviceRoute("auth"), {
      response: { 200: ServiceHealth, 503: ServiceHealth },
      detail: { tags: ["health"], summary: "Auth service health" },
    })
    .get("/api/connectors/health", serviceRoute("connectors"), {
      response: { 200: ConnectorsHealth, 503: ConnectorsHealth },
      detail: { tags: ["health"], summary: "Connectors service health" },
    });
};
