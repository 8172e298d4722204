// The metrics listener (D35): /metrics is the operator's, and no token carries the operator's role
// (it is on the account, for the console's sign-in), so it is served on a listener of its own, on a loopback address only
// (CORPUS_METRICS_LISTEN), where the operator's Prometheus scrapes it. The service's own listener
// refuses /metrics to every token (metricsRefusal). A page in a browser cannot read it either: the
// Host must be a loopback name (DNS rebinding) and a request carrying an Origin is refused.
import { Elysia } from "elysia";
import { ERROR_TYPES, type ErrorStatus, HttpError } from "../http/errors";
import { hostNameOf, LOOPBACK_HOSTS } from "../http/host-check";
import type { Logger } from "../log";
import type { Metrics } from "./metrics";

export const METRICS_PATH = "/metrics";

export const METRICS_REFUSED = "Forbidden: metrics are the operator's, served on the address CORPUS_METRICS_LISTEN names (D35)";

export interface MetricsListener {
  url: string;
  stop(): Promise<void>;
}

/** CORPUS_METRICS_LISTEN (its pattern already checked by the configuration) as the listener's host and port. */
export function listenAddress(listen: string): { hostname: string; port: number } {
  const at = listen.lastIndexOf(":");
  const host = listen.slice(0, at);
  return { hostname: host.startsWith("[") ? host.slice(1, -1) : host, port: Number(listen.slice(at + 1)) };
}

const refusal = (status: ErrorStatus, message: string, headers: Record<string, string> = {}) =>
  Response.json({ type: ERROR_TYPES[status], message }, { status, headers: { "cache-control": "no-store", ...headers } });

export function startMetricsListener(listen: string, metrics: Metrics, log: Logger): MetricsListener {
  const { hostname, port } = listenAddress(listen);
  const loopback = new Set<string>(LOOPBACK_HOSTS);
  const server = Bun.serve({
    hostname,
    port,
    development: false,
    maxRequestBodySize: 0,
    async fetch(request) {
      const host = hostNameOf(request.headers.get("host") ?? "");
      if (!host || !loopback.has(host) || request.headers.has("origin"))
        return refusal(403, "Forbidden: the metrics listener answers its own loopback address, not a page's requests");
      if (new URL(request.url).pathname !== METRICS_PATH) return refusal(404, `Not found: this listener serves ${METRICS_PATH} only`);
      if (request.method !== "GET" && request.method !== "HEAD") return refusal(405, "Method not allowed", { allow: "GET, HEAD" });
      try {
        const { body, contentType } = await metrics.scrape();
        return new Response(request.method === "HEAD" ? null : body, {
          headers: { "content-type": contentType, "cache-control": "no-store" },
        });
      } catch (error) {
        log.error("metrics could not be gathered", { error: error instanceof Error ? error.message : String(error) });
        return refusal(500, "Internal error: metrics could not be gathered");
      }
    },
  });
  const url = server.url.href.replace(/\/$/, "");
  log.info("serving metrics", { url: `${url}${METRICS_PATH}` });
  return { url, stop: () => server.stop(true) };
}

/** /metrics on the service's own listener: no token carries the operator's role, so every caller is refused. */
export const metricsRefusal = () =>
  new Elysia({ name: "corpus/metrics-refusal" }).get(
    METRICS_PATH,
    () => {
      throw new HttpError(403, METRICS_REFUSED);
    },
    { detail: { hide: true } },
  );
