// Every service of a running corpus, built once from the configuration. The HTTP app, the
// CLI and the tests all start from here.
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import { Accounts, SqliteAccountRecords } from "./accounts/store";
import { PostgresAccountRecords } from "./accounts/store-postgres";
import { forgetArchiveVectors, SqliteArchiveRows } from "./archive/rows";
import { PostgresArchiveRows } from "./archive/rows-postgres";
import { Archive } from "./archive/store";
import { AuthService } from "./auth/service";
import { OPERATOR_OWNER } from "./auth/subjects";
import type { Config } from "./config";
import { closeSearches, forgetChunkVectors } from "./connectors/local-index";
import { SharedIndexes } from "./connectors/local-index/shared-index";
import { PostgresIndexRows } from "./connectors/local-index/store-postgres";
import { ConnectorRegistry } from "./connectors/registry";
import { PostgresConnectorRecords } from "./connectors/rows-postgres";
import { Conversations, SqliteConversationRecords } from "./conversations/store";
import { PostgresConversationRecords } from "./conversations/store-postgres";
import { loadMasterKey } from "./crypto/master-key";
import { type UserKeyRecords, UserKeys } from "./crypto/user-keys";
import { PostgresUserKeyRecords } from "./crypto/user-keys-postgres";
import { adoptModel, type EmbeddingOptions, EmbeddingService } from "./embedding/service";
import { BackgroundGuard } from "./jobs/guard";
import { NODE_ID } from "./jobs/leases";
import { PostgresLeases } from "./jobs/leases-postgres";
import { IdempotencyStore, SqliteIdempotencyRecords } from "./limits/idempotency";
import { PostgresIdempotencyRecords } from "./limits/idempotency-postgres";
import { limitsFrom, RateLimiter, type RateLimits } from "./limits/rate-limit";
import { PostgresRateLimiter } from "./limits/rate-limit-postgres";
import { type IpBuckets, TokenBuckets } from "./limits/token-bucket";
import { PostgresIpBuckets } from "./limits/token-bucket-postgres";
import type { Logger } from "./log";
import { type McpSessionStore, McpSessions } from "./mcp/sessions";
import { PostgresMcpSessions } from "./mcp/sessions-postgres";
import { MIGRATIONS, PG_MIGRATIONS } from "./migrations";
import { embeddingModel, type ModelAsset } from "./native/assets";
import { OAuthServer } from "./oauth/service";
import { SqliteOAuthStore } from "./oauth/store";
import { PostgresOAuthStore } from "./oauth/store-postgres";
import { SharedThrottles } from "./oauth/throttle-postgres";
import { OwedWork } from "./owed-work";
import type { QuestionStageTimes } from "./questions/stages";
import { embeddedChunks } from "./retrieval/chunk";
import { QueryService } from "./retrieval/search";
import { openDatabase } from "./store/database";
import { DiskSpace } from "./store/disk-space";
import { Scrub } from "./store/scrub";
import { openSharedDatabase, refuseUntilShared } from "./store/shared";
import { isStorageError } from "./store/storage-errors";
import { Sweeps } from "./sweeps";
import { configureConnectorVectors } from "./vectors/embedded";
import { SqliteWebhookStore, type WebhookStore } from "./webhooks/store";
import { PostgresWebhookStore } from "./webhooks/store-postgres";
import { WebhookWorker } from "./webhooks/worker";

