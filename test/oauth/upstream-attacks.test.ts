// Attacks on the upstream OpenID Connect sign-in (issue 17). The provider here is a hostile
// one on loopback (a real HTTP server of the test's, with its own signing key): it answers
// the code with whatever ID token a case mints, so each check of corpus's can be shown to
// bite: a wrong nonce, another issuer or audience, an expired token, a foreign key, `none`,
// a MAC; a forged or replayed state, a state from another browser, an answer naming another
// issuer (mix-up). None of them signs anyone in. The good token does, and corpus's own ID
// token then carries the request's nonce.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { createLocalJWKSet, exportJWK, generateKeyPair, type JWK, jwtVerify, SignJWT, UnsecuredJWT } from "jose";
import { ConfigError, loadConfig } from "../../src/config";
import { beginRequest } from "../../src/http/request-context";
import { MAX_PENDING_PER_ADDRESS, upstreamUserId } from "../../src/oauth/upstream";
import { BASE, req, testApp } from "../helpers";
import { cookieOf, field, formPost, pkce, register, tokenRequest } from "./support";

const CLIENT_ID = "corpus";
const CLIENT_SECRET = "the upstream client secret";
const REDIRECT = "http://127.0.0.1:9999/cb";

let t: Awaited<ReturnType<typeof testApp>>;
let idp: ReturnType<typeof Bun.serve>;
let issuer = "";
let key: CryptoKey;
let publicJwk: JWK;
/** What the hostile provider's token endpoint answers next: an ID token made from the authorization request's nonce. */
let mint: (nonce: string) => Promise<string>;
let discoveryIssuer: (() => string) | undefined;
const tokenCalls: Array<{ authorization: string | null; form: URLSearchParams }> = [];
/** The authorization requests corpus sent the browser with, by state. */
const asked = new Map<string, URLSearchParams>();

const good = (nonce: string, claims: Record<string, unknown> = {}, alter?: (j: SignJWT) => SignJWT) => {
  const now = Math.floor(Date.now() / 1000);
  let jwt = new SignJWT({ nonce, preferred_username: "alice", ...claims })
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setIssuer(issuer)
    .setSubject("alice")
    .setAudience(CLIENT_ID)
    .setIssuedAt(now)
    .setExpirationTime(now + 300);
  if (alter) jwt = alter(jwt);
  return jwt.sign(key);
};

beforeAll(async () => {
  const pair = await generateKeyPair("ES256");
  key = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256", use: "sig" };
  idp = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      if (url.pathname.endsWith("/.well-known/openid-configuration"))
        return Response.json({
          issuer: discoveryIssuer?.() ?? issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ["code"],
          subject_types_supported: ["public"],
          id_token_signing_alg_values_supported: ["ES256", "HS256", "none"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["client_secret_basic"],
          authorization_response_iss_parameter_supported: true,
        });
      if (url.pathname === "/jwks") return Response.json({ keys: [publicJwk] });
      if (url.pathname === "/token") {
        const form = new URLSearchParams(await request.text());
        tokenCalls.push({ authorization: request.headers.get("authorization"), form });
        // The provider's PKCE check: the verifier must be the one whose challenge corpus sent.
        const challenge = createHash("sha256")
          .update(form.get("code_verifier") ?? "")
          .digest("base64url");
        const original = [...asked.values()].find((q) => q.get("code_challenge") === challenge);
        if (!original || form.get("code") !== `code-for-${original.get("state")}`)
          return Response.json({ error: "invalid_grant" }, { status: 400 });
        return Response.json({ access_token: "upstream-at", token_type: "Bearer", id_token: await mint(original.get("nonce")!) });
      }
      return new Response("not found", { status: 404 });
    },
  });
  issuer = `http://127.0.0.1:${idp.port}`;
  t = await testApp({ CORPUS_OIDC_ISSUER: issuer, CORPUS_OIDC_CLIENT_ID: CLIENT_ID, CORPUS_OIDC_CLIENT_SECRET: CLIENT_SECRET });
  // A password account named like the provider's person: never the one signed in.
  await t.services.accounts.add("alice", "alice's long password");
});

