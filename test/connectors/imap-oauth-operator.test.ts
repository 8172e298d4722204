// OAuth for the operator's IMAP connectors (issue 38): an entry of CORPUS_CONNECTORS_FILE names
// a provider of CORPUS_IMAP_OAUTH_PROVIDERS_FILE; the operator grants access once with
// `corpus connector grant` (a real child process: it prints the authorization URL, reads the
// address the provider sent the browser back to), the refresh token is sealed with the
// operator's key as a user's is with theirs, and the server then reads the mailbox of a real
// Dovecot whose oauth2 passdb asks the loopback issuer, as imap-oauth.test.ts does for users.
// The console's button too, in-process and in headless Chromium.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { OPERATOR_OWNER } from "../../src/auth/subjects";
import { TERMINAL_STATE_PREFIX } from "../../src/connectors/oauth/grants";
import { CONSOLE_PATHS } from "../../src/console/pages";
import { CONSOLE_COOKIE } from "../../src/console/routes";
import { createLogger, memorySink } from "../../src/log";
import { createFetch, startServer } from "../../src/server";
import { baseEnv, CLI, FIXED_ISSUER, newMasterKey } from "../backup/support";
import { bearer, req, tempDir, testConfig } from "../helpers";
import { cookieOf, field, formPost } from "../oauth/support";
import { appPerTest, listedConnector } from "../support/app-per-test";
import { launchChromium } from "../support/chromium";
import { type OAuthDovecot, startOAuthDovecot } from "../support/dovecot-oauth";
import { localProvidersFile, startTokenIssuer, type TokenIssuer } from "../support/oauth-issuer";
import { freePort } from "../support/tcp";

setDefaultTimeout(90_000);

let issuer: TokenIssuer;
let dovecot: OAuthDovecot;
let providersFile: string;
const newApp = appPerTest();

beforeAll(async () => {
  issuer = startTokenIssuer("127.0.0.2");
  dovecot = await startOAuthDovecot({ introspectionUrl: issuer.introspectionEndpoint, mechanisms: "oauthbearer xoauth2", messages: 20 });
  providersFile = localProvidersFile(issuer);
});

afterAll(() => {
  dovecot?.stop();
  issuer?.stop();
});

/** The provider's address on the console's page after Grant access. */
const continueAt = (html: string) =>
  /<a href="([^"]+)" rel="noreferrer">Continue at Local issuer<\/a>/.exec(html)![1]!.replaceAll("&amp;", "&");

/** A data folder, an operator file with `connectors`, and the environment of both the CLI and the server. */
function operatorEnv(connectors: unknown[]): Record<string, string> {
  const dir = tempDir("corpus-operator-oauth-data-");
  const file = join(tempDir("corpus-operator-file-"), "connectors.json");
  writeFileSync(file, JSON.stringify(connectors));
  return {
    ...FIXED_ISSUER,
    CORPUS_DATA_DIR: dir,
    CORPUS_MASTER_KEY: newMasterKey(),
    CORPUS_CONNECTORS_FILE: file,
    CORPUS_IMAP_OAUTH_PROVIDERS_FILE: providersFile,
  };
}

const sharedMail = (oauth = "local", user = "enron") => ({
  id: "shared-mail",
  kind: "imap",
  label: "Shared mailbox",
  config: { host: "127.0.0.1", port: dovecot.port, secure: false, user, oauth },
});

/**
 * `corpus connector grant --id ID` in a process of its own: the first line it prints (the
 * authorization URL) is handed to `answer`, whose line is typed in; its exit and output.
 */
