// Starts the service: configuration, data dir, keys, database, the app, the listener.
import type { Server } from "bun";
import { createApp } from "./app";
import type { Config } from "./config";
import { withDefaultHost } from "./http/host-check";
import { beginRequest } from "./http/request-context";
import { withTimeout, type FetchHandler } from "./http/timeout";
import type { Logger } from "./log";
import { createServices, type Services } from "./services";

const WARM_DELAY_MS = 2_000;

export interface Running {
  server: Server<undefined>;
  url: string;
  services: Services;
  stop(): Promise<void>;
}

/**
 * The fetch handler the listener uses: socket address recorded, a missing Host (HTTP/1.0)
 * taken as this server's, request timeout applied.
 * Give it `app.fetch` (the compiled router), not `app.handle`: the latter's extra async layer
 * leaves every response pending for a few ticks, which the timeout then has to watch.
 */
export function createFetch(handle: FetchHandler, config: Config, log: Logger) {
  const timed = withTimeout(handle, config.CORPUS_REQUEST_TIMEOUT, (request) =>
    log.warning("request timed out", { method: request.method, path: new URL(request.url).pathname }),
  );
  return (request: Request, server: Server<undefined>) => {
    beginRequest(request, server);
    return timed(withDefaultHost(request, config.resourceUrl));
  };
}

export async function startServer(config: Config, log: Logger): Promise<Running> {
  const services = await createServices(config, log);
  // D29: nothing that runs in the background ends the process.
  services.guard.installProcessHandlers();
  const app = createApp(services);
  const server = Bun.serve({
    hostname: config.CORPUS_HOST,
    port: config.CORPUS_PORT,
    // The body-limit plugin answers 413 (spec shape, security headers) before reading a body
    // declared too large, and cuts off a chunked one as it passes the limit: the runtime's own
    // cap, which answers a bare 413, must never be reached first.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    fetch: createFetch(app.fetch, config, log),
  });
  const url = server.url.href.replace(/\/$/, "");
  // Deliveries left in the outbox by an earlier run go out now.
  services.webhookWorker.start();
  if (config.CORPUS_AUTH_DISABLED) log.warning("CORPUS_AUTH_DISABLED=true: /mcp accepts requests without a token (development only)");
  log.info("listening", { url, data_dir: config.CORPUS_DATA_DIR });
  // Work owed from before (a crash, a restart): archive vectors, connector embeddings and scans,
  // a deletion's scrub; resumed now rather than at first use (D29). This loads the model at once
  // if vectors are owed.
  services.owed.start();
  // The model (~0.5 s of loading) is warmed shortly after the listener is up, so that
  // start-up and health checks stay fast and the first question does not wait for it.
  const warm = setTimeout(() => {
    services.embeddings.warm().then(
      () => log.info("embedding model ready"),
      () => log.error("the embedding model could not be loaded"),
    );
  }, WARM_DELAY_MS);
  warm.unref?.();
  return {
    server,
    url,
    services,
    async stop() {
      await server.stop(true);
      await services.close();
    },
  };
}