afterAll(() => idp?.stop(true));

/** An assistant's authorization request to corpus; corpus sends the browser to the provider. */
async function start(scope = "corpus:search") {
  const reg = await register(t.app, {
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
    client_name: "Upstream Attack Client",
  });
  const p = pkce();
  const query = new URLSearchParams({
    response_type: "code",
    client_id: reg.body.client_id,
    redirect_uri: REDIRECT,
    code_challenge: p.challenge,
    code_challenge_method: "S256",
    scope,
    nonce: "client-nonce-42",
  }).toString();
  const r = await t.app.handle(req(`/oauth/authorize?${query}`));
  expect(r.status).toBe(303);
  const to = new URL(r.headers.get("location")!);
  expect(to.origin + to.pathname).toBe(`${issuer}/authorize`);
  asked.set(to.searchParams.get("state")!, to.searchParams);
  return { to, browser: cookieOf(r, "corpus_oidc")!, query, clientId: reg.body.client_id as string, verifier: p.verifier };
}

/** The provider sends the browser back to corpus with a code (or what a case gives). */
function back(to: URL, cookie: string | undefined, extra: Record<string, string | null> = {}) {
  const state = to.searchParams.get("state")!;
  const params = new URLSearchParams({ code: `code-for-${state}`, state, iss: issuer });
  for (const [k, v] of Object.entries(extra))
    if (v === null) params.delete(k);
    else params.set(k, v);
  return t.app.handle(req(`/oauth/oidc/callback?${params}`, cookie ? { headers: { cookie } } : {}));
}

async function refused(r: Response, words: string) {
  expect(r.status).toBe(400);
  expect(cookieOf(r, "corpus_session")).toBeUndefined();
  const html = await r.text();
  expect(html).toContain(words);
  expect(html).not.toContain(CLIENT_SECRET);
  loggedFailure(t.logs.records(), "callback", words);
}

/** The operator sees why a sign-in failed: a warning with the reason (the last one logged), and neither the secret nor a code. */
function loggedFailure(records: Array<Record<string, unknown>>, stage: string, words: string) {
  const failure = records.findLast((l) => l.message === "upstream sign-in failed");
  expect(failure).toMatchObject({ level: "WARNING", logger: "oauth", stage, issuer: expect.stringContaining("127.0.0.1") });
  expect(String(failure!.reason)).toContain(words);
  const text = JSON.stringify(records);
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toContain("code-for-");
}

const upstreamUsers = async () => (await t.services.accounts.list()).filter((a) => a.upstream);

