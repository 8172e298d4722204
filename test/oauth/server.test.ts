// The built-in authorization server (D27, D28) in-process: metadata, registration, the code
// flow with PKCE, refresh rotation and reuse, revocation, and every refusal it promises.
import { beforeAll, describe, expect, test } from "bun:test";
import { bearer, postJson, req, testApp } from "../helpers";
import { consent, cookieOf, field, formPost, pkce, register, signIn, tokenRequest } from "./support";

const REDIRECT = "http://127.0.0.1:9999/callback";
let t: Awaited<ReturnType<typeof testApp>>;
let clock = Date.now();
let session: string;
let clientId: string;

beforeAll(async () => {
  t = await testApp({}, () => clock);
  await t.services.accounts.add("alice", "correct horse battery");
  await t.services.accounts.add("bob", "another long password");
  const reg = await register(t.app, {
    client_name: "Test assistant",
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: "none",
    grant_types: ["authorization_code", "refresh_token"],
  });
  expect(reg.status).toBe(201);
  clientId = reg.body.client_id;
  session = await signIn(t.app, "alice", "correct horse battery");
});

const resource = () => t.config.resourceUrl;

/** The authorization request's fixed part: this test's client, its redirect, S256 with `challenge`. */
const codeRequest = (challenge: string) => ({
  response_type: "code",
  client_id: clientId,
  redirect_uri: REDIRECT,
  code_challenge: challenge,
  code_challenge_method: "S256",
});

/**
 * Consent (by alice, or the session `as`) to this client's code request with a fresh PKCE pair
 * and the fields of `extra`: the redirect back to the client, and the PKCE verifier.
 */
async function consented(extra: Record<string, string>, opts: { as?: string; decision?: string; granted?: string[] } = {}) {
  const p = pkce();
  const url = await consent(t.app, opts.as ?? session, { ...codeRequest(p.challenge), ...extra }, opts.decision, opts.granted);
  return { url, verifier: p.verifier };
}

async function codeFor(scope = "corpus:search offline_access", extra: Record<string, string> = {}) {
  const { url, verifier } = await consented({ state: "s1", scope, resource: resource(), ...extra });
  return { url, code: url.searchParams.get("code")!, verifier };
}

const exchange = (code: string, verifier: string) =>
  tokenRequest(t.app, {
    grant_type: "authorization_code",
    code,
    code_verifier: verifier,
    client_id: clientId,
    redirect_uri: REDIRECT,
    resource: resource(),
  });

/** A refresh_token grant of this client. */
const refresh = (refreshToken: string) =>
  tokenRequest(t.app, { grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId });

const mcpList = (token: string) =>
  t.app.handle(
    postJson(
      "/mcp",
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { ...bearer(token), accept: "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18" },
    ),
  );

describe("metadata", () => {
  test("RFC 8414 document of the built-in server, consistent with the protected-resource document", async () => {
    const as = (await (await t.app.handle(req("/.well-known/oauth-authorization-server"))).json()) as Record<string, any>;
    const pr = (await (await t.app.handle(req("/.well-known/oauth-protected-resource"))).json()) as Record<string, any>;
    expect(pr.authorization_servers).toEqual([as.issuer]);
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    expect(as.authorization_response_iss_parameter_supported).toBe(true);
    expect(as.client_id_metadata_document_supported).toBe(true);
    expect(as.response_types_supported).toEqual(["code"]);
    for (const k of ["authorization_endpoint", "token_endpoint", "registration_endpoint", "revocation_endpoint", "jwks_uri"])
      expect(as[k]).toStartWith(`${as.issuer}/`);
    for (const s of pr.scopes_supported) expect(as.scopes_supported).toContain(s);
    expect(as.scopes_supported).toContain("offline_access");
  });
});

