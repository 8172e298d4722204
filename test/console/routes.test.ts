// The operator console's refusals (D35): without a session, with a user's session or cookie,
// with a wrong CSRF token, or sent from another site, no console page shows and no action is
// done; an operator's actions go through the CLI's functions. In-process, as a browser would
// send its forms.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BACKUP_FOLDER } from "../../src/console/backups";
import { CONSOLE_PATHS } from "../../src/console/pages";
import { CONSOLE_COOKIE } from "../../src/console/routes";
import { ConsoleSessions } from "../../src/console/store";
import { RECENT_PROBLEMS } from "../../src/log";
import { ACCOUNT_ADDRESS_FAILURES } from "../../src/oauth/throttle";
import { bearer, req, testApp, tokenFor } from "../helpers";
import { cookieOf, field, formPost, signIn as oauthSignIn } from "../oauth/support";

const OPERATOR = { user: "root", password: "the operator's password" };
const USER = { user: "alice", password: "alice's long password" };

type T = Awaited<ReturnType<typeof testApp>>;

/** Signs in at the console; answers the session cookie ("corpus_console=…") or the refusal. */
async function consoleSignIn(t: T, user: string, password: string, headers: Record<string, string> = {}) {
  const first = await t.app.handle(req(CONSOLE_PATHS.home));
  const login = cookieOf(first, "corpus_console_login")!;
  const csrf = field(await first.text(), "csrf")!;
  const r = await t.app.handle(formPost(CONSOLE_PATHS.login, { user, password, csrf }, { cookie: login, ...headers }));
  return { response: r, cookie: cookieOf(r, CONSOLE_COOKIE) };
}

/** The CSRF token a signed-in page carries. */
async function csrfOf(t: T, cookie: string) {
  const r = await t.app.handle(req(CONSOLE_PATHS.users, { headers: { cookie } }));
  expect(r.status).toBe(200);
  return field(await r.text(), "csrf")!;
}

const connectorsStatus = async (t: T, token: string) => (await t.app.handle(req("/v1/connectors", { headers: bearer(token) }))).status;