describe("upstream sign-in: what is checked", () => {
  test("the good answer signs the provider's alice in as a namespaced user; corpus's ID token carries the client's nonce", async () => {
    mint = (nonce) => good(nonce);
    const s = await start("openid corpus:search");
    expect(s.to.searchParams.get("code_challenge_method")).toBe("S256");
    expect(s.to.searchParams.get("client_id")).toBe(CLIENT_ID);
    expect(s.to.searchParams.get("nonce")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // corpus's nonce to the provider is its own, not the client's.
    expect(s.to.searchParams.get("nonce")).not.toBe("client-nonce-42");
    const before = tokenCalls.length;
    const r = await back(s.to, s.browser);
    expect(r.status).toBe(303);
    // corpus authenticated at the provider with HTTP Basic and sent its PKCE verifier.
    const call = tokenCalls[before]!;
    expect(call.authorization).toBe(`Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET.replaceAll(" ", "+")}`).toString("base64")}`);
    expect(call.form.get("redirect_uri")).toBe(`${t.config.issuer}/oauth/oidc/callback`);
    expect(r.headers.get("location")).toBe(`/oauth/authorize?${s.query}`);
    const session = cookieOf(r, "corpus_session")!;
    const user = upstreamUserId(issuer, "alice");
    expect(user).not.toBe("alice");
    const consentPage = await t.app.handle(req(`/oauth/authorize?${s.query}`, { headers: { cookie: session } }));
    const html = await consentPage.text();
    expect(html).toContain(user);
    const done = await t.app.handle(
      formPost(
        "/oauth/consent",
        { csrf: field(html, "csrf")!, request: s.query, decision: "allow", grant_scope: ["openid", "corpus:search"] },
        { cookie: session },
      ),
    );
    const code = new URL(done.headers.get("location")!).searchParams.get("code")!;
    const tokens = await tokenRequest(t.app, {
      grant_type: "authorization_code",
      code,
      code_verifier: s.verifier,
      client_id: s.clientId,
      redirect_uri: REDIRECT,
    });
    expect(tokens.status).toBe(200);
    const jwks = createLocalJWKSet((await (await t.app.handle(req("/.well-known/jwks.json"))).json()) as { keys: JWK[] });
    const { payload } = await jwtVerify(tokens.body.id_token, jwks, { issuer: t.config.issuer, audience: s.clientId });
    expect(payload.sub).toBe(user);
    expect(payload.nonce).toBe("client-nonce-42");
    // The ID token is no access token: /mcp refuses it (its audience is the client).
    const mcp = await t.app.handle(
      new Request(`${BASE}/mcp`, {
        method: "POST",
        headers: {
          authorization: `Bearer ${tokens.body.id_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
      }),
    );
    expect(mcp.status).toBe(401);
    // corpus user list shows where the person came from; removing them ends their session.
    expect((await t.services.accounts.list()).find((a) => a.id === user)?.upstream).toMatchObject({
      issuer,
      subject: "alice",
      name: "alice",
    });
    expect((await t.app.handle(req("/oauth/apps", { headers: { cookie: session } }))).status).toBe(200);
    expect(t.services.accounts.remove(user)).toBe(true);
    t.services.oauth.forgetUser(user);
    const after = await t.app.handle(req("/oauth/apps", { headers: { cookie: session } }));
    expect(after.status).toBe(303);
    expect(after.headers.get("location")).toStartWith(`${issuer}/authorize?`);
    expect(t.services.accounts.exists("alice")).toBe(true);
  });

  const cases: Array<[string, (nonce: string) => Promise<string>, string]> = [
    ["a wrong nonce", (_n) => good("another-nonce"), "nonce"],
    ["no nonce", (_n) => good(undefined as never), "nonce"],
    ["an ID token from another issuer", (n) => good(n, {}, (j) => j.setIssuer("http://127.0.0.1:1")), "iss claim"],
    ["an ID token for another audience", (n) => good(n, {}, (j) => j.setAudience("someone-else")), "aud claim"],
    ["two audiences without azp", (n) => good(n, {}, (j) => j.setAudience([CLIENT_ID, "someone-else"])), "azp"],
    ["azp naming another client", (n) => good(n, { azp: "someone-else" }), "azp"],
    [
      "an expired ID token",
      (n) => good(n, {}, (j) => j.setIssuedAt(Math.floor(Date.now() / 1000) - 7200).setExpirationTime("-1h")),
      "expired",
    ],
    [
      "an ID token signed by a key not in the provider's JWKS",
      async (n) => {
        const other = await generateKeyPair("ES256");
        const now = Math.floor(Date.now() / 1000);
        return new SignJWT({ nonce: n })
          .setProtectedHeader({ alg: "ES256", kid: "k1" })
          .setIssuer(issuer)
          .setSubject("alice")
          .setAudience(CLIENT_ID)
          .setIssuedAt(now)
          .setExpirationTime(now + 300)
          .sign(other.privateKey);
      },
      "signature",
    ],
    [
      "an unsigned ID token (alg none)",
      async (n) =>
        new UnsecuredJWT({ nonce: n })
          .setIssuer(issuer)
          .setSubject("alice")
          .setAudience(CLIENT_ID)
          .setIssuedAt()
          .setExpirationTime("5m")
          .encode(),
      "ID token was refused",
    ],
    [
      "an ID token MACed with the client secret (HS256)",
      async (n) =>
        new SignJWT({ nonce: n })
          .setProtectedHeader({ alg: "HS256" })
          .setIssuer(issuer)
          .setSubject("alice")
          .setAudience(CLIENT_ID)
          .setIssuedAt()
          .setExpirationTime("5m")
          .sign(new TextEncoder().encode(CLIENT_SECRET)),
      "ID token was refused",
    ],
  ];
  for (const [name, minted, words] of cases) {
    test(`${name} is refused`, async () => {
      const users = (await upstreamUsers()).length;
      mint = minted;
      const s = await start();
      await refused(await back(s.to, s.browser), words);
      expect((await upstreamUsers()).length).toBe(users);
    });
  }

  test("a forged state is refused before the provider is asked for tokens", async () => {
    mint = (nonce) => good(nonce);
    const s = await start();
    const calls = tokenCalls.length;
    await refused(await back(s.to, s.browser, { state: "forged-state" }), "unknown or has expired");
    expect(tokenCalls.length).toBe(calls);
  });

  test("a state from another browser (no cookie, or another sign-in's) is refused, and does not burn the real one", async () => {
    mint = (nonce) => good(nonce);
    const victim = await start();
    const attacker = await start();
    const calls = tokenCalls.length;
    await refused(await back(victim.to, undefined), "another browser");
    await refused(await back(victim.to, attacker.browser), "another browser");
    expect(tokenCalls.length).toBe(calls);
    // The victim's own browser still completes, once; the same answer replayed is refused.
    expect((await back(victim.to, victim.browser)).status).toBe(303);
    await refused(await back(victim.to, victim.browser), "unknown or has expired");
  });

  test("a flood of anonymous page views from one address (or one IPv6 /64) forgets only that address's pending sign-ins", async () => {
    mint = (nonce) => good(nonce);
    const victim = await start();
    const pendingBefore = t.services.oauth.upstream!.pendingCount();
    const view = async (from: string) => {
      const r = req("/oauth/apps");
      beginRequest(r, from);
      const answer = await t.app.handle(r);
      expect(answer.status).toBe(303);
      return { to: new URL(answer.headers.get("location")!), browser: cookieOf(answer, "corpus_oidc")! };
    };
    const first = await view("198.51.100.66");
    for (let i = 0; i < 3 * MAX_PENDING_PER_ADDRESS; i++) {
      await view("198.51.100.66");
      await view(`2001:db8:66:1::${(i + 1).toString(16)}`);
    }
    // Each address (the /64 as one) keeps its newest ten; nobody else's was forgotten.
    expect(t.services.oauth.upstream!.pendingCount()).toBe(pendingBefore + 2 * MAX_PENDING_PER_ADDRESS);
    await refused(await back(first.to, first.browser), "unknown or has expired");
    expect((await back(victim.to, victim.browser)).status).toBe(303);
  });

  test("an answer naming another issuer, or none where the provider promises one (mix-up, RFC 9207), is refused", async () => {
    mint = (nonce) => good(nonce);
    const a = await start();
    await refused(await back(a.to, a.browser, { iss: "https://evil.example" }), "another issuer");
    const b = await start();
    await refused(await back(b.to, b.browser, { iss: null }), "another issuer");
  });

  test("a token answer larger than 256 KiB is not read to its end, and signs no one in", async () => {
    mint = async () => "x".repeat(300 * 1024);
    const s = await start();
    await refused(await back(s.to, s.browser), "too large");
  });

  test("the provider's refusal is shown, and signs no one in", async () => {
    const s = await start();
    await refused(await back(s.to, s.browser, { code: null, error: "access_denied" }), "refused the sign-in (access_denied)");
  });

  test("a discovery document naming another issuer stops sign-in before the browser is sent anywhere", async () => {
    const other = await testApp({
      CORPUS_OIDC_ISSUER: `${issuer}/realms/other`,
      CORPUS_OIDC_CLIENT_ID: CLIENT_ID,
      CORPUS_OIDC_CLIENT_SECRET: CLIENT_SECRET,
    });
    discoveryIssuer = () => "https://someone-else.example";
    try {
      const r = await other.app.handle(req("/oauth/apps"));
      expect(r.status).toBe(502);
      expect(r.headers.get("location")).toBeNull();
      expect(await r.text()).toContain("another issuer");
      loggedFailure(other.logs.records(), "start", "another issuer");
    } finally {
      discoveryIssuer = undefined;
    }
  });
});

