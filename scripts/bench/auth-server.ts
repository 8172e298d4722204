// The app of scripts/bench/auth.ts: the real platform and guard, with one route served twice,
// once behind authentication and the per-user rate limit and once open. Prints its URL and
// a token on stdout.

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Elysia } from "elysia";
import { createApp } from "../../src/app";
import { guard } from "../../src/auth/guard";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { createFetch } from "../../src/server";
import { createServices } from "../../src/services";

const config = loadConfig({
  CORPUS_DATA_DIR: mkdtempSync(join(tmpdir(), "corpus-bench-auth-")),
  CORPUS_LOG_LEVEL: "WARNING",
  CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
  CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
});
const log = createLogger("WARNING");
const services = await createServices(config, log);
const body = () => ({ connectors: [{ id: "mail", kind: "maildir", status: "ok" }] });
const app = createApp(services).use(
  new Elysia()
    .use(guard(services))
    .get("/bench/open", body)
    .get("/bench/protected", body, { guard: { route: "GET /v1/connectors", limit: "query" } }),
);
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createFetch(app.fetch, config, log) });
const { token } = await services.auth.issuer.issue("bench", ["connectors:read"], 3600);
console.log(JSON.stringify({ url: server.url.href.replace(/\/$/, ""), token }));
