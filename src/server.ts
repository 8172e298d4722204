// Starts the service: configuration, data dir, keys, database, the app, the listener.
import type { Server } from "bun";
import { createApp, ERROR_SHAPES } from "./app";
import { type Config, isWildcardHost, ownUrls } from "./config";
import { MODEL_COPIES } from "./embedding/embedder";
import { withDefaultHost } from "./http/host-check";
import { beginRequest } from "./http/request-context";
import { type FetchHandler, type SweepClock, withTimeout } from "./http/timeout";
import { loadTls } from "./http/tls";
import type { Logger } from "./log";
import { type MetricsListener, startMetricsListener } from "./metrics/listener";
import type { Metrics } from "./metrics/metrics";
import { megabytes, roomForCopies } from "./native/materialize";
import { createServices, type Services } from "./services";

const WARM_DELAY_MS = 2_000;

export interface Running {
  /** The listener taking new connections (a new one after each certificate reload). */
  readonly server: Server<undefined>;
  url: string;
  services: Services;
  /** Where the metrics listener serves (CORPUS_METRICS_LISTEN, D35), when it does. */
  metricsUrl?: string;
  /**
   * Reads CORPUS_TLS_CERT_FILE / CORPUS_TLS_KEY_FILE again (SIGHUP) and serves new connections
   * with them; open connections are not dropped. False, and the old certificate kept, when the
   * files cannot be used or HTTPS is not configured.
   */
  reloadTls(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * The fetch handler the listener uses: socket address recorded, a missing Host (HTTP/1.0)
 * taken as this server's, request timeout applied.
 * Give it `app.fetch` (the compiled router), not `app.handle`: the latter's extra async layer
 * leaves every response pending for a few ticks, which the timeout then has to watch.
 */
export function createFetch(handle: FetchHandler, config: Config, log: Logger, clock?: SweepClock) {
  const timed = withTimeout(handle, config.CORPUS_REQUEST_TIMEOUT, {
    clock,
    onTimeout: (request, info) =>
      log.warning("request timed out", {
        request_id: info.request_id,
        client_ip: info.client_ip,
        method: request.method,
        path: new URL(request.url).pathname,
      }),
    shapes: ERROR_SHAPES,
  });
  const secure = Boolean(config.CORPUS_TLS_CERT_FILE);
  return (request: Request, server: Server<undefined>) => {
    const hosted = withDefaultHost(request, config.resourceUrl);
    // The socket's address is asked with the Request the socket gave, not its wrapper.
    const info = beginRequest(hosted, server, request);
    info.secure = secure;
    info.boundPort = server.port;
    return timed(hosted);
  };
}

/**
 * With HTTPS the listener sets SO_REUSEPORT, so that a reload can open the next one on the same
 * port before closing the old (see reloadTls). That option would also let a second corpus bind
 * the same port unnoticed; a plain bind tried first still refuses a port in use.
 */
function ensurePortFree(hostname: string, port: number): void {
  if (port === 0) return;
  Bun.listen({ hostname, port, socket: { data() {} } }).stop(true);
}

/**
 * The room the executable's checked copies of the model need in the data folder (D29), said at
 * start: with too little, questions are answered by their words (with a note) until space is freed.
 */
function logModelRoom(dataDir: string, log: Logger): void {
  try {
    const room = roomForCopies(MODEL_COPIES, dataDir);
    if (room.needed_bytes > room.free_bytes)
      log.warning(
        `no room in the data folder for the embedding model's checked copies: they need ${megabytes(room.needed_bytes)}, ${megabytes(room.free_bytes)} free; questions are answered by their words until space is freed`,
        room,
      );
    else if (room.needed_bytes > 0) log.info("the embedding model's checked copies are made in the data folder", room);
  } catch (error) {
    log.warning("the room for the embedding model's copies could not be measured", {
      error: error instanceof Error ? error.message : String(error),
    });
  }
}

/**
 * The metrics an operator scrapes (D35), read from the services; sign-ins counted as they
 * happen. Loaded only when served: importing the client library took 0.19-0.31 s under `bun run` on this (loaded) machine.
 */
export async function operatorMetrics(services: Services): Promise<Metrics> {
  const { Metrics } = await import("./metrics/metrics");
  const metrics = new Metrics({
    db: services.db,
    embeddingQueue: () => services.embeddings.queueDepth,
    embeddedTexts: () => services.embeddings.embeddedTexts,
    connectorStates: () => services.connectors.states(),
    owedWork: () => services.owed.counts(),
    freeBytes: () => services.disk.free(),
    minFreeBytes: services.disk.minFreeBytes,
    now: services.now,
  });
  services.accounts.onVerified = (right) => metrics.signedIn("password", right);
  services.oauth.onUpstreamSignIn = (completed) => metrics.signedIn("oidc", completed);
  services.questionStages.observe = (stage, seconds) => metrics.questionStage(stage, seconds);
  return metrics;
}

export async function startServer(configured: Config, log: Logger): Promise<Running> {
  // Before anything is opened: a certificate that cannot be used is a start-up error.
  const tls = loadTls(configured);
  if (tls) ensurePortFree(configured.CORPUS_HOST, configured.CORPUS_PORT);
  // The listener's handler is the app once it is built; a request that comes sooner waits for it.
  let handle: ((request: Request, server: Server<undefined>) => Response | Promise<Response>) | undefined;
  const built = Promise.withResolvers<void>();
  built.promise.catch(() => {});
  const options = {
    hostname: configured.CORPUS_HOST,
    // The body-limit plugin answers 413 (spec shape, security headers) before reading a body
    // declared too large, and cuts off a chunked one as it passes the limit: the runtime's own
    // cap, which answers a bare 413, must never be reached first.
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    development: false,
    fetch: (request: Request, server: Server<undefined>) =>
      handle ? handle(request, server) : built.promise.then(() => handle!(request, server)),
    reusePort: tls !== undefined,
  };
  const listen = (port: number) => Bun.serve({ ...options, port, ...(tls && { tls: tls.files }) });
  // D4: with CORPUS_PORT=0 the port exists only once bound, and the resource URL and issuer (the
  // 401's resource_metadata, the OAuth metadata, tokens' audience, the connector callback) are
  // built on it: the listener comes first, then everything else from the address it got.
  const early = configured.CORPUS_PORT === 0 ? listen(0) : undefined;
  const config: Config = early ? { ...configured, ...ownUrls(configured, early.port!) } : configured;
  let services: Services;
  let metrics: Metrics | undefined;
  let metricsListener: MetricsListener | undefined;
  try {
    services = await createServices(config, log);
    // The serving process's operator file is the operator's: grants of connectors gone from it go too.
    await services.connectors.dropStaleOperatorGrants();
    // D29: nothing that runs in the background ends the process.
    services.guard.installProcessHandlers();
    metrics = config.CORPUS_METRICS_LISTEN ? await operatorMetrics(services) : undefined;
  } catch (error) {
    built.reject(error);
    await early?.stop(true);
    throw error;
  }
  const app = createApp(services, metrics);
  try {
    // Before the service's listener: an address in use stops the start with nothing left listening.
    if (metrics) metricsListener = startMetricsListener(config.CORPUS_METRICS_LISTEN!, metrics, log.child("metrics"));
  } catch (error) {
    built.reject(error);
    await early?.stop(true);
    await services.close();
    throw error;
  }
  let server: Server<undefined> = early ?? listen(config.CORPUS_PORT);
  handle = createFetch(app.fetch, config, log);
  built.resolve();
  // Listeners replaced by a reload, finishing the requests they had.
  const retiring = new Set<Server<undefined>>();
  const url = server.url.href.replace(/\/$/, "");
  if (tls) log.info("serving HTTPS", { certificate: tls.summary });
  // Deliveries left in the outbox by an earlier run go out now.
  services.webhookWorker.start();
  if (isWildcardHost(config.CORPUS_HOST) && !config.CORPUS_OAUTH_RESOURCE_URL)
    log.warning(
      `CORPUS_HOST=${config.CORPUS_HOST} and no CORPUS_OAUTH_RESOURCE_URL: assistants sign in at ${config.resourceUrl}, on this machine only; set CORPUS_OAUTH_RESOURCE_URL to the address clients elsewhere use`,
    );
  if (config.CORPUS_AUTH_DISABLED) log.warning("CORPUS_AUTH_DISABLED=true: /mcp accepts requests without a token (development only)");
  log.info("listening", { url, data_dir: config.CORPUS_DATA_DIR });
  // Work owed from before (a crash, a restart): archive vectors, connector embeddings and scans,
  // a deletion's scrub; resumed now rather than at first use (D29). This loads the model at once
  // if vectors are owed.
  services.owed.start();
  logModelRoom(config.CORPUS_DATA_DIR, log);
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
    get server() {
      return server;
    },
    url,
    services,
    metricsUrl: metricsListener?.url,
    async reloadTls() {
      if (!config.CORPUS_TLS_CERT_FILE) {
        log.info("not serving HTTPS: no certificate to reload");
        return false;
      }
      let next: Server<undefined>;
      let loaded: NonNullable<ReturnType<typeof loadTls>>;
      try {
        loaded = loadTls(config)!;
        // Bun's server.reload() swaps handlers but keeps the certificate (Bun 1.4.5, measured), so
        // a new listener with the new certificate takes the port (SO_REUSEPORT) and the old one
        // stops accepting: its requests in progress finish, its idle keep-alive connections are
        // closed between requests (clients open a new one), nothing is cut off mid-answer.
        next = Bun.serve({ ...options, port: server.port!, tls: loaded.files });
      } catch (error) {
        log.error("TLS certificate not reloaded; the previous one is still served", { reason: (error as Error).message });
        return false;
      }
      const old = server;
      server = next;
      retiring.add(old);
      void old.stop(false).then(() => retiring.delete(old));
      log.info("TLS certificate reloaded", { certificate: loaded.summary });
      return true;
    },
    async stop() {
      await Promise.all([server.stop(true), ...[...retiring].map((s) => s.stop(true)), metricsListener?.stop()]);
      await services.close();
    },
  };
}
