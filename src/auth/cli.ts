// `corpus token create` and `corpus token revoke` (D2): the operator's way to mint and
// withdraw access tokens, against the same data dir the server uses.
import type { Config } from "../config";
import { loadMasterKey } from "../crypto/master-key";
import { MIGRATIONS } from "../services";
import { openDatabase } from "../store/database";
import { AuthService } from "./service";
import { parseScopes, TokenRequestError } from "./tokens";

/**
 * Only what tokens need (the database, the master key, the signing key): a connectors file or
 * a model that cannot load must not stop the operator from minting or revoking a token.
 */
export async function tokenCommand(command: string, options: Record<string, string>, config: Config): Promise<string> {
  const db = openDatabase(config.CORPUS_DATA_DIR, MIGRATIONS);
  const { key } = loadMasterKey({
    dataDir: config.CORPUS_DATA_DIR,
    fromEnv: config.CORPUS_MASTER_KEY,
    file: config.CORPUS_MASTER_KEY_FILE,
  });
  const services = { auth: await AuthService.create(config, db, key) };
  try {
    if (command === "token create") {
      if (!options.user) throw new TokenRequestError("token create needs --user ID");
      if (!options.scopes) throw new TokenRequestError("token create needs --scopes s1,s2");
      const scopes = parseScopes(options.scopes);
      const ttl = options.ttl === undefined ? undefined : /^\d+$/.test(options.ttl) ? Number(options.ttl) : NaN;
      return (await services.auth.issuer.issue(options.user, scopes, ttl)).token;
    }
    if (options.jti) {
      const issued = services.auth.store.issued(options.jti);
      if (!issued) throw new TokenRequestError(`no token with jti ${options.jti} was issued by this server`);
      services.auth.store.revokeToken(options.jti, issued.expiresAt);
      return `revoked token ${options.jti} of ${issued.user}`;
    }
    if (options.user) {
      const n = services.auth.store.revokeUser(options.user);
      return `revoked every token of ${options.user} issued until now (${n} still unexpired)`;
    }
    throw new TokenRequestError("token revoke needs --jti ID or --user ID");
  } finally {
    db.close();
  }
}