export interface Services {
  config: Config;
  /** The clock every service was given (tests inject one). */
  now: () => number;
  log: Logger;
  db: Database;
  /** The shared PostgreSQL's connections when CORPUS_DATABASE_URL names one (D33): the shared rooms keep their rows there. */
  shared?: postgres.Sql;
  userKeys: UserKeys;
  auth: AuthService;
  /** The people who may log in to the built-in authorization server (D27). */
  accounts: Accounts;
  /** The built-in authorization server (D27). */
  oauth: OAuthServer;
  /** MCP sessions (Mcp-Session-Id): this node's memory, or the shared PostgreSQL (D33). */
  mcpSessions: McpSessionStore;
  limiter: RateLimits;
  idempotency: IdempotencyStore;
  buckets: IpBuckets;
  /** The timer that purges what has expired (buckets, idempotency records, token rows). */
  sweeps: Sweeps;
  connectors: ConnectorRegistry;
  embeddings: EmbeddingService;
  query: QueryService;
  archive: Archive;
  conversations: Conversations;
  webhooks: WebhookStore;
  webhookWorker: WebhookWorker;
  operatorWebhook?: { url: string; secret: string };
  /** Runs background work so that no failure ends the process; says which jobs cannot write (D29). */
  guard: BackgroundGuard;
  /** Free space of the data folder, its floor and the reserve (D29). */
  disk: DiskSpace;
  /** What a deletion still owes after its transaction (word index purge, WAL emptied). */
  scrub: Scrub;
  /** Work promised in answers and not done yet: resumed at start (startServer), counted (D29). */
  owed: OwedWork;
  /** How long questions' stages take, told to the operator's metrics when served (D35). */
  questionStages: QuestionStageTimes;
  /** Flushes what is written behind, closes connections and the database. */
  close(): Promise<void>;
}

/** How often free space is looked at (warning, reserve rebuilt once space is back). */
export const DISK_CHECK_MS = 2_000;

export interface ServiceOptions {
  /** The embedding model (the shipped one unless an evaluation or a test names another). */
  model?: ModelAsset;
  /** Tests: the embedding worker's entry and timeouts (one that cannot load the model). */
  embeddingWorker?: EmbeddingOptions["worker"];
  /** Tests: the users' data keys on a shared database while the rooms around them are embedded (every entry path makes keys ready). */
  userKeyRecords?: UserKeyRecords;
}

