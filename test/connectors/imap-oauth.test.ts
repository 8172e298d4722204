// Mailboxes that take no password (issue 38): an IMAP connector signs in with OAuth 2.0 (SASL
// OAUTHBEARER or XOAUTH2) against a real Dovecot whose oauth2 passdb introspects tokens at a
// token issuer on loopback (test/support/oauth-issuer.ts). The grant: authorization code with
// PKCE S256 started by a REST route, finished at corpus's callback; the refresh token sealed and
// refreshed before the access token expires; a revoked grant is `error` with its reason.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ConnectorViewT } from "../../src/connectors/model";
import { BASE, bearer, patchJson, postJson, req } from "../helpers";
import { type App, appPerTest, listedConnector } from "../support/app-per-test";
import { type OAuthDovecot, startOAuthDovecot } from "../support/dovecot-oauth";
import { localProvidersFile, startTokenIssuer, type TokenIssuer } from "../support/oauth-issuer";

setDefaultTimeout(60_000);

let issuer: TokenIssuer;
let dovecot: OAuthDovecot;
let xoauth2: OAuthDovecot;
let providersFile: string;
const newApp = appPerTest();

beforeAll(async () => {
  // On 127.0.0.2: another loopback address than Dovecot's, so that the SSRF rules can tell them apart.
  issuer = startTokenIssuer("127.0.0.2");
  // 200 of the Enron messages (the CPUC hearing's among them): the server's SEARCH stays quick on a busy machine.
  dovecot = await startOAuthDovecot({ introspectionUrl: issuer.introspectionEndpoint, mechanisms: "oauthbearer xoauth2", messages: 200 });
  xoauth2 = await startOAuthDovecot({ introspectionUrl: issuer.introspectionEndpoint, mechanisms: "xoauth2", messages: 20 });
  providersFile = localProvidersFile(issuer);
});

afterAll(() => {
  dovecot?.stop();
  xoauth2?.stop();
  issuer?.stop();
});

/** A clock the test moves: access tokens come due without waiting. */
function steppedNow() {
  let at = Date.now();
  return { now: () => at, step: (ms: number) => (at += ms) };
}

const env = (allow = "127.0.0.1,127.0.0.2") => ({
  CORPUS_IMAP_OAUTH_PROVIDERS_FILE: providersFile,
  CORPUS_CONNECTOR_ALLOW_HOSTS: allow,
});

const mailConfig = (port = dovecot.port, user = "enron") => ({ host: "127.0.0.1", port, secure: false, user, oauth: "local" });

async function token(t: App, user: string): Promise<string> {
  return (await t.services.auth.issuer.issue(user, ["connectors:read", "connectors:write", "corpus:search"])).token;
}

async function addMail(t: App, user: string, id = "mail", config: object = mailConfig()): Promise<ConnectorViewT> {
  const res = await t.app.handle(postJson("/v1/connectors", { id, kind: "imap", config }, bearer(await token(t, user))));
  expect(res.status).toBe(200);
  return (await res.json()) as ConnectorViewT;
}

async function startGrant(t: App, user: string, id = "mail"): Promise<Response> {
  return t.app.handle(postJson(`/v1/connectors/${id}/oauth`, {}, bearer(await token(t, user))));
}

/**
 * The browser back at corpus's callback (`back`): the page that asks to confirm, and the form it
 * holds sent with `decision`. The page's answer when it asks nothing (a refusal).
 */
async function confirm(t: App, back: URL, decision = "grant"): Promise<Response> {
  const asked = await t.app.handle(new Request(back.href));
  if (asked.status !== 200) return asked;
  const html = await asked.text();
  expect(html).toContain("Grant access to this mailbox?");
  const field = (name: string) => html.match(new RegExp(`name="${name}" value="([^"]*)"`))?.[1] ?? "";
  const body = new URLSearchParams({ state: field("state"), code: field("code"), decision });
  return t.app.handle(
    req("/connectors/oauth/callback", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body }),
  );
}

/** The grant of `user`'s connector `id`, approved at the provider as `mailbox` and confirmed: the last page's answer. */
async function grant(t: App, user: string, id = "mail", mailbox = "enron"): Promise<Response> {
  const started = await startGrant(t, user, id);
  expect(started.status).toBe(200);
  const { authorize_url } = (await started.json()) as { authorize_url: string };
  return confirm(t, await issuer.approve(authorize_url, mailbox));
}

/** The connector's status now (a check of its own, not a cached one). */
async function checked(t: App, user: string, id = "mail") {
  const active = (await t.services.connectors.active(user, [id]))[0]!;
  return active.connector.health();
}