describe("the operator console", () => {
  let t: T;
  let operatorCookie: string;
  let userToken: string;

  beforeAll(async () => {
    t = await testApp();
    await t.services.accounts.add(OPERATOR.user, OPERATOR.password, { operator: true });
    await t.services.accounts.add(USER.user, USER.password);
    const signed = await consoleSignIn(t, OPERATOR.user, OPERATOR.password);
    expect(signed.response.status).toBe(303);
    operatorCookie = signed.cookie!;
    userToken = await tokenFor(t.services, USER.user, ["connectors:read"]);
  });
  afterAll(() => t.services.close());

  /**
   * Every action, with a form that would do something, and how to see that it was not done:
   * alice is still there with her password, her token still works, no "mallory" was added, no
   * backup started and no connector grant begun.
   */
  const actions = (csrf: string): Array<{ path: string; form: Record<string, string> }> => [
    { path: CONSOLE_PATHS.addUser, form: { csrf, user: "mallory", password: "mallory's long password", operator: "true" } },
    { path: CONSOLE_PATHS.removeUser, form: { csrf, user: USER.user } },
    { path: CONSOLE_PATHS.resetPassword, form: { csrf, user: USER.user, password: "a password chosen by an attacker" } },
    { path: CONSOLE_PATHS.revokeAccess, form: { csrf, user: USER.user } },
    { path: CONSOLE_PATHS.startBackup, form: { csrf } },
    { path: CONSOLE_PATHS.removeBackup, form: { csrf, name: "corpus-2026-01-01T00-00-00Z.backup" } },
    { path: CONSOLE_PATHS.grantConnector, form: { csrf, id: "shared-mail" } },
  ];
  const nothingDone = async () => {
    expect(t.services.accounts.exists("mallory")).toBe(false);
    expect(t.services.accounts.exists(USER.user)).toBe(true);
    expect(await t.services.accounts.verify(USER.user, USER.password)).toBe(true);
    expect(await connectorsStatus(t, userToken)).toBe(200);
    // No backup was started (a unit test cannot even spawn one: test/support/unit-guard.ts).
    expect(existsSync(join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER))).toBe(false);
    expect(t.services.connectors.grants.pendingCount()).toBe(0);
  };

  test("the session cookie: HttpOnly, SameSite=Strict, Path=/console, short-lived, kept only as a hash", async () => {
    const { response } = await consoleSignIn(t, OPERATOR.user, OPERATOR.password);
    const set = response.headers.getSetCookie().find((c) => c.startsWith(`${CONSOLE_COOKIE}=`))!;
    expect(set).toMatch(/; Path=\/console; HttpOnly; SameSite=Strict; Max-Age=1800$/);
    expect(response.headers.get("location")).toBe(CONSOLE_PATHS.home);
    const id = set.split(";")[0]!.split("=")[1]!;
    const rows = t.db.query<{ session_hash: string }, []>("SELECT session_hash FROM console_sessions").all();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.some((r) => r.session_hash.includes(id))).toBe(false);
    const home = await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: `${CONSOLE_COOKIE}=${id}` } }));
    expect(home.status).toBe(200);
    const html = await home.text();
    expect(html).toContain("<h1>Health</h1>");
    expect(html).not.toContain("<script");
    const csp = home.headers.get("content-security-policy")!;
    expect(csp).toStartWith("default-src 'none'; style-src 'sha256-");
    expect(csp).toContain("form-action 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  test("Secure when the server is reached by https", async () => {
    const https = await testApp({ CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com" });
    try {
      await https.services.accounts.add(OPERATOR.user, OPERATOR.password, { operator: true });
      const { response } = await consoleSignIn(https, OPERATOR.user, OPERATOR.password);
      expect(response.headers.getSetCookie().find((c) => c.startsWith(`${CONSOLE_COOKIE}=`))).toEndWith("; Secure");
    } finally {
      await https.services.close();
    }
  });

  test("no cookie: every page is the sign-in page (401), every action refused, nothing done", async () => {
    for (const path of [CONSOLE_PATHS.home, CONSOLE_PATHS.users, CONSOLE_PATHS.connectors, CONSOLE_PATHS.backups, CONSOLE_PATHS.errors]) {
      const r = await t.app.handle(req(path));
      expect(r.status).toBe(401);
      const html = await r.text();
      expect(html).toContain('action="/console/login"');
      expect(html).not.toContain("alice");
    }
    const csrf = await csrfOf(t, operatorCookie);
    for (const a of [...actions(csrf), { path: CONSOLE_PATHS.logout, form: { csrf } }]) {
      const r = await t.app.handle(formPost(a.path, a.form));
      expect(r.status).toBe(401);
    }
    await nothingDone();
  });

  test("a user who is not an operator: signing in refused (403, no session); a session of theirs refused and ended", async () => {
    const before = t.db.query("SELECT count(*) AS n FROM console_sessions WHERE user_id = ?").get(USER.user);
    const { response, cookie } = await consoleSignIn(t, USER.user, USER.password);
    expect(response.status).toBe(403);
    expect(cookie).toBeUndefined();
    expect(await response.text()).toContain("not an operator");
    expect(t.db.query("SELECT count(*) AS n FROM console_sessions WHERE user_id = ?").get(USER.user)).toEqual(before);

    // Their OAuth session cookie, however named, opens nothing here.
    const oauthCookie = await oauthSignIn(t.app, USER.user, USER.password);
    const oauthId = oauthCookie.split("=")[1]!;
    for (const cookie of [oauthCookie, `${CONSOLE_COOKIE}=${oauthId}`]) {
      for (const path of [CONSOLE_PATHS.home, CONSOLE_PATHS.users, CONSOLE_PATHS.connectors, CONSOLE_PATHS.backups, CONSOLE_PATHS.errors])
        expect((await t.app.handle(req(path, { headers: { cookie } }))).status).toBe(401);
    }

    // A console session of an account that is no operator (an operator demoted, say): every page and action 403.
    const sessions = new ConsoleSessions(t.db);
    const pages = [CONSOLE_PATHS.home, CONSOLE_PATHS.users, CONSOLE_PATHS.connectors, CONSOLE_PATHS.backups, CONSOLE_PATHS.errors];
    for (const path of pages) {
      const s = sessions.create(USER.user);
      const r = await t.app.handle(req(path, { headers: { cookie: `${CONSOLE_COOKIE}=${s.id}` } }));
      expect(r.status).toBe(403);
      expect(await r.text()).toContain("for operators only");
      expect(sessions.get(s.id)).toBeUndefined();
    }
    for (const a of actions("")) {
      const s = sessions.create(USER.user);
      const r = await t.app.handle(formPost(a.path, { ...a.form, csrf: s.csrf }, { cookie: `${CONSOLE_COOKIE}=${s.id}` }));
      expect(r.status).toBe(403);
    }
    await nothingDone();
  });

  test("a bad CSRF token: every action 403, nothing done; the sign-in form without its cookie's token too", async () => {
    const right = await csrfOf(t, operatorCookie);
    for (const csrf of ["", "x".repeat(43), `${right.slice(0, -1)}${right.endsWith("A") ? "B" : "A"}`]) {
      for (const a of actions(csrf)) {
        const r = await t.app.handle(formPost(a.path, a.form, { cookie: operatorCookie }));
        expect(r.status).toBe(403);
      }
      const out = await t.app.handle(formPost(CONSOLE_PATHS.logout, { csrf }, { cookie: operatorCookie }));
      expect(out.status).toBe(403);
    }
    await nothingDone();
    expect((await t.app.handle(req(CONSOLE_PATHS.users, { headers: { cookie: operatorCookie } }))).status).toBe(200);

    const login = await t.app.handle(
      formPost(CONSOLE_PATHS.login, { ...OPERATOR, csrf: "x".repeat(43) }, { cookie: "corpus_console_login=y" }),
    );
    expect(login.status).toBe(403);
    expect(cookieOf(login, CONSOLE_COOKIE)).toBeUndefined();
  });

  test("a cross-site POST: refused by its Origin or by the browser's Sec-Fetch-Site, nothing done", async () => {
    const csrf = await csrfOf(t, operatorCookie);
    const attempts: Array<Record<string, string>> = [
      { cookie: operatorCookie, origin: "https://attacker.example" },
      { cookie: operatorCookie, "sec-fetch-site": "cross-site" },
      { cookie: operatorCookie, "sec-fetch-site": "same-site" },
    ];
    for (const headers of attempts) {
      for (const a of actions(csrf)) expect((await t.app.handle(formPost(a.path, a.form, headers))).status).toBe(403);
      const { response, cookie } = await consoleSignIn(t, OPERATOR.user, OPERATOR.password, headers);
      expect(response.status).toBe(403);
      expect(cookie).toBeUndefined();
    }
    await nothingDone();
  });

  test("sign-in is throttled as the OAuth sign-in is: wrong passwords, then 429 with Retry-After", async () => {
    const own = await testApp();
    try {
      await own.services.accounts.add(OPERATOR.user, OPERATOR.password, { operator: true });
      const statuses: number[] = [];
      for (let i = 0; i <= ACCOUNT_ADDRESS_FAILURES; i++)
        statuses.push((await consoleSignIn(own, OPERATOR.user, "wrong password!")).response.status);
      expect(statuses.slice(0, ACCOUNT_ADDRESS_FAILURES)).toEqual(Array(ACCOUNT_ADDRESS_FAILURES).fill(401));
      const last = (await consoleSignIn(own, OPERATOR.user, OPERATOR.password)).response;
      expect(last.status).toBe(429);
      expect(Number(last.headers.get("retry-after"))).toBeGreaterThan(0);
    } finally {
      await own.services.close();
    }
  });

  test("an operator adds, resets, revokes and removes, through the CLI's functions; their own account stays", async () => {
    const post = async (path: string, form: Record<string, string>) => {
      const r = await t.app.handle(formPost(path, { csrf: await csrfOf(t, operatorCookie), ...form }, { cookie: operatorCookie }));
      return { status: r.status, html: await r.text() };
    };
    let r = await post(CONSOLE_PATHS.addUser, { user: "bob", password: "short" });
    expect(r.status).toBe(400);
    expect(r.html).toContain("at least 10 characters");
    r = await post(CONSOLE_PATHS.addUser, { user: "bob", password: "bob's long password" });
    expect(r.status).toBe(200);
    expect(r.html).toContain("added user bob");
    expect(t.services.accounts.isOperator("bob")).toBe(false);

    const bobToken = await tokenFor(t.services, "bob", ["connectors:read"]);
    const bobSession = await oauthSignIn(t.app, "bob", "bob's long password");
    expect(await connectorsStatus(t, bobToken)).toBe(200);
    r = await post(CONSOLE_PATHS.revokeAccess, { user: "bob" });
    expect(r.html).toContain("revoked every token of bob");
    expect(await connectorsStatus(t, bobToken)).toBe(401);
    expect(await (await t.app.handle(req("/oauth/apps", { headers: { cookie: bobSession } }))).text()).toContain('action="/oauth/login"');

    r = await post(CONSOLE_PATHS.resetPassword, { user: "bob", password: "bob's new long password" });
    expect(r.html).toContain("changed the password of bob");
    expect(await t.services.accounts.verify("bob", "bob's long password")).toBe(false);
    expect(await t.services.accounts.verify("bob", "bob's new long password")).toBe(true);

    r = await post(CONSOLE_PATHS.removeUser, { user: OPERATOR.user });
    expect(r.status).toBe(400);
    expect(t.services.accounts.isOperator(OPERATOR.user)).toBe(true);
    // bob's data (a webhook of his): removing him is refused, saying what stays, unless his data goes too.
    await t.services.webhooks.add("bob", "https://hooks.example.com/bob", ["user.deleted"], 10);
    r = await post(CONSOLE_PATHS.removeUser, { user: "bob" });
    expect(r.status).toBe(400);
    expect(r.html).toContain("user bob still has data (rows: webhooks 1)");
    expect(t.services.accounts.exists("bob")).toBe(true);
    r = await post(CONSOLE_PATHS.removeUser, { user: "bob", delete_data: "true" });
    expect(r.html).toContain("removed user bob");
    expect(r.html).toContain("deleted their data (rows: webhooks 1)");
    expect(t.services.webhooks.rowsOf("bob")).toBe(0);
    expect(t.services.accounts.exists("bob")).toBe(false);
    r = await post(CONSOLE_PATHS.removeUser, { user: "bob" });
    expect(r.status).toBe(400);
    expect(r.html).toContain("no user bob");
  });

  test("last errors: the log's warnings and errors since start, escaped, newest first, at most RECENT_PROBLEMS kept", async () => {
    const log = t.services.log.child("test");
    log.info("an info line is no problem");
    for (let i = 0; i < RECENT_PROBLEMS + 10; i++) log.warning(`problem ${i}`, { detail: i });
    log.error("<script>alert(1)</script> went wrong", { reason: "<img src=x>" });
    const r = await t.app.handle(req(CONSOLE_PATHS.errors, { headers: { cookie: operatorCookie } }));
    expect(r.status).toBe(200);
    const html = await r.text();
    expect(html).not.toContain("<script>");
    expect(html).not.toContain("<img");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt; went wrong");
    expect(html).not.toContain("an info line");
    const rows = [...html.matchAll(/<tr><td>/g)].length;
    expect(rows).toBe(RECENT_PROBLEMS);
    expect(html).toContain(`problem ${RECENT_PROBLEMS + 9}`);
    expect(html).not.toContain("problem 10<");
    expect(html.indexOf("went wrong")).toBeLessThan(html.indexOf(`problem ${RECENT_PROBLEMS + 9}`));
  });

  test("sign-out ends the session; a removed operator's session is nothing at once", async () => {
    const { cookie } = await consoleSignIn(t, OPERATOR.user, OPERATOR.password);
    const csrf = await csrfOf(t, cookie!);
    const out = await t.app.handle(formPost(CONSOLE_PATHS.logout, { csrf }, { cookie: cookie! }));
    expect(out.status).toBe(200);
    expect(cookieOf(out, CONSOLE_COOKIE)).toBe(`${CONSOLE_COOKIE}=`);
    expect((await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: cookie! } }))).status).toBe(401);

    await t.services.accounts.add("second", "the second operator", { operator: true });
    const second = (await consoleSignIn(t, "second", "the second operator")).cookie!;
    expect((await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: second } }))).status).toBe(200);
    const r = await t.app.handle(
      formPost(CONSOLE_PATHS.removeUser, { csrf: await csrfOf(t, operatorCookie), user: "second" }, { cookie: operatorCookie }),
    );
    expect(r.status).toBe(200);
    expect((await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: second } }))).status).toBe(401);
    expect(new ConsoleSessions(t.db).countOf("second")).toBe(0);
  });

  test("attack: an operator's deletion of their data (DELETE /v1/delete_my_data) ends their console sessions, as their tokens and OAuth sessions, and leaves no row of them", async () => {
    await t.services.accounts.add("third", "the third operator", { operator: true });
    const third = (await consoleSignIn(t, "third", "the third operator")).cookie!;
    expect((await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: third } }))).status).toBe(200);
    const token = await tokenFor(t.services, "third", ["connectors:write"]);
    expect((await t.app.handle(req("/v1/delete_my_data", { method: "DELETE", headers: bearer(token) }))).status).toBe(200);
    expect((await t.app.handle(req(CONSOLE_PATHS.home, { headers: { cookie: third } }))).status).toBe(401);
    expect(t.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM console_sessions WHERE user_id = ?").get("third")!.n).toBe(0);
  });

  // Last: it makes the backups folder, which the tests above check is never made.
  test("a backup is downloaded by an operator only, and only by a name of the folder's own pattern", async () => {
    const name = "corpus-2026-01-01T00-00-00Z.backup";
    const folder = join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER);
    mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, name), "backup bytes");
    const download = (query: string, cookie?: string) =>
      t.app.handle(req(`${CONSOLE_PATHS.downloadBackup}?name=${query}`, cookie ? { headers: { cookie } } : {}));

    expect((await download(name)).status).toBe(401);
    const s = new ConsoleSessions(t.db).create(USER.user);
    expect((await download(name, `${CONSOLE_COOKIE}=${s.id}`)).status).toBe(403);

    const r = await download(name, operatorCookie);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-disposition")).toBe(`attachment; filename="${name}"`);
    expect(await r.text()).toBe("backup bytes");
    for (const bad of [
      "../corpus.db",
      "corpus.db",
      "%2e%2e%2fcorpus.db",
      `${name}%2f..%2f..%2fcorpus.db`,
      `..%2f${BACKUP_FOLDER}%2f${name}`,
      "",
    ])
      expect((await download(bad, operatorCookie)).status).toBe(404);
    // A link under a backup's name serves nothing: its target may be any file the service reads.
    const linked = "corpus-2026-01-01T00-00-01Z.backup";
    symlinkSync(join(t.config.CORPUS_DATA_DIR, "corpus.db"), join(folder, linked));
    expect((await download(linked, operatorCookie)).status).toBe(404);
    rmSync(join(folder, linked));
  });

  test("a backup is removed by an operator's form only, never the only one, never a name outside the folder's pattern", async () => {
    const folder = join(t.config.CORPUS_DATA_DIR, BACKUP_FOLDER);
    const [older, newer] = ["corpus-2026-01-01T00-00-00Z.backup", "corpus-2026-01-02T00-00-00Z.backup"];
    mkdirSync(folder, { recursive: true });
    for (const name of [older, newer]) writeFileSync(join(folder, name), "backup bytes");
    const remove = (name: string, csrf: string, cookie: string) =>
      t.app.handle(formPost(CONSOLE_PATHS.removeBackup, { csrf, name }, { cookie }));

    const s = new ConsoleSessions(t.db).create(USER.user);
    expect((await remove(older, s.csrf, `${CONSOLE_COOKIE}=${s.id}`)).status).toBe(403);
    const csrf = await csrfOf(t, operatorCookie);
    expect((await remove(older, "x".repeat(43), operatorCookie)).status).toBe(403);
    for (const bad of ["../corpus.db", "corpus.db", `../${BACKUP_FOLDER}/${older}`, ""])
      expect((await remove(bad, csrf, operatorCookie)).status).toBe(404);
    expect(readdirSync(folder).sort()).toEqual([older, newer]);

    const page = await (await t.app.handle(req(CONSOLE_PATHS.backups, { headers: { cookie: operatorCookie } }))).text();
    expect(page).toContain(`aria-label="Remove ${older}"`);
    expect(page).toContain("Kept: the newest 3 (CORPUS_BACKUP_KEEP).");
    const done = await remove(older, csrf, operatorCookie);
    expect(done.status).toBe(200);
    expect(await done.text()).toContain(`Removed ${older}.`);
    expect(readdirSync(folder)).toEqual([newer]);
    const only = await remove(newer, csrf, operatorCookie);
    expect(only.status).toBe(409);
    expect(await only.text()).toContain(`Not removed: ${newer} is the only backup: start another first.`);
    expect(readdirSync(folder)).toEqual([newer]);
  });
});