describe("the code flow", () => {
  test("code with iss and state; the access token works on /mcp; refresh rotates; reuse revokes the grant", async () => {
    const { url, code, verifier } = await codeFor();
    expect(url.origin + url.pathname).toBe(REDIRECT);
    expect(url.searchParams.get("iss")).toBe(t.config.issuer);
    expect(url.searchParams.get("state")).toBe("s1");
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect(first.headers.get("cache-control")).toBe("no-store");
    expect(first.body.token_type).toBe("Bearer");
    expect(first.body.scope).toBe("corpus:search offline_access");
    expect(first.body.refresh_token).toBeString();
    expect((await mcpList(first.body.access_token)).status).toBe(200);

    const second = await refresh(first.body.refresh_token);
    expect(second.status).toBe(200);
    expect(second.body.refresh_token).not.toBe(first.body.refresh_token);
    expect((await mcpList(second.body.access_token)).status).toBe(200);

    // The old refresh token again: the whole grant ends, its access tokens with it.
    const replay = await refresh(first.body.refresh_token);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    expect((await mcpList(second.body.access_token)).status).toBe(401);
    expect((await mcpList(first.body.access_token)).status).toBe(401);
    const after = await refresh(second.body.refresh_token);
    expect(after.status).toBe(400);
  });

  test("no refresh token without offline_access", async () => {
    const { code, verifier } = await codeFor("corpus:search");
    const r = await exchange(code, verifier);
    expect(r.status).toBe(200);
    expect(r.body.refresh_token).toBeUndefined();
  });

  test("the user's unchecked scopes are not granted", async () => {
    const { url, verifier } = await consented({ scope: "corpus:search connectors:write" }, { granted: ["corpus:search"] });
    const r = await exchange(url.searchParams.get("code")!, verifier);
    expect(r.body.scope).toBe("corpus:search");
  });

  test("deny sends access_denied to the client", async () => {
    const { url } = await consented({ state: "x" }, { decision: "deny" });
    expect(url.searchParams.get("error")).toBe("access_denied");
    expect(url.searchParams.get("state")).toBe("x");
    expect(url.searchParams.get("iss")).toBe(t.config.issuer);
  });

  test("revocation (RFC 7009) of the refresh token ends access", async () => {
    const { code, verifier } = await codeFor();
    const r = await exchange(code, verifier);
    expect((await mcpList(r.body.access_token)).status).toBe(200);
    const rv = await t.app.handle(formPost("/oauth/revoke", { token: r.body.refresh_token, client_id: clientId }));
    expect(rv.status).toBe(200);
    expect((await mcpList(r.body.access_token)).status).toBe(401);
    expect((await refresh(r.body.refresh_token)).status).toBe(400);
  });

  test("revocation of an access token ends that token", async () => {
    const { code, verifier } = await codeFor("corpus:search");
    const r = await exchange(code, verifier);
    await t.app.handle(formPost("/oauth/revoke", { token: r.body.access_token, client_id: clientId }));
    expect((await mcpList(r.body.access_token)).status).toBe(401);
  });

  test("a loopback redirect matches on any port (RFC 8252)", async () => {
    const { url } = await consented({ redirect_uri: "http://127.0.0.1:51234/callback" });
    expect(url.port).toBe("51234");
    expect(url.searchParams.get("code")).toBeString();
  });
});

