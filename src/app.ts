// Builds the HTTP application from its parts. Cross-cutting plugins first (their hooks are
// global), then one Elysia instance per feature.
import { Elysia } from "elysia";
import { limitHeaders } from "./auth/guard";
import { authRoutes } from "./auth/routes";
import { connectorGrantRoutes } from "./connectors/oauth/routes";
import { connectorRoutes } from "./connectors/routes";
import { consoleRoutes } from "./console/routes";
import { debugRoutes } from "./debug/routes";
import { documentRoutes } from "./documents/routes";
import type { HealthChecks } from "./health/checks";
import { healthRoutes } from "./health/routes";
import { accessLog } from "./http/access-log";
import { bodyLimit } from "./http/body-limit";
import { jsonOnly } from "./http/content-type";
import { cors } from "./http/cors";
import { type ErrorShapes, errorMapper } from "./http/errors";
import { hostCheck } from "./http/host-check";
import { allowedMethods } from "./http/methods";
import { requestContext } from "./http/request-context";
import { responseWriter } from "./http/response";
import { parseRanges } from "./limits/client-ip";
import { MCP_PATH, mcpErrorBody } from "./mcp/errors";
import { mcpRoutes } from "./mcp/routes";
import { metadataRoutes } from "./metadata/routes";
import { type RequestObserver, requestMetrics } from "./metrics/http";
import { metricsRefusal } from "./metrics/listener";
import { oauthRoutes } from "./oauth/routes";
import { OAuthServer } from "./oauth/service";
import { openapiDocs } from "./openapi/plugin";
import { deepSearchRoutes } from "./rest/deep-search";
import { queryRoutes } from "./rest/query";
import type { Services } from "./services";
import { databaseCheck, storageCheck } from "./store/health";
import { userRoutes } from "./users/routes";
import { webhookRoutes } from "./webhooks/routes";

/** Features whose clients read another error body than { type, message }: the MCP endpoint's JSON-RPC errors. */
export const ERROR_SHAPES: ErrorShapes = [[MCP_PATH, mcpErrorBody]];

/** `metrics`: counted as requests pass, when the operator serves them (CORPUS_METRICS_LISTEN, D35). */
export function createApp(services: Services, metrics?: RequestObserver) {
  const { config, log, db, auth } = services;
  const trusted = parseRanges(config.CORPUS_TRUSTED_PROXIES);
  const checks: HealthChecks = {
    auth: [databaseCheck(db), ...auth.healthChecks()],
    connectors: [databaseCheck(db), storageCheck(services.disk, services.guard), () => services.connectors.operatorHealth()],
  };
  // normalize: false, so that unknown fields are refused (400), not silently dropped (D8).
  const app = new Elysia({ name: "corpus", normalize: false })
    // Before every other stage: the request's id and client on its context (http/request-context.ts).
    .use(requestContext)
    .use(responseWriter)
    // First of all: a limited route's refusals carry the six X-RateLimit-* headers, whichever stage refuses (D16).
    .use(limitHeaders(services.limiter))
    // Before CORS and everything else: a request for another host is no request for us (DNS rebinding).
    .use(hostCheck(config))
    .use(cors(config.corsOrigins))
    .use(
      errorMapper(
        log.child("http"),
        allowedMethods((): readonly { method: string; path: string }[] => app.routes),
        trusted,
        ERROR_SHAPES,
      ),
    )
    .use(jsonOnly)
    .use(bodyLimit(config.CORPUS_MAX_REQUEST_SIZE))
    .use(accessLog(log.child("http.access"), trusted))
    .use(metrics ? requestMetrics(metrics) : new Elysia({ name: "corpus/metrics-off" }))
    .use(openapiDocs())
    .use(healthRoutes(checks, () => services.owed.complete()))
    .use(metadataRoutes(config))
    .use(authRoutes(auth))
    // The built-in authorization server (D27), unless the operator points at an external one.
    .use(OAuthServer.builtIn(config) ? oauthRoutes(config, services.oauth, log.child("oauth")) : new Elysia({ name: "corpus/oauth-off" }))
    .use(connectorRoutes(services))
    .use(connectorGrantRoutes(services))
    .use(queryRoutes(services))
    .use(deepSearchRoutes(services))
    .use(documentRoutes(services))
    .use(webhookRoutes(services))
    .use(userRoutes(services))
    // The operator console (D35): its own session, for operators only.
    .use(consoleRoutes(services, checks))
    .use(mcpRoutes(services))
    .use(debugRoutes(config.CORPUS_DEBUG_MODE))
    .use(metricsRefusal());
  return app;
}

export type App = ReturnType<typeof createApp>;