async function grantCommand(env: Record<string, string>, id: string, answer: (authorizeUrl: string) => Promise<string>) {
  const proc = Bun.spawn([process.execPath, CLI, "connector", "grant", "--id", id], {
    env: baseEnv(env),
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  while (!out.includes("\n")) {
    const read = await reader.read();
    if (read.done) break;
    out += decoder.decode(read.value, { stream: true });
  }
  const url = out.slice(0, out.indexOf("\n"));
  if (url) {
    proc.stdin.write(`${await answer(url)}\n`);
    await proc.stdin.flush();
  }
  proc.stdin.end();
  for (let read = await reader.read(); !read.done; read = await reader.read()) out += decoder.decode(read.value, { stream: true });
  const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  return { code, url, stdout: out.slice(url.length + 1), stderr };
}

describe("an operator's IMAP connector that signs in with OAuth", () => {
  test("corpus connector grant prints the URL and takes the address pasted; the refresh token is sealed; the server reads the mailbox", async () => {
    const env = operatorEnv([sharedMail()]);
    const codes = issuer.counts.authorization_code;
    const run = await grantCommand(env, "shared-mail", async (url) => {
      const asked = new URL(url);
      expect(asked.origin + asked.pathname).toBe(issuer.authorizationEndpoint);
      expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
      expect(asked.searchParams.get("redirect_uri")).toBe("http://corpus.test/connectors/oauth/callback");
      expect(asked.searchParams.get("state")).toStartWith(TERMINAL_STATE_PREFIX);
      return (await issuer.approve(url, "enron")).href;
    });
    expect(run.stderr).toContain("paste that whole address here");
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(
      "access granted: the operator's connector shared-mail reads the mailbox enron with Local issuer; 20 messages",
    );
    expect(issuer.counts.authorization_code).toBe(codes + 1);

    // Sealed (D20): no token the issuer gave is in the data folder's files or the output.
    const files = readdirSync(env.CORPUS_DATA_DIR!).map((f) => join(env.CORPUS_DATA_DIR!, f));
    const stored = files.map((f) => readFileSync(f).toString("latin1")).join("\n");
    for (const secret of issuer.issued) {
      expect(stored).not.toContain(secret);
      expect(run.stdout + run.stderr).not.toContain(secret);
    }

    // The server on the same data folder signs in with the grant; users see the connector work, never its grant.
    const t = await newApp(env);
    const row = t.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_grants WHERE user_id = ?").get(OPERATOR_OWNER)!.n;
    expect(row).toBe(1);
    expect(await (await t.services.connectors.active("alice", ["shared-mail"]))[0]!.connector.health()).toEqual({
      status: "ok",
      records: 20,
    });
    const alice = (await t.services.auth.issuer.issue("alice", ["connectors:read"])).token;
    const listed = await listedConnector(t, alice, "shared-mail");
    expect(listed).toMatchObject({ owner: "operator", status: expect.stringMatching(/^(ok|embedding)$/), records: 20 });
    expect(listed.grant).toBeUndefined();
    expect(listed.reason).toBeUndefined();
    expect(await t.services.connectors.operatorGrants()).toEqual([
      {
        id: "shared-mail",
        label: "Shared mailbox",
        grant: expect.objectContaining({ provider: "Local issuer", state: "granted" }),
      },
    ]);
    // A user cannot start the operator's grant.
    const start = await t.app.handle(
      req("/v1/connectors/shared-mail/oauth", {
        method: "POST",
        headers: {
          ...bearer((await t.services.auth.issuer.issue("alice", ["connectors:write"])).token),
          "content-type": "application/json",
        },
        body: "{}",
      }),
    );
    expect(start.status).toBe(403);
  });

  test("before the grant the connector is in error; an address of another grant, or none, grants nothing", async () => {
    const env = operatorEnv([sharedMail()]);
    const t = await newApp(env);
    expect((await t.services.connectors.checkOperatorConnector("shared-mail")).reason).toBe(
      "no OAuth grant yet: access is granted with corpus connector grant --id shared-mail (or the console's Connectors page)",
    );
    await t.services.close();
    const other = await grantCommand(env, "shared-mail", async (url) => {
      const back = await issuer.approve(url, "enron");
      back.searchParams.set("state", `${TERMINAL_STATE_PREFIX}someone-elses`);
      return back.href;
    });
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("corpus: the address pasted answers another grant than this one; start again");
    const none = await grantCommand(env, "shared-mail", async () => "");
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("corpus: nothing was pasted; no access was granted");
    const refused = await grantCommand(env, "shared-mail", async (url) => {
      const state = new URL(url).searchParams.get("state")!;
      return `http://corpus.test/connectors/oauth/callback?error=access_denied&state=${state}`;
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("corpus: Local issuer did not grant access (access_denied)");
    const unknown = await grantCommand(env, "nothing", async () => "x");
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("nothing");
    const after = await newApp(env);
    expect(after.db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_grants").get()!.n).toBe(0);
  });

  test("corpus's callback page, given a terminal grant's state, sends the person back to the terminal and keeps nothing", async () => {
    const t = await newApp(operatorEnv([sharedMail()]));
    const page = await t.app.handle(req(`/connectors/oauth/callback?code=c&state=${TERMINAL_STATE_PREFIX}abc`));
    expect(page.status).toBe(200);
    expect(page.headers.get("content-security-policy")).toContain("frame-ancestors 'none'");
    const html = await page.text();
    expect(html).toContain("Copy this page's address from the address bar and paste it where that command waits.");
    expect(html).not.toContain("abc");
  });

  test("an operator file naming a provider there is none of, or a host its tokens may not go to, stops the start", async () => {
    const unknown = operatorEnv([sharedMail("nobody")]);
    await expect(newApp(unknown)).rejects.toThrow(
      `CORPUS_CONNECTORS_FILE=${JSON.stringify(unknown.CORPUS_CONNECTORS_FILE)} is not allowed: connector shared-mail: config.oauth: no OAuth provider nobody; the operator's are: local`,
    );
    const elsewhere = operatorEnv([{ ...sharedMail(), config: { ...sharedMail().config, host: "localhost" } }]);
    await expect(newApp(elsewhere)).rejects.toThrow(
      "connector shared-mail: config.host: Local issuer's access tokens go only to 127.0.0.1",
    );
  });

  test("at the console an operator grants access with a button; the confirmation names them; it waits only while their session stands", async () => {
    const t = await newApp(operatorEnv([sharedMail()]));
    await t.services.accounts.add("root", "the operator's password", { operator: true });
    const first = await t.app.handle(req(CONSOLE_PATHS.home));
    const signedIn = await t.app.handle(
      formPost(
        CONSOLE_PATHS.login,
        { user: "root", password: "the operator's password", csrf: field(await first.text(), "csrf")! },
        { cookie: cookieOf(first, "corpus_console_login")! },
      ),
    );
    const cookie = cookieOf(signedIn, CONSOLE_COOKIE)!;
    const listed = async () => (await t.app.handle(req(CONSOLE_PATHS.connectors, { headers: { cookie } }))).text();
    const before = await listed();
    expect(before).toContain('<td class="grant-none">access not granted yet</td>');
    const csrf = field(before, "csrf")!;
    const grantForm = (headers: Record<string, string> = {}) =>
      t.app.handle(formPost(CONSOLE_PATHS.grantConnector, { csrf, id: "shared-mail" }, { cookie, ...headers }));

    // Sent from another site, or without the session's CSRF token: nothing starts.
    expect((await grantForm({ "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await t.app.handle(formPost(CONSOLE_PATHS.grantConnector, { csrf: "x", id: "shared-mail" }, { cookie }))).status).toBe(403);
    expect(t.services.connectors.grants.pendingCount()).toBe(0);
    const unknown = await t.app.handle(formPost(CONSOLE_PATHS.grantConnector, { csrf, id: "nothing" }, { cookie }));
    expect(unknown.status).toBe(400);

    const started = await grantForm();
    expect(started.status).toBe(200);
    expect(started.headers.get("content-security-policy")).toContain("form-action 'self'");
    const href = continueAt(await started.text());
    expect(href.startsWith(issuer.authorizationEndpoint)).toBe(true);
    expect(await listed()).toContain('<td class="grant-waiting">waiting for access to be granted at Local issuer');

    const back = await issuer.approve(href, "enron");
    const asking = await (await t.app.handle(new Request(back.href))).text();
    expect(asking).toContain(
      "The corpus operator <mark>root</mark> asked to read the mailbox <mark>enron</mark> with Local issuer, for the operator's connector shared-mail.",
    );
    const confirmed = await t.app.handle(
      req("/connectors/oauth/callback", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ state: back.searchParams.get("state")!, code: back.searchParams.get("code")!, decision: "grant" }),
      }),
    );
    expect(await confirmed.text()).toContain("corpus now reads the mailbox of enron for the operator's connector shared-mail");
    expect(await listed()).toMatch(/<td class="grant-granted">granted \d{4}-\d\d-\d\d \d\d:\d\d UTC; access token valid until/);
    expect(await t.services.connectors.checkOperatorConnector("shared-mail")).toEqual({ status: "ok", records: 20 });

    // A grant started, then the operator signs out: it cannot be finished.
    const again = await grantForm();
    const next = continueAt(await again.text());
    await t.app.handle(formPost(CONSOLE_PATHS.logout, { csrf }, { cookie }));
    const ended = await t.app.handle(new Request((await issuer.approve(next, "enron")).href));
    expect(ended.status).toBe(400);
    expect(await ended.text()).toContain("the corpus session that started this grant has ended");
  });

  test("a grant of a connector gone from the operator file is dropped when serving, not by another command", async () => {
    const env = operatorEnv([sharedMail()]);
    const t = await newApp(env);
    const { authorize_url } = t.services.connectors.beginOperatorGrant("shared-mail", () => {});
    await t.services.connectors.grants.finish((await issuer.approve(authorize_url, "enron")).searchParams);
    const grants = (db: typeof t.db) => db.query<{ n: number }, []>("SELECT count(*) AS n FROM connector_grants").get()!.n;
    expect(grants(t.db)).toBe(1);
    await t.services.close();
    // The file now lists the mailbox with a password: its grant has no connector left.
    writeFileSync(
      env.CORPUS_CONNECTORS_FILE!,
      JSON.stringify([{ ...sharedMail(), config: { ...sharedMail().config, oauth: undefined, password: "p" } }]),
    );
    const command = await newApp(env);
    expect(grants(command.db)).toBe(1);
    await command.services.close();
    const running = await startServer(testConfig({ ...env, CORPUS_PORT: "0" }), createLogger("ERROR", memorySink().sink));
    try {
      expect(grants(running.services.db)).toBe(0);
    } finally {
      await running.stop();
    }
  });

  test("in headless Chromium: the console's Grant access button, the provider, corpus's confirmation, granted; no CSP violation", async () => {
    const port = freePort();
    const here = `http://127.0.0.1:${port}`;
    const t = await newApp({
      ...operatorEnv([sharedMail()]),
      CORPUS_PORT: String(port),
      CORPUS_OAUTH_RESOURCE_URL: here,
      CORPUS_OAUTH_ISSUER: here,
    });
    await t.services.accounts.add("root", "the operator's password", { operator: true });
    const server = Bun.serve({ hostname: "127.0.0.1", port, development: false, fetch: createFetch(t.app.fetch, t.config, t.log) });
    const browser = await launchChromium();
    try {
      const page = await (await browser.newContext()).newPage();
      const violations: string[] = [];
      page.on("console", (m) => {
        if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
      });
      await page.goto(`${here}/console`);
      await page.getByLabel("User name").fill("root");
      await page.getByLabel("Password").fill("the operator's password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("link", { name: "Connectors" }).click();
      await page.getByRole("heading", { name: "Mailboxes signed in with OAuth" }).waitFor();
      expect(await page.locator("td.grant-none").textContent()).toBe("access not granted yet");
      await page.getByRole("button", { name: "Grant access to shared-mail" }).click();
      const link = page.getByRole("link", { name: "Continue at Local issuer" });
      await link.waitFor();
      const href = (await link.getAttribute("href"))!;
      expect(href.startsWith(issuer.authorizationEndpoint)).toBe(true);
      // The provider (which would ask the mailbox's owner) sends the browser back to corpus.
      await page.goto((await issuer.approve(href, "enron")).href);
      await page.getByText("The corpus operator root asked to read the mailbox enron with Local issuer").waitFor();
      await page.getByRole("button", { name: "Grant access" }).click();
      await page.getByRole("heading", { name: "Access granted" }).waitFor();
      await page.goto(`${here}/console/connectors`);
      expect(await page.locator("td.grant-granted").textContent()).toMatch(
        /^granted \d{4}-\d\d-\d\d \d\d:\d\d UTC; access token valid until/,
      );
      expect(await page.getByRole("button", { name: "Grant access to shared-mail" }).textContent()).toBe("Grant access again");
      expect(violations).toEqual([]);
    } finally {
      await browser.close();
      server.stop(true);
    }
  });
});
