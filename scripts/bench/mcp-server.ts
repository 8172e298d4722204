// The server of scripts/bench/mcp.ts: the real app with the invoices folder connected and
// indexed; prints its URL and a token on stdout once ready.
import { join } from "node:path";
import { createApp } from "../../src/app";
import { loadConfig } from "../../src/config";
import { createLogger } from "../../src/log";
import { createFetch } from "../../src/server";
import { createServices } from "../../src/services";
import { runTempDir } from "./lib";

const data = join(import.meta.dir, "../../../shared/data");
const config = loadConfig({
  // A folder inside the temporary one: the master key is written beside the data folder.
  CORPUS_DATA_DIR: join(runTempDir("corpus-bench-mcp-"), "data"),
  CORPUS_LOG_LEVEL: "WARNING",
  CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000000",
  CORPUS_CONNECTOR_ROOTS: data,
});
const log = createLogger("WARNING");
const services = await createServices(config, log);
await services.connectors.add("bench", { id: "invoices", kind: "files", config: { path: join(data, "invoices") } });
const [a] = await services.connectors.active("bench", ["invoices"]);
await a!.connector.search({ terms: ["warm"], phrases: [], limit: 1 });
for (;;) {
  const p = a!.connector.progress!();
  if (p.total > 0 && p.embedded === p.total) break;
  await Bun.sleep(200);
}
await services.embeddings.warm();
const app = createApp(services);
const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: createFetch(app.fetch, config, log) });
const { token } = await services.auth.issuer.issue("bench", ["corpus:search", "connectors:read"], 3600);
console.log(JSON.stringify({ url: server.url.href.replace(/\/$/, ""), token }));
