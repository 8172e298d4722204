// One log line per request: method, path (never the query string), status and duration; the
// client as the per-IP limit sees it (behind CORPUS_TRUSTED_PROXIES, the forwarded address).
import { Elysia } from "elysia";
import type { Ranges } from "../limits/client-ip";
import type { Logger } from "../log";
import { infoOf, requestContext } from "./request-context";

// Registered only when INFO is logged: the hook itself has a cost on every request.
export const accessLog = (log: Logger, trusted?: Ranges) => {
  const plugin = new Elysia({ name: "corpus/access-log" }).use(requestContext);
  if (!log.enabled("INFO")) return plugin;
  return plugin
    .onRequest(({ request, info: scoped }) => {
      const info = infoOf(request, scoped);
      info.started_at = performance.now();
      // The socket's address can only be read while the request is open: read it now.
      void info.client_ip;
    })
    .onAfterResponse({ as: "global" }, ({ request, set, path, info: scoped }) => {
      const info = infoOf(request, scoped);
      const { request_id, started_at, tool, status: written } = info;
      const client_ip = trusted ? info.clientBehind(trusted) : info.client_ip;
      const status = written ?? (typeof set.status === "number" ? set.status : 200);
      log.info("request", {
        request_id,
        client_ip,
        tool,
        method: request.method,
        path,
        status,
        duration_ms: Math.round((performance.now() - started_at) * 100) / 100,
      });
    });
};
