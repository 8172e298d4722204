// Every room's tables, in the order their migrations run (store/migrations.ts applies them).
// Apart from services.ts so that a command which only opens the database (corpus token,
// corpus check, corpus backup) builds nothing else: a bad CORPUS_CONNECTORS_FILE, say, does not stop it.
import { accountMigrations } from "./accounts/store";
import { accountPgMigrations } from "./accounts/store-postgres";
import { archivePgMigrations } from "./archive/rows-postgres";
import { archiveMigrations } from "./archive/store";
import { signingKeyPgMigrations } from "./auth/signing-key";
import { authMigrations } from "./auth/store";
import { authPgMigrations } from "./auth/store-postgres";
import { indexMigrations } from "./connectors/local-index";
import { indexPgMigrations } from "./connectors/local-index/store-postgres";
import { connectorRowMigrations } from "./connectors/rows";
import { connectorPgMigrations } from "./connectors/rows-postgres";
import { consoleMigrations } from "./console/store";
import { conversationMigrations } from "./conversations/store";
import { conversationPgMigrations } from "./conversations/store-postgres";
import { cryptoMigrations } from "./crypto/user-keys";
import { userKeyPgMigrations } from "./crypto/user-keys-postgres";
import { embeddingMigrations } from "./embedding/service";
import { leasePgMigrations } from "./jobs/leases-postgres";
import { idempotencyMigrations } from "./limits/idempotency";
import { idempotencyPgMigrations } from "./limits/idempotency-postgres";
import { limitMigrations } from "./limits/rate-limit";
import { rateLimitPgMigrations } from "./limits/rate-limit-postgres";
import { bucketMigrations } from "./limits/token-bucket";
import { bucketPgMigrations } from "./limits/token-bucket-postgres";
import { mcpSessionPgMigrations } from "./mcp/sessions-postgres";
import { oauthMigrations } from "./oauth/store";
import { oauthPgMigrations } from "./oauth/store-postgres";
import { throttlePgMigrations } from "./oauth/throttle-postgres";
import { storeMigrations } from "./store/migrations";
import { scrubMigrations } from "./store/scrub";
import { webhookMigrations } from "./webhooks/store";
import { webhookPgMigrations } from "./webhooks/store-postgres";

export const MIGRATIONS = [
  ...storeMigrations,
  ...cryptoMigrations,
  ...authMigrations,
  ...limitMigrations,
  ...idempotencyMigrations,
  ...bucketMigrations,
  ...indexMigrations,
  ...connectorRowMigrations,
  ...embeddingMigrations,
  ...archiveMigrations,
  ...conversationMigrations,
  ...webhookMigrations,
  ...accountMigrations,
  ...oauthMigrations,
  ...scrubMigrations,
  ...consoleMigrations,
];

/** The shared PostgreSQL's tables of the rooms kept there so far (D33), applied once under an advisory lock (store/postgres-migrations.ts). */
export const PG_MIGRATIONS = [
  ...rateLimitPgMigrations,
  ...idempotencyPgMigrations,
  ...bucketPgMigrations,
  ...leasePgMigrations,
  ...archivePgMigrations,
  ...authPgMigrations,
  ...oauthPgMigrations,
  ...mcpSessionPgMigrations,
  ...conversationPgMigrations,
  ...webhookPgMigrations,
  ...accountPgMigrations,
  ...userKeyPgMigrations,
  ...connectorPgMigrations,
  ...indexPgMigrations,
  ...throttlePgMigrations,
  ...signingKeyPgMigrations,
];