export async function createServices(
  config: Config,
  log: Logger,
  now: () => number = Date.now,
  guard = new BackgroundGuard(log.child("jobs")),
  options: ServiceOptions = {},
): Promise<Services> {
  // Before anything is opened: a node told to share its state never runs on SQLite alone (D33).
  refuseUntilShared(config);
  // The database the nodes share, when CORPUS_DATABASE_URL names one (D33): each shared room's store is chosen from it, once.
  const shared = config.CORPUS_DATABASE_URL ? await openSharedDatabase(config.CORPUS_DATABASE_URL, PG_MIGRATIONS) : undefined;
  const db = openDatabase(config.CORPUS_DATA_DIR, MIGRATIONS);
  // Background work of several nodes is claimed under leases there; one node alone takes none (its work is its own).
  const nodeLeases = shared ? { leases: new PostgresLeases(shared, now), holder: NODE_ID } : undefined;
  const vectorIndexes = configureConnectorVectors(db, {
    threshold: config.CORPUS_VECTOR_INDEX_THRESHOLD,
    onBuildFailed: (error) => log.warning("a vector index could not be built; searched without it", { error }),
  });
  const model = options.model ?? embeddingModel;
  // Vectors of two models never meet in one ranking: on a model change every stored vector is
  // forgotten at once and computed again (connectors' chunks as pending ones, the archive by resumePending).
  const forgotten = db.transaction(() =>
    adoptModel(db, model.sha256) ? { chunks: forgetChunkVectors(db), archived: forgetArchiveVectors(db) } : undefined,
  )();
  if (forgotten && forgotten.chunks + forgotten.archived > 0)
    log.warning("embedding model changed: stored vectors are computed again", { model: model.sha256.slice(0, 16), ...forgotten });
  const master = loadMasterKey({ dataDir: config.CORPUS_DATA_DIR, fromEnv: config.CORPUS_MASTER_KEY, file: config.CORPUS_MASTER_KEY_FILE });
  if (master.warning) log.warning(master.warning);
  const masterKey = master.key;
  // Free space looked at, and the reserve made, on a timer (D29): writing the reserve never
  // delays start-up, and the first look comes a moment after the listener is up.
  const disk = new DiskSpace(config.CORPUS_DATA_DIR, config.CORPUS_MIN_FREE_BYTES, log.child("storage"));
  const diskTimer = setInterval(
    guard.wrap("disk_space", () => {
      if (disk.check()) guard.forgetStorageFailures();
    }),
    DISK_CHECK_MS,
  );
  diskTimer.unref?.();
  // Shared, a key is used only once `ready` brought it to this node (crypto/user-keys.ts, D33).
  const userKeys = new UserKeys(options.userKeyRecords ?? (shared ? new PostgresUserKeyRecords(shared) : db), masterKey);
  // The operator's key (their connectors' indexes), which no deletion destroys: made present once, for every request that searches them.
  await userKeys.ready(OPERATOR_OWNER, { create: true, held: true });
  const auth = await AuthService.create(config, db, masterKey, now, shared);
  const accounts = new Accounts(shared ? new PostgresAccountRecords(shared) : new SqliteAccountRecords(db), now);
  const oauth = shared
    ? new OAuthServer(config, auth, accounts, new PostgresOAuthStore(shared), now, {
        throttles: new SharedThrottles(shared, masterKey, now),
      })
    : new OAuthServer(config, auth, accounts, new SqliteOAuthStore(db), now);
  const mcpSessions = shared ? new PostgresMcpSessions(shared, now) : new McpSessions(now);
  // Shared, one user's requests are counted once across the nodes (D33).
  const limiter = shared
    ? new PostgresRateLimiter(shared, limitsFrom(config), now, guard)
    : new RateLimiter(db, limitsFrom(config), now, guard);
  // Shared, a retry on another node is replayed, and of duplicates on several nodes one runs (D11, D33).
  const idempotency = new IdempotencyStore(
    shared ? new PostgresIdempotencyRecords(shared) : new SqliteIdempotencyRecords(db),
    userKeys,
    (config.CORPUS_REQUEST_TIMEOUT + 30) * 1000,
    now,
    guard,
  );
  // Shared, an address's /mcp requests draw on one bucket across the nodes (D33).
  const buckets: IpBuckets = shared
    ? new PostgresIpBuckets(shared, config.CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE, now, config.CORPUS_RATE_LIMIT_MAX_TRACKED_IPS)
    : new TokenBuckets(db, config.CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE, now, config.CORPUS_RATE_LIMIT_MAX_TRACKED_IPS, guard);
  const embeddings = new EmbeddingService(db, userKeys, config.CORPUS_DATA_DIR, {
    threads: config.CORPUS_EMBED_THREADS,
    model,
    log: log.child("embedding"),
    now,
    ...(options.embeddingWorker ? { worker: options.embeddingWorker } : {}),
  });
  // A deletion's (or a connector removal's) later steps, owed in its transaction (D29).
  const scrub = new Scrub(db, [() => connectors.purgeRemovedTerms()], now);
  const connectors = new ConnectorRegistry({
    db,
    keys: userKeys,
    config,
    log: log.child("connectors"),
    embeddings,
    chunker: (record) => embeddedChunks(record, embeddings.tokenizer),
    now,
    storage: { disk, guard },
    scrub,
    ...(nodeLeases ? { leases: nodeLeases } : {}),
    ...(shared ? { records: new PostgresConnectorRecords(shared), indexes: new SharedIndexes(new PostgresIndexRows(shared)) } : {}),
  });
  // The shared indexes' vectors were another model's too: owed again, as the embedded ones above.
  if (forgotten && shared) await connectors.indexes.forgetVectors();
  const query = new QueryService(connectors, embeddings, log.child("retrieval"));
  // The embedded archive's big partitions (a heavy user's) get an HNSW index as the connectors' do.
  const archiveRows = shared
    ? new PostgresArchiveRows(shared)
    : new SqliteArchiveRows(db, {
        threshold: config.CORPUS_VECTOR_INDEX_THRESHOLD,
        onBuildFailed: (error) => log.warning("an archive vector index could not be built; searched without it", { error }),
      });
  const archive = new Archive(archiveRows, userKeys, embeddings, now);
  // The shared archive's vectors were another model's too: owed again, as the embedded ones above.
  if (forgotten && shared) await archive.rows.forgetVectors();
  // Vectors of answers that a full disk kept from being stored: retried with backoff until they are (D29).
  const archiveVectors = guard.retrier("archive_vectors", () => archive.resumePending());
  archive.onPendingFailed = (error) => {
    if (isStorageError(error)) archiveVectors.trigger();
  };
  const conversations = new Conversations(
    shared ? new PostgresConversationRecords(shared) : new SqliteConversationRecords(db),
    userKeys,
    now,
  );
  const webhooks: WebhookStore = shared
    ? new PostgresWebhookStore(shared, userKeys, masterKey, now)
    : new SqliteWebhookStore(db, userKeys, masterKey, now);
  const webhookWorker = new WebhookWorker(webhooks, config.CORPUS_WEBHOOK_ALLOW_PRIVATE, log.child("webhooks"), now, undefined, guard);
  const sweeps = new Sweeps(
    [
      { name: "ip_buckets", run: () => buckets.sweep() },
      { name: "idempotency_records", run: () => idempotency.purgeExpired() },
      { name: "token_rows", run: () => auth.store.purgeExpired() },
      { name: "oauth_rows", run: () => oauth.purgeExpired() },
      // The embedded store sweeps itself on its own timer (mcp/sessions.ts).
      ...(mcpSessions instanceof PostgresMcpSessions ? [{ name: "mcp_sessions", run: () => mcpSessions.sweep() }] : []),
      // A destroyed data key's dead row, kept by a transaction that was open at its deletion (users/deletion.ts).
      ...(shared ? [{ name: "user_keys_compaction", run: () => userKeys.compactDestroyed()?.then(() => undefined) }] : []),
    ],
    log.child("sweeps"),
    undefined,
    undefined,
    guard,
  );
  sweeps.start();
  const owedLog = log.child("owed");
  const owed = new OwedWork(
    [
      {
        kind: "archive_vectors",
        count: () => archive.pending(),
        resume: async () => {
          const n = await archive.resumePending();
          if (n) owedLog.info("archive vectors resumed", { chunks: n });
        },
      },
      {
        kind: "connector_chunks",
        count: () => connectors.owedChunks(),
        resume: async () => {
          const n = await connectors.resumeOwed();
          if (n) owedLog.info("connectors resumed", { connectors: n });
        },
      },
      // The delivery worker goes through the outbox by itself (started with the server).
      { kind: "webhook_deliveries", count: () => webhooks.pending() },
      // On a full disk the reserve is freed for it, as for the deletion itself.
      { kind: "deletion_steps", count: () => scrub.pending(), resume: () => disk.withReserve(() => scrub.pay()) },
    ],
    owedLog,
    now,
    undefined,
    undefined,
    guard,
    nodeLeases,
  );
  const operatorWebhook = config.CORPUS_WEBHOOK_URL ? { url: config.CORPUS_WEBHOOK_URL, secret: config.CORPUS_WEBHOOK_SECRET! } : undefined;
  return {
    config,
    now,
    log,
    db,
    ...(shared ? { shared } : {}),
    userKeys,
    auth,
    accounts,
    oauth,
    mcpSessions,
    limiter,
    idempotency,
    buckets,
    sweeps,
    connectors,
    embeddings,
    query,
    archive,
    conversations,
    webhooks,
    webhookWorker,
    operatorWebhook,
    guard,
    disk,
    scrub,
    owed,
    questionStages: {},
    async close() {
      owed.stop();
      clearInterval(diskTimer);
      sweeps.stop();
      await webhookWorker.stop();
      await connectors.close();
      await closeSearches(db);
      vectorIndexes.close();
      if (archiveRows instanceof SqliteArchiveRows) archiveRows.close();
      // After the connectors (their loops stop), before the database (a run under way stores its vectors).
      await embeddings.close();
      // Each a guarded pass: a full disk at shutdown loses counters, never the clean close.
      await guard.run("rate_limit_windows", () => limiter.stop());
      await guard.run("ip_buckets", () => buckets.stop());
      await guard.run("idempotency_records", () => idempotency.purgeExpired());
      await guard.run("token_rows", () => auth.store.purgeExpired());
      db.close();
      await shared?.end();
    },
  };
}