describe("refusals", () => {
  const authorize = (q: Record<string, string>, cookie = session) =>
    t.app.handle(req(`/oauth/authorize?${new URLSearchParams(q)}`, { headers: { cookie } }));

  test("PKCE missing or plain is refused", async () => {
    const missing = await authorize({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT });
    expect(missing.status).toBe(303);
    expect(new URL(missing.headers.get("location")!).searchParams.get("error")).toBe("invalid_request");
    const plain = await authorize({
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: "a".repeat(43),
      code_challenge_method: "plain",
    });
    expect(new URL(plain.headers.get("location")!).searchParams.get("error_description")).toContain("S256");
  });

  test("a wrong code_verifier is refused", async () => {
    const { code } = await codeFor();
    const r = await exchange(code, pkce().verifier);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_grant");
  });

  test("a code used twice revokes its tokens", async () => {
    const { code, verifier } = await codeFor();
    const first = await exchange(code, verifier);
    expect((await mcpList(first.body.access_token)).status).toBe(200);
    const again = await exchange(code, verifier);
    expect(again.status).toBe(400);
    expect((await mcpList(first.body.access_token)).status).toBe(401);
    expect((await refresh(first.body.refresh_token)).status).toBe(400);
  });

  test("an expired code is refused", async () => {
    const { code, verifier } = await codeFor();
    clock += 61_000;
    try {
      expect((await exchange(code, verifier)).body.error).toBe("invalid_grant");
    } finally {
      clock -= 61_000;
    }
  });

  test("a redirect URI not registered is refused on a page, never redirected to", async () => {
    for (const uri of ["https://evil.example/cb", "http://127.0.0.1:9999/other", "http://evil.example:9999/callback"]) {
      const r = await authorize({
        response_type: "code",
        client_id: clientId,
        redirect_uri: uri,
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
      });
      expect(r.status).toBe(400);
      expect(r.headers.get("location")).toBeNull();
    }
  });

  test("registration refuses dangerous redirect URIs", async () => {
    for (const uri of ["http://evil.example/cb", "javascript:alert(1)", "https://x.example/cb#frag", "data:text/html,x"]) {
      const r = await register(t.app, { redirect_uris: [uri], token_endpoint_auth_method: "none" });
      expect(r.status).toBe(400);
      expect(r.body.error).toBe("invalid_redirect_uri");
    }
  });

  test("a token for another resource is refused", async () => {
    const r = await authorize({
      ...codeRequest(pkce().challenge),
      resource: "https://other.example/mcp",
    });
    expect(new URL(r.headers.get("location")!).searchParams.get("error")).toBe("invalid_target");
    const { code, verifier } = await codeFor();
    const tr = await tokenRequest(t.app, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: clientId,
      resource: "https://other.example",
    });
    expect(tr.body.error).toBe("invalid_target");
  });

  test("another client cannot redeem the code", async () => {
    const other = await register(t.app, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    const { code, verifier } = await codeFor();
    const r = await tokenRequest(t.app, {
      grant_type: "authorization_code",
      code,
      code_verifier: verifier,
      client_id: other.body.client_id,
    });
    expect(r.body.error).toBe("invalid_grant");
  });

  test("a confidential client must present its secret", async () => {
    const conf = await register(t.app, { redirect_uris: [REDIRECT], client_name: "Conf" });
    expect(conf.body.client_secret).toBeString();
    const r = await tokenRequest(t.app, {
      grant_type: "refresh_token",
      refresh_token: "x",
      client_id: conf.body.client_id,
      client_secret: "wrong",
    });
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
  });

  test("a token request without grant_type is invalid_request; Basic credentials and a client_secret in the body together are refused", async () => {
    const conf = await register(t.app, { redirect_uris: [REDIRECT], client_name: "Two Methods" });
    const basic = {
      authorization: `Basic ${Buffer.from(`${encodeURIComponent(conf.body.client_id)}:${encodeURIComponent(conf.body.client_secret)}`).toString("base64")}`,
    };
    const missing = await tokenRequest(t.app, { refresh_token: "x" }, basic);
    expect([missing.status, missing.body.error]).toEqual([400, "invalid_request"]);
    const unknown = await tokenRequest(t.app, { grant_type: "password", refresh_token: "x" }, basic);
    expect([unknown.status, unknown.body.error]).toEqual([400, "unsupported_grant_type"]);
    const both = await tokenRequest(
      t.app,
      { grant_type: "refresh_token", refresh_token: "x", client_secret: conf.body.client_secret },
      basic,
    );
    expect([both.status, both.body.error]).toEqual([400, "invalid_request"]);
    expect(both.body.error_description).toContain("one method");
  });

  test("login CSRF: a form without the login cookie's token is refused", async () => {
    const r = await t.app.handle(
      formPost("/oauth/login", { user: "alice", password: "correct horse battery", csrf: "x".repeat(43), return: "/oauth/apps" }),
    );
    expect(r.status).toBe(403);
    expect(cookieOf(r, "corpus_session")).toBeUndefined();
  });

  test("consent CSRF: a form without the session's token is refused", async () => {
    const p = pkce();
    const q = new URLSearchParams({
      ...codeRequest(p.challenge),
    }).toString();
    const r = await t.app.handle(
      formPost("/oauth/consent", { csrf: "forged", request: q, decision: "allow", grant_scope: "corpus:search" }, { cookie: session }),
    );
    expect(r.status).toBe(403);
    expect(r.headers.get("location")).toBeNull();
  });

  test("a form posted from another origin is refused", async () => {
    const r = await t.app.handle(formPost("/oauth/login", { user: "alice", password: "x" }, { origin: "https://evil.example" }));
    expect(r.status).toBe(403);
  });

  test("pages cannot be framed and the session cookie is HttpOnly, SameSite=Lax", async () => {
    const page = await t.app.handle(req("/oauth/apps"));
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    const consentPage = await t.app.handle(
      req(
        `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256" })}`,
        { headers: { cookie: session } },
      ),
    );
    expect(consentPage.status).toBe(200);
    expect(consentPage.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await consentPage.text();
    expect(html).toContain("Test assistant");
    expect(html).toContain("127.0.0.1:9999");
    const login = await t.app.handle(req("/oauth/apps"));
    const csrf = field(await login.text(), "csrf")!;
    const r = await t.app.handle(
      formPost(
        "/oauth/login",
        { user: "bob", password: "another long password", csrf, return: "/oauth/apps" },
        { cookie: cookieOf(login, "corpus_login")! },
      ),
    );
    const set = r.headers.getSetCookie().find((c) => c.startsWith("corpus_session="))!;
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Lax");
    expect(set).not.toContain("Secure"); // served over plain http here
  });

  test("login brute force is throttled per account and address, even with the right password after", async () => {
    await t.services.accounts.add("carol", "carol's long password");
    const page = await t.app.handle(req("/oauth/apps"));
    const cookie = cookieOf(page, "corpus_login")!;
    const csrf = field(await page.text(), "csrf")!;
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++)
      statuses.push(
        (await t.app.handle(formPost("/oauth/login", { user: "carol", password: `guess-${i}-xxxxxx`, csrf }, { cookie }))).status,
      );
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const right = await t.app.handle(formPost("/oauth/login", { user: "carol", password: "carol's long password", csrf }, { cookie }));
    expect(right.status).toBe(429);
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0);
    clock += 16 * 60_000;
    const later = await t.app.handle(
      formPost("/oauth/login", { user: "carol", password: "carol's long password", csrf, return: "/oauth/apps" }, { cookie }),
    );
    expect(later.status).toBe(303);
  });
});

