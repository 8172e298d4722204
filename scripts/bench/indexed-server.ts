// A real server for the query benchmark and the business evaluation: on a port the OS picks,
// the operator's sources connected and every chunk read and embedded first (as a running
// service would have them), and a token to ask with.
import { join } from "node:path";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { createFetch } from "../../src/server";
import { createServices } from "../../src/services";
import { connectorsSettled } from "../../test/helpers";
import { operatorFile } from "../../test/support/sources";

export async function indexedServer(work: string, sources: object[], user: string, env: Record<string, string> = {}) {
  const config = loadConfig({
    CORPUS_DATA_DIR: join(work, "data"),
    CORPUS_CONNECTORS_FILE: operatorFile(sources, work),
    CORPUS_LOG_LEVEL: "ERROR",
    CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
    ...env,
  });
  const log = createLogger("ERROR");
  const services = await createServices(config, log);
  const app = createApp(services);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createFetch(app.fetch, config, log) });
  const url = server.url.href.replace(/\/$/, "");
  const { token } = await services.auth.issuer.issue(user, ["corpus:search", "corpus:read"], 7200);
  const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  const progress = setInterval(async () => {
    for (const a of await services.connectors.active(user)) {
      const p = a.connector.progress?.();
      if (p && p.embedded < p.total) process.stderr.write(`\rindexing: ${p.embedded} of ${p.total} chunks embedded (${seconds()} s)   `);
    }
  }, 2_000);
  await connectorsSettled(services, user);
  clearInterval(progress);
  process.stderr.write(`\rindexed in ${seconds()} s                              \n`);
  return { services, server, url, headers };
}
