// Every answered request, counted for the metrics (D35): its method, the route that matched (its
// template: an unknown path is no label), its status and how long it took. Apart from the
// metrics themselves, so that the client library is loaded only when they are served.
import { Elysia } from "elysia";
import { infoOf, requestContext } from "../http/request-context";

/** What is told of each answered request. */
export interface RequestObserver {
  /** `rateLimited`: a rate limit refused it though it was answered otherwise than 429 (an MCP tool's result). */
  answered(method: string, route: string, status: number, seconds: number, rateLimited: boolean): void;
}

const METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** The route label of a request that matched no route. */
export const UNMATCHED_ROUTE = "unmatched";

export const requestMetrics = (observer: RequestObserver) =>
  new Elysia({ name: "corpus/metrics" })
    .use(requestContext)
    .onRequest(({ request, info: scoped }) => {
      infoOf(request, scoped).started_at = performance.now();
    })
    .onAfterResponse({ as: "global" }, ({ request, set, route, info: scoped }) => {
      const info = infoOf(request, scoped);
      const status = info.status ?? (typeof set.status === "number" ? set.status : 200);
      const matched = route && route !== "*" ? route : UNMATCHED_ROUTE;
      observer.answered(
        METHODS.has(request.method) ? request.method : "other",
        matched,
        status,
        (performance.now() - info.started_at) / 1000,
        info.rateLimited,
      );
    });