describe("connected apps", () => {
  test("a user sees their apps and revokes one; another user's grant is not theirs to revoke", async () => {
    const { code, verifier } = await codeFor();
    const tok = await exchange(code, verifier);
    const page = await (await t.app.handle(req("/oauth/apps", { headers: { cookie: session } }))).text();
    expect(page).toContain("Test assistant");
    const csrf = field(page, "csrf")!;
    const grants = [...page.matchAll(/name="grant" value="([^"]*)"/g)].map((m) => m[1]!);
    expect(grants.length).toBeGreaterThan(0);
    const bob = await signIn(t.app, "bob", "another long password");
    const bobPage = await (await t.app.handle(req("/oauth/apps", { headers: { cookie: bob } }))).text();
    const foreign = await t.app.handle(
      formPost("/oauth/apps/revoke", { csrf: field(bobPage, "csrf")!, grant: grants.at(-1)! }, { cookie: bob }),
    );
    expect(foreign.status).toBe(404);
    expect((await mcpList(tok.body.access_token)).status).toBe(200);
    for (const g of grants)
      expect((await t.app.handle(formPost("/oauth/apps/revoke", { csrf, grant: g }, { cookie: session }))).status).toBe(200);
    expect((await mcpList(tok.body.access_token)).status).toBe(401);
    expect(await (await t.app.handle(req("/oauth/apps", { headers: { cookie: session } }))).text()).toContain(
      "No application holds access",
    );
  });
});