describe("IMAP with OAuth 2.0 (real Dovecot, oauth2 passdb)", () => {
  test("grant, then a question is answered from the mailbox; the refresh token is never shown, logged or stored in clear", async () => {
    const t = await newApp(env());
    const added = await addMail(t, "alice");
    expect(added.status).toBe("error");
    expect(added.reason).toContain("no OAuth grant yet: access is granted with POST /v1/connectors/mail/oauth");

    const codesBefore = issuer.counts.authorization_code;
    const started = await startGrant(t, "alice");
    expect(started.status).toBe(200);
    const body = (await started.json()) as { authorize_url: string; redirect_uri: string; expires_at: string };
    const asked = new URL(body.authorize_url);
    expect(asked.origin + asked.pathname).toBe(issuer.authorizationEndpoint);
    expect(Object.fromEntries(asked.searchParams)).toMatchObject({
      response_type: "code",
      client_id: issuer.clientId,
      redirect_uri: `${t.config.resourceUrl}/connectors/oauth/callback`,
      scope: "imap offline_access",
      code_challenge_method: "S256",
      login_hint: "enron",
    });
    expect(asked.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(asked.searchParams.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(body.redirect_uri).toBe(`${t.config.resourceUrl}/connectors/oauth/callback`);

    const back = await issuer.approve(body.authorize_url, "enron");
    const asking = await t.app.handle(new Request(back.href));
    const question = await asking.text();
    expect(asking.status).toBe(200);
    expect(question).toContain("The corpus user <mark>alice</mark> asked to read the mailbox <mark>enron</mark> with Local issuer");
    // Nothing is exchanged before the person confirms.
    expect(issuer.counts.authorization_code).toBe(codesBefore);
    const page = await confirm(t, back);
    const html = await page.text();
    expect(page.status).toBe(200);
    expect(html).toContain("Access granted");
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    expect(issuer.counts.authorization_code).toBeGreaterThan(0);

    const listed = await listedConnector(t, await token(t, "alice"), "mail");
    expect(listed.status).toMatch(/^(ok|embedding)$/);
    expect(listed.records).toBe(200);
    expect(listed.config).toEqual({ ...mailConfig(), mailbox: "INBOX" });
    expect(dovecot.log()).toContain("method=OAUTHBEARER");

    const questioned = await t.app.handle(
      postJson(
        "/v1/query",
        { query: "Who presided over the CPUC hearing in San Diego?", conversation_id: null, connectors: ["mail"] },
        bearer(await token(t, "alice")),
      ),
    );
    expect(questioned.status).toBe(200);
    const answer = (await questioned.json()) as { answer: string; sources: Array<{ connector: string; source_url: string }> };
    expect(answer.sources.length).toBeGreaterThan(0);
    for (const s of answer.sources) {
      expect(s.connector).toBe("mail");
      expect(s.source_url).toMatch(new RegExp(`^imap://enron@127\\.0\\.0\\.1:${dovecot.port}/INBOX;UIDVALIDITY=\\d+/;UID=\\d+$`));
    }
    expect(answer.answer).toMatch(/\[1\]/);

    // Sealed (D20): no token the issuer gave is in the data folder's files, the log or any answer.
    await t.services.close();
    const files = readdirSync(t.config.CORPUS_DATA_DIR).map((f) => join(t.config.CORPUS_DATA_DIR, f));
    const stored = files.map((f) => readFileSync(f).toString("latin1")).join("\n");
    const logged = JSON.stringify(t.logs.records());
    for (const secret of issuer.issued) {
      expect(stored).not.toContain(secret);
      expect(logged).not.toContain(secret);
      expect(html).not.toContain(secret);
      expect(JSON.stringify(listed)).not.toContain(secret);
    }
  });

  test("the connector list shows its grant: none, waiting until it must be finished, granted with the access token's expiry, error with the reason", async () => {
    const clock = steppedNow();
    const t = await newApp(env(), clock.now);
    await addMail(t, "alice", "mail", mailConfig(dovecot.port, "shown"));
    const alice = await token(t, "alice");
    const grantOf = async () => (await listedConnector(t, alice, "mail")).grant;
    expect(await grantOf()).toEqual({ provider: "Local issuer", state: "none" });

    const started = (await (await startGrant(t, "alice")).json()) as { authorize_url: string; expires_at: string };
    expect(await grantOf()).toEqual({ provider: "Local issuer", state: "waiting", waiting_until: started.expires_at });
    // Cancelled at the confirmation page: the panel says so until the next attempt.
    expect((await confirm(t, await issuer.approve(started.authorize_url, "shown"), "cancel")).status).toBe(400);
    expect(await grantOf()).toEqual({
      provider: "Local issuer",
      state: "error",
      reason: "the last attempt to grant access failed: it was cancelled at the confirmation page",
    });
    // The provider's refusal, likewise.
    const denied = new URL((await (await startGrant(t, "alice")).json()).authorize_url).searchParams.get("state")!;
    expect((await t.app.handle(req(`/connectors/oauth/callback?error=access_denied&state=${denied}`))).status).toBe(400);
    expect((await grantOf())?.reason).toBe("the last attempt to grant access failed: Local issuer did not grant access (access_denied)");

    expect((await grant(t, "alice", "mail", "shown")).status).toBe(200);
    const granted = await grantOf();
    expect(granted).toEqual({
      provider: "Local issuer",
      state: "granted",
      granted_at: new Date(clock.now()).toISOString(),
      access_expires_at: new Date(clock.now() + 3_600_000).toISOString(),
    });
    // A grant refused by the provider later (revoked): error, with the reason the status gives.
    issuer.revoke("shown");
    clock.step(3_400_000);
    expect((await checked(t, "alice")).status).toBe("error");
    expect(await grantOf()).toEqual({
      provider: "Local issuer",
      state: "error",
      granted_at: granted!.granted_at,
      reason:
        "Local issuer refused the OAuth grant (invalid_grant): access was revoked or has expired; grant access again with POST /v1/connectors/mail/oauth",
    });
    // A password connector shows no grant.
    const plain = await t.app.handle(
      postJson(
        "/v1/connectors",
        { id: "plain", kind: "imap", config: { host: "127.0.0.1", port: 1, secure: false, user: "u", password: "p" } },
        bearer(alice),
      ),
    );
    expect(((await plain.json()) as ConnectorViewT).grant).toBeUndefined();
  });

  test("a confirmation a browser marks as sent from another site is refused, and the grant stays waiting", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    const back = await issuer.approve((await (await startGrant(t, "alice")).json()).authorize_url, "enron");
    const fields = new URLSearchParams({ state: back.searchParams.get("state")!, code: back.searchParams.get("code")!, decision: "grant" });
    const posted = (site: string) =>
      t.app.handle(
        req("/connectors/oauth/callback", {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "sec-fetch-site": site },
          body: fields,
        }),
      );
    const refused = await posted("cross-site");
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("this confirmation was sent from another site; nothing was kept");
    expect((await checked(t, "alice")).reason).toContain("no OAuth grant yet");
    expect((await posted("same-origin")).status).toBe(200);
    expect((await checked(t, "alice")).status).toBe("ok");
  });

  test("a state is used once; a code delivered with another grant's state fails its PKCE check; an unknown state is refused", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    const first = (await (await startGrant(t, "alice")).json()) as { authorize_url: string };
    const second = (await (await startGrant(t, "alice")).json()) as { authorize_url: string };
    // The code of the first grant, sent back with the second's state: corpus sends the second's
    // verifier, which does not match the first's challenge.
    const code = (await issuer.approve(first.authorize_url, "enron")).searchParams.get("code")!;
    const state2 = new URL(second.authorize_url).searchParams.get("state")!;
    const refused = issuer.counts.refused;
    const swapped = await confirm(t, new URL(`${BASE}/connectors/oauth/callback?code=${encodeURIComponent(code)}&state=${state2}`));
    expect(swapped.status).toBe(400);
    expect(await swapped.text()).toContain("Local issuer refused the code (invalid_grant)");
    expect(issuer.counts.refused).toBe(refused + 1);
    expect((await checked(t, "alice")).reason).toContain("no OAuth grant yet");

    const back = await issuer.approve((await (await startGrant(t, "alice")).json()).authorize_url, "enron");
    expect((await confirm(t, back)).status).toBe(200);
    const replay = await t.app.handle(new Request(back.href));
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain("this grant is unknown, was used already or has expired");
    const unknown = await t.app.handle(req("/connectors/oauth/callback?code=x&state=nothing-of-ours"));
    expect(unknown.status).toBe(400);
    expect((await t.app.handle(req("/connectors/oauth/callback"))).status).toBe(400);
    const posted = new URLSearchParams({ state: back.searchParams.get("state")!, code: back.searchParams.get("code")!, decision: "grant" });
    const again = await t.app.handle(
      req("/connectors/oauth/callback", { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: posted }),
    );
    expect(again.status).toBe(400);
  });

  test("the callback asks to confirm, naming who asked; cancelling forgets the grant; the provider's refusal ends it", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    const back = await issuer.approve((await (await startGrant(t, "alice")).json()).authorize_url, "enron");
    // Asking twice uses nothing up; cancelling does.
    expect((await t.app.handle(new Request(back.href))).status).toBe(200);
    const cancelled = await confirm(t, back, "cancel");
    expect(cancelled.status).toBe(400);
    expect(await cancelled.text()).toContain("you cancelled; nothing was kept");
    expect((await t.app.handle(new Request(back.href))).status).toBe(400);
    expect((await checked(t, "alice")).reason).toContain("no OAuth grant yet");

    const denied = new URL((await (await startGrant(t, "alice")).json()).authorize_url);
    const state = denied.searchParams.get("state")!;
    const refused = await t.app.handle(req(`/connectors/oauth/callback?error=access_denied&state=${state}`));
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("Local issuer did not grant access (access_denied)");
    expect((await t.app.handle(req(`/connectors/oauth/callback?code=x&state=${state}`))).status).toBe(400);
  });

  test("a grant expires unused; the token that started it, once revoked, cannot finish it", async () => {
    const clock = steppedNow();
    const t = await newApp(env(), clock.now);
    await addMail(t, "alice");
    const late = (await (await startGrant(t, "alice")).json()) as { authorize_url: string };
    clock.step(601_000);
    const expired = await confirm(t, await issuer.approve(late.authorize_url, "enron"));
    expect(expired.status).toBe(400);
    expect(await expired.text()).toContain("has expired");

    const carol = await token(t, "alice");
    const started = await t.app.handle(postJson("/v1/connectors/mail/oauth", {}, bearer(carol)));
    const { authorize_url } = (await started.json()) as { authorize_url: string };
    // As a deletion of alice, or an operator's revocation, does (D13).
    t.services.auth.store.revokeUser("alice", clock.now() + 1000);
    const back = await issuer.approve(authorize_url, "enron");
    const ended = await confirm(t, back);
    expect(ended.status).toBe(400);
    expect(await ended.text()).toContain("the corpus session that started this grant has ended");
  });

  test("a second user's grant is never the first's: each connector has its own, under its owner", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    await addMail(t, "bob");
    expect((await grant(t, "bob")).status).toBe(200);
    expect((await checked(t, "bob")).status).toBe("ok");
    expect((await checked(t, "alice")).reason).toContain("no OAuth grant yet");
    // Bob cannot start a grant on a connector of alice's (he has none of another id).
    const other = await startGrant(t, "bob", "alices");
    expect(other.status).toBe(404);
    // A token the issuer gave for enron is refused for another mailbox: Dovecot compares its user.
    await addMail(t, "alice", "other", mailConfig(dovecot.port, "someone-else"));
    expect((await grant(t, "alice", "other", "enron")).status).toBe(200);
    const refused = await checked(t, "alice", "other");
    expect(refused.status).toBe("error");
    expect(refused.reason).toBe(
      `IMAP login with OAuth failed for someone-else at 127.0.0.1:${dovecot.port}: the server refused the access token`,
    );
  });

  test("the access token is refreshed before it expires, and a rotated refresh token is kept", async () => {
    const clock = steppedNow();
    const t = await newApp(env(), clock.now);
    await addMail(t, "alice");
    expect((await grant(t, "alice")).status).toBe(200);
    const refreshes = issuer.counts.refresh_token;
    expect((await checked(t, "alice")).status).toBe("ok");
    expect(issuer.counts.refresh_token).toBe(refreshes);
    // 5 minutes before its hour is up the token is due: the connection it signed is not reused.
    for (const round of [1, 2]) {
      clock.step(3_400_000);
      const before = issuer.introspected.length;
      const s = await checked(t, "alice");
      expect(s.status).toBe("ok");
      expect(issuer.counts.refresh_token).toBe(refreshes + round);
      // Dovecot was shown the new token, and found it active.
      expect(issuer.introspected.slice(before).at(-1)?.active).toBe(true);
    }
  });

  test("a revoked grant shows as error with the reason, and the provider is not asked again", async () => {
    const clock = steppedNow();
    const t = await newApp(env(), clock.now);
    await addMail(t, "alice", "mail", mailConfig(dovecot.port, "revokable"));
    expect((await grant(t, "alice", "mail", "revokable")).status).toBe(200);
    expect((await checked(t, "alice")).status).toBe("ok");
    issuer.revoke("revokable");
    clock.step(3_400_000);
    const s = await checked(t, "alice");
    expect(s.status).toBe("error");
    expect(s.reason).toBe(
      "Local issuer refused the OAuth grant (invalid_grant): access was revoked or has expired; grant access again with POST /v1/connectors/mail/oauth",
    );
    const asked = issuer.counts.refused;
    clock.step(600_000);
    expect((await checked(t, "alice")).reason).toContain("invalid_grant");
    expect(issuer.counts.refused).toBe(asked);
    expect(JSON.stringify(t.logs.records())).toContain("connector OAuth grant refused by its provider");
  });

  test("the token endpoint on a private address is reached only as CORPUS_CONNECTOR_ALLOW_HOSTS allows", async () => {
    const t = await newApp(env("127.0.0.1"));
    await addMail(t, "alice");
    const codes = issuer.counts.authorization_code;
    const page = await grant(t, "alice");
    expect(page.status).toBe(400);
    const text = await page.text();
    expect(text).toContain("Local issuer&#39;s token endpoint: 127.0.0.2 is a loopback address");
    expect(text).toContain("CORPUS_CONNECTOR_ALLOW_HOSTS");
    expect(issuer.counts.authorization_code).toBe(codes);
  });

  test("SASL XOAUTH2 where the server offers only it", async () => {
    const t = await newApp(env());
    await addMail(t, "alice", "mail", mailConfig(xoauth2.port));
    expect((await grant(t, "alice")).status).toBe(200);
    expect(await checked(t, "alice")).toEqual({ status: "ok", records: 20 });
    expect(xoauth2.log()).toContain("method=XOAUTH2");
  });

  test("the grant is used only for what it was given: a changed user or host needs it again; tokens go only to the provider's hosts", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    expect((await grant(t, "alice")).status).toBe(200);
    const changed = await t.app.handle(patchJson("/v1/connectors/mail", { config: { user: "someone" } }, bearer(await token(t, "alice"))));
    expect(changed.status).toBe(200);
    expect(((await changed.json()) as ConnectorViewT).reason).toContain(
      "access was granted for another host, port, TLS setting, user or provider",
    );

    const elsewhere = await addMail(t, "alice", "elsewhere", { ...mailConfig(), host: "localhost" });
    expect(elsewhere.reason).toBe("config.host: Local issuer's access tokens go only to 127.0.0.1");
    const start = await startGrant(t, "alice", "elsewhere");
    expect(start.status).toBe(400);
    expect(((await start.json()) as { message: string }).message).toBe("config.host: Local issuer's access tokens go only to 127.0.0.1");

    const unknown = await addMail(t, "alice", "unknown", { ...mailConfig(), oauth: "nobody" });
    expect(unknown.reason).toBe("config.oauth: no OAuth provider nobody; the operator's are: local");
    const both = await t.app.handle(
      postJson("/v1/connectors", { id: "both", kind: "imap", config: { ...mailConfig(), password: "p" } }, bearer(await token(t, "alice"))),
    );
    expect(both.status).toBe(400);
    expect(((await both.json()) as { message: string }).message).toBe(
      "config.password: a connector signs in with a password or with OAuth (config.oauth), not both",
    );
  });
});

