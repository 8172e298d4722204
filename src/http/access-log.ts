// One log line per request: method, path (never the query string), status and duration.
import { Elysia } from "elysia";
import type { Logger } from "../log";
import { requestInfo } from "./request-context";

export const accessLog = (log: Logger) =>
  new Elysia({ name: "corpus/access-log" }).onAfterResponse({ as: "global" }, ({ request, set, path }) => {
    if (!log.enabled("INFO")) return;
    const { request_id, client_ip, started_at, tool } = requestInfo(request);
    const status = typeof set.status === "number" ? set.status : 200;
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
