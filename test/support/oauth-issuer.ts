// A small OAuth 2.0 provider on loopback for the IMAP OAuth tests (issue 38): an authorization
// endpoint that approves at once for the user the test names (a real provider would ask them),
// a token endpoint for the authorization code with PKCE S256 (RFC 7636) and rotating refresh
// tokens, and token introspection (RFC 7662) that Dovecot's oauth2 passdb asks. `revoke(user)`
// is the switch that withdraws a user's grant: refresh tokens are refused (invalid_grant) and
// access tokens inactive from then on.
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const s256 = (verifier: string) => createHash("sha256").update(verifier).digest("base64url");
const random = () => randomBytes(24).toString("base64url");

interface Code {
  user: string;
  challenge: string;
  redirectUri: string;
  clientId: string;
}

export interface TokenIssuer {
  /** http://<host>:<port> */
  url: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  introspectionEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** Opens `authorizeUrl` as `user` would, approving: the URL the provider sends the browser back to. */
  approve(authorizeUrl: string, user: string): Promise<URL>;
  /** Withdraws every grant of `user`. */
  revoke(user: string): void;
  /** Requests answered at the token endpoint, by grant type, and those it refused. */
  counts: { authorization_code: number; refresh_token: number; refused: number };
  /** Access tokens Dovecot asked about, and whether each was active. */
  introspected: Array<{ token: string; active: boolean }>;
  /** Every access and refresh token issued (tests look for them where they must not be). */
  issued: string[];
  /** The last authorization request's parameters. */
  lastAuthorization?: URLSearchParams;
  stop(): void;
}

export function startTokenIssuer(host = "127.0.0.2", expiresIn = 3600): TokenIssuer {
  const clientId = "corpus-test-client";
  const clientSecret = `secret-${random()}`;
  const codes = new Map<string, Code>();
  const refreshTokens = new Map<string, string>();
  const accessTokens = new Map<string, string>();
  const revoked = new Set<string>();
  const issuer: Omit<TokenIssuer, "url" | "authorizationEndpoint" | "tokenEndpoint" | "introspectionEndpoint" | "stop" | "approve"> = {
    clientId,
    clientSecret,
    revoke: (user) => revoked.add(user),
    counts: { authorization_code: 0, refresh_token: 0, refused: 0 },
    introspected: [],
    issued: [],
  };
  const refuse = (error: string) => {
    issuer.counts.refused++;
    return Response.json({ error }, { status: 400 });
  };
  const tokens = (user: string) => {
    const access = `at-${random()}`;
    const refresh = `rt-${random()}`;
    accessTokens.set(access, user);
    refreshTokens.set(refresh, user);
    issuer.issued.push(access, refresh);
    return Response.json({ access_token: access, token_type: "Bearer", expires_in: expiresIn, refresh_token: refresh });
  };
  const server = Bun.serve({
    hostname: host,
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname === "/authorize" && request.method === "GET") {
        const p = url.searchParams;
        issuer.lastAuthorization = p;
        const user = p.get("approve_as");
        const redirect = p.get("redirect_uri");
        if (!user || !redirect || p.get("client_id") !== clientId || p.get("response_type") !== "code") return refuse("invalid_request");
        if (p.get("code_challenge_method") !== "S256" || !p.get("code_challenge")) return refuse("invalid_request");
        const code = `code-${random()}`;
        codes.set(code, { user, challenge: p.get("code_challenge")!, redirectUri: redirect, clientId });
        const back = new URL(redirect);
        back.searchParams.set("code", code);
        back.searchParams.set("state", p.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: back.href } });
      }
      if (url.pathname === "/token" && request.method === "POST") {
        const form = new URLSearchParams(await request.text());
        if (form.get("client_id") !== clientId || form.get("client_secret") !== clientSecret) return refuse("invalid_client");
        if (form.get("grant_type") === "authorization_code") {
          const code = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          if (!code || code.redirectUri !== form.get("redirect_uri")) return refuse("invalid_grant");
          if (s256(form.get("code_verifier") ?? "") !== code.challenge) return refuse("invalid_grant");
          issuer.counts.authorization_code++;
          return tokens(code.user);
        }
        if (form.get("grant_type") === "refresh_token") {
          const old = form.get("refresh_token") ?? "";
          const user = refreshTokens.get(old);
          // Rotation: a refresh token is used once.
          refreshTokens.delete(old);
          if (!user || revoked.has(user)) return refuse("invalid_grant");
          issuer.counts.refresh_token++;
          return tokens(user);
        }
        return refuse("unsupported_grant_type");
      }
      if (url.pathname === "/introspect" && request.method === "POST") {
        const token = new URLSearchParams(await request.text()).get("token") ?? "";
        const user = accessTokens.get(token);
        const active = !!user && !revoked.has(user);
        issuer.introspected.push({ token, active });
        return Response.json(active ? { active: true, username: user } : { active: false });
      }
      return new Response("not found", { status: 404 });
    },
  });
  const base = `http://${host}:${server.port}`;
  return {
    ...issuer,
    url: base,
    authorizationEndpoint: `${base}/authorize`,
    tokenEndpoint: `${base}/token`,
    introspectionEndpoint: `${base}/introspect`,
    async approve(authorizeUrl, user) {
      const u = new URL(authorizeUrl);
      u.searchParams.set("approve_as", user);
      const res = await fetch(u, { redirect: "manual" });
      if (res.status !== 302) throw new Error(`the provider refused the authorization request: ${res.status} ${await res.text()}`);
      return new URL(res.headers.get("location")!);
    },
    get lastAuthorization() {
      return issuer.lastAuthorization;
    },
    stop: () => server.stop(true),
  };
}

/**
 * A CORPUS_IMAP_OAUTH_PROVIDERS_FILE (in a folder of its own) listing `issuer` as the provider
 * "local", titled "Local issuer", whose tokens go to 127.0.0.1: its path.
 */
export function localProvidersFile(issuer: TokenIssuer): string {
  const file = join(mkdtempSync(join(tmpdir(), "corpus-oauth-providers-")), "providers.json");
  writeFileSync(
    file,
    JSON.stringify([
      {
        id: "local",
        title: "Local issuer",
        authorization_endpoint: issuer.authorizationEndpoint,
        token_endpoint: issuer.tokenEndpoint,
        client_id: issuer.clientId,
        client_secret: issuer.clientSecret,
        scopes: ["imap", "offline_access"],
        imap_hosts: ["127.0.0.1"],
      },
    ]),
  );
  return file;
}