describe("upstream sign-in: configuration and mapping", () => {
  const base = {
    CORPUS_OIDC_ISSUER: "https://id.example.com/realms/corp",
    CORPUS_OIDC_CLIENT_ID: "corpus",
    CORPUS_OIDC_CLIENT_SECRET: "s",
  };
  test("the variables are checked at start with a clear error", () => {
    expect(() => loadConfig({ ...base })).not.toThrow();
    const fails = (env: Record<string, string>, words: string) => {
      let error: unknown;
      try {
        loadConfig(env);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain(words);
      expect((error as Error).message).not.toContain("s3cret");
    };
    fails({ ...base, CORPUS_OIDC_CLIENT_SECRET: "" }, "CORPUS_OIDC_CLIENT_SECRET is not set");
    fails({ ...base, CORPUS_OIDC_CLIENT_ID: "" }, "CORPUS_OIDC_CLIENT_ID is not set");
    fails({ CORPUS_OIDC_CLIENT_ID: "corpus" }, "CORPUS_OIDC_ISSUER is not");
    fails({ ...base, CORPUS_OIDC_ISSUER: "http://id.example.com" }, "https://");
    fails({ ...base, CORPUS_OIDC_ISSUER: "https://id.example.com/?x=1" }, "without query");
    fails({ ...base, CORPUS_OIDC_ISSUER: "id.example.com" }, "CORPUS_OIDC_ISSUER");
    fails({ ...base, CORPUS_OAUTH_AUTHORIZATION_ENDPOINT: "https://a.example/auth" }, "set one or the other");
    fails({ ...base, CORPUS_OIDC_CLIENT_SECRET: "x".repeat(1025) }, "CORPUS_OIDC_CLIENT_SECRET=(hidden)");
    expect(() => loadConfig({ ...base, CORPUS_OIDC_ISSUER: "http://127.0.0.1:8081" })).not.toThrow();
  });

  test("sub is namespaced by the issuer; a sub a user id cannot hold is hashed", () => {
    const keycloak = "https://id.example.com/realms/corp";
    expect(upstreamUserId(keycloak, "f81d4fae-7dec-11d0-a765-00a0c91e6bf6")).toMatch(
      /^oidc-[0-9a-f]{8}-f81d4fae-7dec-11d0-a765-00a0c91e6bf6$/,
    );
    expect(upstreamUserId(keycloak, "alice")).not.toBe(upstreamUserId("https://id.example.com/realms/other", "alice"));
    expect(upstreamUserId(keycloak, "auth0|123/../x")).toMatch(/^oidc-[0-9a-f]{8}-h[0-9a-f]{32}$/);
    expect(upstreamUserId(keycloak, "a".repeat(200))).toMatch(/^oidc-[0-9a-f]{8}-h[0-9a-f]{32}$/);
  });

  test("without a provider there is no openid-configuration, and openid is not a scope", async () => {
    const plain = await testApp();
    const r = await plain.app.handle(req("/.well-known/openid-configuration"));
    expect(r.status).toBe(404);
    expect(((await r.json()) as { type: string }).type).toBeString();
    const reg = await register(plain.app, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const a = await plain.app.handle(
      req(
        `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: reg.body.client_id, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256", scope: "openid" })}`,
      ),
    );
    expect(new URL(a.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");
  });
});
