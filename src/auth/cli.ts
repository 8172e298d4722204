// `corpus token create` and `corpus token revoke` (D2): the operator's way to mint and
// withdraw access tokens, against the same data dir the server uses.
import type { Config } from "../config";
import { createLogger } from "../log";
import { createServices } from "../services";
import { parseScopes, TokenRequestError } from "./tokens";

export async function tokenCommand(command: string, options: Record<string, string>, config: Config): Promise<string> {
  const services = await createServices(config, createLogger("ERROR", () => {}));
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
    await services.close();
  }
}