describe("ending a user's access", () => {
  test("a password change (forgetUser) ends sessions and grants; delete_my_data ends refresh too", async () => {
    await t.services.accounts.add("dora", "dora's long password");
    const doraSession = await signIn(t.app, "dora", "dora's long password");
    const { url, verifier } = await consented({ scope: "corpus:search connectors:write offline_access" }, { as: doraSession });
    const tok = await exchange(url.searchParams.get("code")!, verifier);
    expect((await mcpList(tok.body.access_token)).status).toBe(200);
    // Deleting her data: her tokens are revoked and no refresh mints a new one.
    const del = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(tok.body.access_token) }));
    expect(del.status).toBe(200);
    expect((await refresh(tok.body.refresh_token)).status).toBe(400);
    // No row of the authorization server names her any more (her account is the operator's, and stays).
    for (const table of ["oauth_grants", "oauth_codes", "oauth_sessions"])
      expect(t.db.query(`SELECT count(*) AS n FROM ${table} WHERE user_id = 'dora'`).get()).toEqual({ n: 0 });
    // Her sessions ended with it.
    expect(await (await t.app.handle(req("/oauth/apps", { headers: { cookie: doraSession } }))).text()).toContain("Sign in to corpus");
    clock += 2000;
    const again = await signIn(t.app, "dora", "dora's long password");
    const second = await consented({ scope: "corpus:search offline_access" }, { as: again });
    const tok2 = await exchange(second.url.searchParams.get("code")!, second.verifier);
    expect((await mcpList(tok2.body.access_token)).status).toBe(200);
    await t.services.accounts.setPassword("dora", "dora's new long password");
    t.services.oauth.forgetUser("dora");
    expect((await mcpList(tok2.body.access_token)).status).toBe(401);
    expect((await refresh(tok2.body.refresh_token)).status).toBe(400);
    const page = await t.app.handle(req("/oauth/apps", { headers: { cookie: again } }));
    expect(await page.text()).toContain("Sign in to corpus");
  });
});

