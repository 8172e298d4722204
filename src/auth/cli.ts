// `corpus token create` and `corpus token revoke` (D2): the operator's way to mint and
// withdraw access tokens, against the same data dir the server uses.
import type { Database } from "bun:sqlite";
import type { Config, ConfigVariable } from "../config";
import { loadMasterKey } from "../crypto/master-key";
import { MIGRATIONS, PG_MIGRATIONS } from "../migrations";
import { onDataFolder } from "../store/command-data-dir";
import { openDatabase } from "../store/database";
import { openSharedDatabase } from "../store/shared";
import { AuthService } from "./service";
import { parseScopes, TokenRequestError } from "./tokens";

/**
 * The variables a token depends on: where the data and keys are, and the issuer and audience it
 * names (derived from the host, port and TLS files unless set). Any other variable, right or
 * wrong, is the server's business and is not read.
 */
export const TOKEN_CONFIG = [
  "CORPUS_DATA_DIR",
  "CORPUS_MASTER_KEY",
  "CORPUS_MASTER_KEY_FILE",
  "CORPUS_HOST",
  "CORPUS_PORT",
  "CORPUS_TLS_CERT_FILE",
  "CORPUS_TLS_KEY_FILE",
  "CORPUS_OAUTH_RESOURCE_URL",
  "CORPUS_OAUTH_ISSUER",
  // Where the tokens room is kept when several nodes share one (D33): minted and revoked there.
  "CORPUS_DATABASE_URL",
] as const satisfies readonly ConfigVariable[];

/**
 * Only what tokens need (the database, the master key, the signing key): a connectors file or
 * a model that cannot load must not stop the operator from minting or revoking a token.
 */
export async function tokenCommand(command: string, options: Record<string, string>, config: Config): Promise<string> {
  // Only a new token may make a missing data folder (the first step of an install); the shared
  // database is reached before anything is written in the folder (onDataFolder).
  return await onDataFolder(config, command, command === "token create", async () => {
    return await withAuthRoom(config, async ({ auth }) => {
      if (command === "token create") {
        // --user and --scopes are required by the CLI's parser (src/cli.ts).
        const scopes = parseScopes(options.scopes!);
        const ttl = options.ttl === undefined ? undefined : /^\d+$/.test(options.ttl) ? Number(options.ttl) : NaN;
        return (await auth.issuer.issue(options.user!, scopes, ttl)).token;
      }
      if (options.jti) {
        const issued = await auth.store.issued(options.jti);
        if (!issued) throw new TokenRequestError(`no token with jti ${options.jti} was issued by this server`);
        await auth.store.revokeToken(options.jti, issued.expiresAt);
        return `revoked token ${options.jti} of ${issued.user}`;
      }
      if (options.user) {
        const n = await auth.store.revokeUser(options.user);
        return `revoked every token of ${options.user} issued until now (${n} still unexpired)`;
      }
      throw new TokenRequestError("token revoke needs --jti ID or --user ID");
    });
  });
}

/** What a command reads of a node's rooms: its shared database (if any), its data folder's database, the auth service over them. */
export interface AuthRoom {
  shared: Awaited<ReturnType<typeof openSharedDatabase>> | undefined;
  db: Database;
  auth: AuthService;
}

/** `work` over the auth room a command opens, closed after it whatever happens (the shared database reached first). */
export async function withAuthRoom<T>(config: Config, work: (room: AuthRoom) => Promise<T>): Promise<T> {
  const shared = config.CORPUS_DATABASE_URL ? await openSharedDatabase(config.CORPUS_DATABASE_URL, PG_MIGRATIONS, 1) : undefined;
  let db: Database | undefined;
  try {
    db = openDatabase(config.CORPUS_DATA_DIR, MIGRATIONS);
    const { key } = loadMasterKey({
      dataDir: config.CORPUS_DATA_DIR,
      fromEnv: config.CORPUS_MASTER_KEY,
      file: config.CORPUS_MASTER_KEY_FILE,
    });
    return await work({ shared, db, auth: await AuthService.create(config, db, key, Date.now, shared) });
  } finally {
    db?.close();
    await shared?.end();
  }
}