describe("IMAP OAuth grants are bounded and go with their connector or user", () => {
  test("at most 5 grants wait per user: a sixth forgets the oldest", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    const urls: string[] = [];
    for (let i = 0; i < 7; i++) urls.push(((await (await startGrant(t, "alice")).json()) as { authorize_url: string }).authorize_url);
    expect(t.services.connectors.grants.pendingCount()).toBe(5);
    const oldest = await confirm(t, await issuer.approve(urls[0]!, "enron"));
    expect(oldest.status).toBe(400);
    expect((await confirm(t, await issuer.approve(urls[6]!, "enron"))).status).toBe(200);
  });

  test("removing the connector removes its grant (an id used again starts without one); deleting the user leaves no grant row", async () => {
    const t = await newApp(env());
    await addMail(t, "alice");
    expect((await grant(t, "alice")).status).toBe(200);
    const grants = () => t.db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_grants").get()!.n;
    expect(grants()).toBe(1);
    const removed = await t.app.handle(req("/v1/connectors/mail", { method: "DELETE", headers: bearer(await token(t, "alice")) }));
    expect(removed.status).toBe(200);
    expect(grants()).toBe(0);
    expect((await addMail(t, "alice")).reason).toContain("no OAuth grant yet");

    expect((await grant(t, "alice")).status).toBe(200);
    expect(grants()).toBe(1);
    expect((await startGrant(t, "alice")).status).toBe(200);
    expect(t.services.connectors.grants.pendingCount()).toBe(1);
    const deleted = await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(await token(t, "alice")) }));
    expect(deleted.status).toBe(200);
    expect(grants()).toBe(0);
    expect(t.services.connectors.grants.pendingCount()).toBe(0);
  });
});
