// Health routes of the second document (part 4): `GET /`, `/api/auth/health`,
// `/api/connectors/health`; 503 while what they report on is unavailable.
import { Elysia } from "elysia";
import { constantBody } from "../http/response";
import { SERVICE_NAME, SERVICE_VERSION } from "../version";
import { runChecks, type HealthChecks } from "./checks";
import { RootHealth, ServiceHealth } from "./model";

const ROOT_BODY = constantBody({ status: "ok", service: SERVICE_NAME, version: SERVICE_VERSION } as const);

export const healthRoutes = (checks: HealthChecks) => {
  const serviceRoute = (service: keyof HealthChecks) => async ({ set }: { set: { status?: number | string } }) => {
    const result = await runChecks(checks[service]);
    if (result.healthy) return { status: "healthy" as const, service };
    set.status = 503;
    return { status: "unhealthy" as const, service, reason: result.reason };
  };
  return new Elysia({ name: "corpus/health" })
    .get("/", () => ROOT_BODY, { response: RootHealth, detail: { tags: ["health"], summary: "Service health" } })
    .get("/api/auth/health", serviceRoute("auth"), {
      response: { 200: ServiceHealth, 503: ServiceHealth },
      detail: { tags: ["health"], summary: "Auth service health" },
    })
    .get("/api/connectors/health", serviceRoute("connectors"), {
      response: { 200: ServiceHealth, 503: ServiceHealth },
      detail: { tags: ["health"], summary: "Connectors service health" },
    });
};