describe("registration limits", () => {
  test("one address registers at most 20 clients an hour (429 with Retry-After); refused metadata does not count", async () => {
    let now = Date.now();
    const fresh = await testApp({}, () => now);
    for (let i = 0; i < 5; i++) expect((await register(fresh.app, { redirect_uris: ["http://evil.example/cb"] })).status).toBe(400);
    for (let i = 0; i < 20; i++)
      expect((await register(fresh.app, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })).status).toBe(201);
    const r = await fresh.app.handle(postJson("/oauth/register", { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" }));
    expect(r.status).toBe(429);
    expect(((await r.json()) as { error: string }).error).toBe("temporarily_unavailable");
    expect(Number(r.headers.get("retry-after"))).toBeGreaterThan(0);
    now += 3_601_000;
    expect((await register(fresh.app, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" })).status).toBe(201);
    await fresh.services.close();
  });
});

describe("what is kept", () => {
  test("expired codes, sessions, tokens and dead grants are swept; nothing grows with use", async () => {
    let now = Date.now();
    const fresh = await testApp({}, () => now);
    await fresh.services.accounts.add("erin", "erin's long password");
    const reg = await register(fresh.app, {
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
      grant_types: ["authorization_code", "refresh_token"],
    });
    const s = await signIn(fresh.app, "erin", "erin's long password");
    for (let i = 0; i < 5; i++) {
      const p = pkce();
      const url = await consent(fresh.app, s, {
        response_type: "code",
        client_id: reg.body.client_id,
        redirect_uri: REDIRECT,
        code_challenge: p.challenge,
        code_challenge_method: "S256",
        scope: i % 2 ? "corpus:search offline_access" : "corpus:search",
      });
      await tokenRequest(fresh.app, {
        grant_type: "authorization_code",
        code: url.searchParams.get("code")!,
        code_verifier: p.verifier,
        client_id: reg.body.client_id,
      });
    }
    const count = (table: string) => fresh.db.query<{ n: number }, []>(`SELECT count(*) AS n FROM ${table}`).get()!.n;
    expect(count("oauth_grants")).toBe(5);
    now += 2 * 3600_000; // access tokens (15 min) and the session-less grants are dead; refresh tokens live on
    fresh.services.oauth.purgeExpired();
    expect(count("oauth_grants")).toBe(2);
    expect(count("oauth_codes")).toBe(0);
    now += 31 * 24 * 3600_000;
    fresh.services.oauth.purgeExpired();
    for (const table of ["oauth_grants", "oauth_codes", "oauth_refresh_tokens", "oauth_access_tokens", "oauth_sessions"])
      expect(count(table)).toBe(0);
    // A registered client holding no grant for a day goes too (a client told invalid_client registers again).
    expect(count("oauth_clients")).toBe(0);
    await fresh.services.close();
  });

  test("the session cookie is Secure when the server is reached over HTTPS", async () => {
    const https = await testApp({
      CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com",
      CORPUS_OAUTH_ISSUER: "https://corpus.example.com",
    });
    await https.services.accounts.add("fred", "fred's long password");
    const page = await https.app.handle(new Request("https://corpus.example.com/oauth/apps"));
    const login = cookieOf(page, "corpus_login")!;
    expect(page.headers.getSetCookie()[0]).toContain("; Secure");
    const csrf = field(await page.text(), "csrf")!;
    const r = await https.app.handle(
      new Request("https://corpus.example.com/oauth/login", {
        method: "POST",
        headers: { cookie: login, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ user: "fred", password: "fred's long password", csrf }).toString(),
      }),
    );
    expect(r.status).toBe(303);
    expect(r.headers.getSetCookie().find((c) => c.startsWith("corpus_session="))).toContain("; Secure");
    await https.services.close();
  });
});

describe("hostile input", () => {
  test("malformed Basic credentials are 401 invalid_client; a huge user name is a failed sign-in, not a kept key", async () => {
    const r = await tokenRequest(
      t.app,
      { grant_type: "refresh_token", refresh_token: "x" },
      { authorization: `Basic ${Buffer.from("%E0%A4%A:%zz").toString("base64")}` },
    );
    expect(r.status).toBe(401);
    expect(r.body.error).toBe("invalid_client");
    const page = await t.app.handle(req("/oauth/apps"));
    const cookie = cookieOf(page, "corpus_login")!;
    const csrf = field(await page.text(), "csrf")!;
    const big = await t.app.handle(formPost("/oauth/login", { user: "x".repeat(15_000), password: "p", csrf }, { cookie }));
    expect([401, 429]).toContain(big.status);
    expect((await big.text()).includes("x".repeat(200))).toBe(false);
    const json = await t.app.handle(postJson("/oauth/token", { grant_type: "authorization_code" }));
    expect(json.status).toBe(400);
    expect(((await json.json()) as { error: string }).error).toBe("invalid_request");
  });
});

describe("the connector panel under an OAuth grant", () => {
  test("a panel opened with a grant's access token ends when the grant is revoked from connected apps", async () => {
    const { code, verifier } = await codeFor("connectors:read connectors:write offline_access");
    const tok = await exchange(code, verifier);
    const opened = await t.app.handle(
      postJson(
        "/mcp",
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "open_connectors", arguments: {} } },
        { ...bearer(tok.body.access_token), accept: "application/json", "mcp-protocol-version": "2025-06-18" },
      ),
    );
    const { PANEL_META } = await import("../../src/mcp/widget");
    const panel = ((await opened.json()) as { result: { _meta: Record<string, any> } }).result._meta[PANEL_META].token as string;
    expect((await t.app.handle(req("/v1/connectors", { headers: bearer(panel) }))).status).toBe(200);
    const page = await (await t.app.handle(req("/oauth/apps", { headers: { cookie: session } }))).text();
    for (const g of [...page.matchAll(/name="grant" value="([^"]*)"/g)].map((m) => m[1]!)) {
      await t.app.handle(formPost("/oauth/apps/revoke", { csrf: field(page, "csrf")!, grant: g }, { cookie: session }));
    }
    expect((await t.app.handle(req("/v1/connectors", { headers: bearer(panel) }))).status).toBe(401);
  });
});
