// The operator console at /console (D35), served by the executable: operators sign in with their
// password, as at the OAuth pages and through the same throttle and hash gate (OAuthServer.login),
// and get a session of their own (console/store.ts): a cookie HttpOnly, SameSite=Strict,
// Path=/console, Secure under https, short-lived. Whether its account is an operator is asked at
// every request: anyone else gets a 403 page and nothing is done. Every form carries the
// session's CSRF token (the sign-in form a cookie's, as the OAuth login does); a POST a browser
// marks as sent from another site is refused before its form is read, beside the host check's
// refusal of a foreign Origin. Accounts change through the functions the CLI calls
// (accounts/operations.ts).
import { Elysia } from "elysia";
import { addAccount, changePassword, removeAccount, revokeAccess } from "../accounts/operations";
import { AccountError } from "../accounts/store";
import { DomainError } from "../errors";
import type { HealthChecks } from "../health/checks";
import { runChecks } from "../health/checks";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { limitKey, parseRanges } from "../limits/client-ip";
import { RECENT_PROBLEMS } from "../log";
import { secret } from "../oauth/context";
import { messagePage, page } from "../oauth/pages";
import { constantEqual, cookies, form, sentFromAnotherSite } from "../oauth/routes";
import type { Services } from "../services";
import { SERVICE_VERSION } from "../version";
import { ConsoleBackups } from "./backups";
import {
  backupsPage,
  CONSOLE_PATHS,
  CONSOLE_STYLE,
  connectorsPage,
  errorsPage,
  grantStartedPage,
  type HealthView,
  healthPage,
  signInPage,
  usersPage,
} from "./pages";
import { CONSOLE_SESSION_SECONDS, ConsoleSessions } from "./store";

export const CONSOLE_COOKIE = "corpus_console";
/** The sign-in form's CSRF token before there is a session (double submit, as /oauth/login). */
export const CONSOLE_LOGIN_COOKIE = "corpus_console_login";

/** The console's form posts: every other POST stays JSON-only (http/content-type.ts). */
export const CONSOLE_FORM_PATHS: ReadonlySet<string> = new Set([
  CONSOLE_PATHS.login,
  CONSOLE_PATHS.logout,
  CONSOLE_PATHS.addUser,
  CONSOLE_PATHS.removeUser,
  CONSOLE_PATHS.resetPassword,
  CONSOLE_PATHS.revokeAccess,
  CONSOLE_PATHS.startBackup,
  CONSOLE_PATHS.removeBackup,
  CONSOLE_PATHS.grantConnector,
]);

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

const HIDDEN_DOC = { detail: { hide: true } } as const;

type Operator = { user: string; csrf: string; id: string };

export const consoleRoutes = (services: Services, checks: HealthChecks) => {
  const { config, accounts, oauth } = services;
  const sessions = new ConsoleSessions(services.db, services.now);
  const log = services.log.child("console");
  const backups = new ConsoleBackups(
    config.CORPUS_DATA_DIR,
    services.disk,
    log,
    { keep: config.CORPUS_BACKUP_KEEP, keepDays: config.CORPUS_BACKUP_KEEP_DAYS },
    services.now,
  );
  const secure = config.issuer.startsWith("https://") || config.resourceUrl.startsWith("https://");
  const trusted = parseRanges(config.CORPUS_TRUSTED_PROXIES);
  const cookie = (name: string, value: string, maxAge: number) =>
    `${name}=${value}; Path=/console; HttpOnly; SameSite=Strict; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
  const address = (request: Request, info: RequestInfo | undefined) => limitKey(infoOf(request, info).clientBehind(trusted));
  const show = (title: string, body: string, status = 200, headers: Array<[string, string]> = []) =>
    page(title, body, status, headers, CONSOLE_STYLE);
  const redirect = (location: string, headers: Array<[string, string]> = []) => {
    const h = new Headers({ location, "cache-control": "no-store" });
    for (const [k, v] of headers) h.append(k, v);
    return new Response(null, { status: 303, headers: h });
  };
  const forbidden = (text: string) => show("Forbidden", messagePage("Forbidden", text), 403);

  /** The sign-in page, with a fresh CSRF cookie when the browser has none. */
  const signIn = (request: Request, status = 200, extra: { error?: string; user?: string; headers?: Array<[string, string]> } = {}) => {
    let csrf = cookies(request).get(CONSOLE_LOGIN_COOKIE);
    const headers: Array<[string, string]> = [...(extra.headers ?? [])];
    if (!csrf || !TOKEN_SHAPE.test(csrf)) {
      csrf = secret();
      headers.push(["set-cookie", cookie(CONSOLE_LOGIN_COOKIE, csrf, 3600)]);
    }
    return show("Console sign-in", signInPage({ csrf, ...extra }), status, headers);
  };

  /**
   * Who asks: an operator with a live session, or the answer to give instead (the sign-in page
   * without a session, 403 for an account that is no operator, whose session ends).
   */
  const operator = async (request: Request): Promise<Operator | Response> => {
    const id = cookies(request).get(CONSOLE_COOKIE);
    const s = sessions.get(id);
    if (!s || !id) return signIn(request, 401, request.method === "POST" ? { error: "Please sign in first." } : {});
    if (!(await accounts.isOperator(s.user))) {
      sessions.end(id);
      return forbidden("The console is for operators only.");
    }
    return { ...s, id };
  };

  /** A form post of a signed-in operator, checked (site, session, CSRF) before `act` runs. */
  const action =
    (act: (who: Operator, f: URLSearchParams) => Promise<Response> | Response) =>
    async ({ request }: { request: Request }) => {
      if (sentFromAnotherSite(request)) return forbidden("This form was sent from another site.");
      const who = await operator(request);
      if (who instanceof Response) return who;
      let f: URLSearchParams;
      try {
        f = await form(request);
      } catch {
        return show("Cannot continue", messagePage("Refused", "The form could not be read."), 400);
      }
      if (!constantEqual(f.get("csrf"), who.csrf)) return forbidden("This form did not come from this console, or it has expired.");
      return act(who, f);
    };

  const usersView = async (
    who: Operator,
    status = 200,
    extra: { notice?: string; error?: string } = {},
    form?: { user?: string; operator?: boolean },
  ) => show("Users", usersPage({ user: who.user, csrf: who.csrf, ...extra }, await accounts.list(), form), status);

  /** Runs an account change; its refusal (AccountError) is shown on the users page. */
  const accountChange =
    (what: string, change: (who: Operator, user: string, f: URLSearchParams) => Promise<string> | string) =>
    (who: Operator, f: URLSearchParams) =>
      (async () => {
        const user = (f.get("user") ?? "").trim().slice(0, 129);
        try {
          const done = await change(who, user, f);
          log.info("console: account changed", { operator: who.user, action: what, user });
          return usersView(who, 200, { notice: done });
        } catch (error) {
          if (!(error instanceof AccountError)) throw error;
          return usersView(who, 400, { error: error.message }, what === "add" ? { user, operator: f.get("operator") === "true" } : {});
        }
      })();

  const backupsView = (who: Operator, status = 200, extra: { notice?: string; error?: string } = {}) =>
    show(
      "Backups",
      backupsPage(
        { user: who.user, csrf: who.csrf, ...extra },
        { folder: backups.folder, last: backups.last(), files: backups.list(), bounds: backups.bounds },
      ),
      status,
    );

  const health = async (): Promise<HealthView> => {
    const [auth, connectors] = await Promise.all([runChecks(checks.auth), runChecks(checks.connectors)]);
    let databaseBytes = Number.NaN;
    try {
      databaseBytes = services.db
        .query<{ bytes: number }, []>("SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()")
        .get()!.bytes;
    } catch {
      // The database cannot be read: the auth check above says so.
    }
    const low = services.disk.lowReason();
    const owed = await services.owed.complete();
    return {
      version: SERVICE_VERSION,
      auth,
      connectors,
      disk: {
        free: services.disk.free(),
        minFree: services.disk.minFreeBytes,
        reserve: services.disk.hasReserve(),
        ...(low ? { low } : {}),
      },
      databaseBytes,
      ...(owed ? { owed: owed as unknown as Record<string, number> } : {}),
    };
  };

  return new Elysia({ name: "corpus/console" })
    .use(requestContext)
    .get(
      CONSOLE_PATHS.home,
      async ({ request }) => {
        const who = await operator(request);
        if (who instanceof Response) return who;
        return show("Health", healthPage(who, await health()));
      },
      HIDDEN_DOC,
    )
    .get(
      CONSOLE_PATHS.users,
      async ({ request }) => {
        const who = await operator(request);
        return who instanceof Response ? who : usersView(who);
      },
      HIDDEN_DOC,
    )
    .get(
      CONSOLE_PATHS.backups,
      async ({ request }) => {
        const who = await operator(request);
        return who instanceof Response ? who : backupsView(who);
      },
      HIDDEN_DOC,
    )
    .get(
      CONSOLE_PATHS.connectors,
      async ({ request }) => {
        const who = await operator(request);
        if (who instanceof Response) return who;
        // What each user's GET /v1/connectors lists: their own, and the operator's (the same for all).
        const own = (await services.connectors.list(who.user)).filter((c) => c.owner === "operator");
        const users = await Promise.all(
          (await accounts.list()).map(async (a) => ({
            user: a.id,
            connectors: (await services.connectors.list(a.id)).filter((c) => c.owner === "user"),
          })),
        );
        return show("Connectors", connectorsPage(who, own, users, await services.connectors.operatorGrants()));
      },
      HIDDEN_DOC,
    )
    .get(
      CONSOLE_PATHS.downloadBackup,
      async ({ request }) => {
        const who = await operator(request);
        if (who instanceof Response) return who;
        const name = new URL(request.url).searchParams.get("name") ?? "";
        const path = backups.pathOf(name);
        if (!path) return show("Not found", messagePage("Not found", "There is no such backup in the folder."), 404);
        log.info("console: backup downloaded", { operator: who.user, backup: name });
        return new Response(Bun.file(path), {
          headers: {
            "content-type": "application/octet-stream",
            "content-disposition": `attachment; filename="${name}"`,
            "cache-control": "no-store",
            "x-content-type-options": "nosniff",
          },
        });
      },
      HIDDEN_DOC,
    )
    .get(
      CONSOLE_PATHS.errors,
      async ({ request }) => {
        const who = await operator(request);
        return who instanceof Response ? who : show("Last errors", errorsPage(who, services.log.recentProblems(), RECENT_PROBLEMS));
      },
      HIDDEN_DOC,
    )
    .post(
      CONSOLE_PATHS.startBackup,
      action((who) => {
        const started = backups.start(who.user);
        // To the list (post, redirect, get): reloading it never starts another backup.
        return "started" in started
          ? redirect(CONSOLE_PATHS.backups)
          : backupsView(who, 409, { error: `No backup started: ${started.refused}.` });
      }),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.removeBackup,
      action((who, f) => {
        const name = f.get("name") ?? "";
        if (!backups.pathOf(name)) return show("Not found", messagePage("Not found", "There is no such backup in the folder."), 404);
        const done = backups.remove(who.user, name);
        return "removed" in done
          ? backupsView(who, 200, { notice: `Removed ${done.removed}.` })
          : backupsView(who, 409, { error: `Not removed: ${done.refused}.` });
      }),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.grantConnector,
      action(async (who, f) => {
        const id = (f.get("id") ?? "").slice(0, 64);
        // The grant waits only while this operator's session stands (as a user's, while their token does).
        const stillAllowed = async () => {
          if (!sessions.get(who.id) || !(await accounts.isOperator(who.user))) throw new Error("the console session has ended");
        };
        try {
          const started = services.connectors.beginOperatorGrant(id, stillAllowed, { asker: who.user });
          const provider = (await services.connectors.operatorGrants()).find((g) => g.id === id)?.grant.provider ?? "the provider";
          log.info("console: connector grant started", { operator: who.user, connector: id });
          return show("Grant access", grantStartedPage(who, id, provider, started.authorize_url, started.expires_at));
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          return show("Cannot grant", messagePage("Cannot grant access", error.message), 400);
        }
      }),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.login,
      async ({ request, info }) => {
        if (sentFromAnotherSite(request)) return forbidden("This form was sent from another site.");
        let f: URLSearchParams;
        try {
          f = await form(request);
        } catch {
          return show("Cannot continue", messagePage("Sign-in refused", "The form could not be read."), 400);
        }
        if (!constantEqual(f.get("csrf"), cookies(request).get(CONSOLE_LOGIN_COOKIE)))
          return signIn(request, 403, { error: "This sign-in form has expired or did not come from this server. Please sign in again." });
        // Longer than any account name can be (128): cut, so neither the page nor the throttle keeps it whole.
        const user = (f.get("user") ?? "").trim().slice(0, 129);
        const result = await oauth.login(user, f.get("password") ?? "", address(request, info));
        if (!result.ok) {
          if (result.refused) {
            const { reason, retryAfter } = result.refused;
            return signIn(request, 429, {
              user,
              error:
                reason === "busy"
                  ? "Too many sign-ins at once. Try again in a moment."
                  : `Too many failed sign-ins. Try again in ${retryAfter} seconds.`,
              headers: [["retry-after", String(retryAfter)]],
            });
          }
          return signIn(request, 401, { user, error: "The user name or password is not right." });
        }
        if (!(await accounts.isOperator(user))) {
          log.warning("console: sign-in of an account that is no operator refused", { user });
          return forbidden(`${user} is not an operator: the console is for operators only (corpus user add --operator).`);
        }
        const s = sessions.create(user);
        log.info("console: operator signed in", { operator: user });
        return redirect(CONSOLE_PATHS.home, [
          ["set-cookie", cookie(CONSOLE_COOKIE, s.id, CONSOLE_SESSION_SECONDS)],
          ["set-cookie", cookie(CONSOLE_LOGIN_COOKIE, "", 0)],
        ]);
      },
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.logout,
      action((who) => {
        sessions.end(who.id);
        return show("Signed out", messagePage("Signed out", "You are signed out of the console."), 200, [
          ["set-cookie", cookie(CONSOLE_COOKIE, "", 0)],
        ]);
      }),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.addUser,
      action(accountChange("add", (_who, user, f) => addAccount(services, user, f.get("password") ?? "", f.get("operator") === "true"))),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(
      CONSOLE_PATHS.resetPassword,
      action(accountChange("reset password", (_who, user, f) => changePassword(services, user, f.get("password") ?? ""))),
      { parse: "none", ...HIDDEN_DOC },
    )
    .post(CONSOLE_PATHS.revokeAccess, action(accountChange("revoke access", (_who, user) => revokeAccess(services, user))), {
      parse: "none",
      ...HIDDEN_DOC,
    })
    .post(
      CONSOLE_PATHS.removeUser,
      action(
        accountChange("remove", (who, user, f) => {
          // The operator's own account: removing it here would lock them out mid-session.
          if (user === who.user) throw new AccountError("you cannot remove the account you are signed in with (use corpus user remove)");
          return removeAccount(services, user, f.get("delete_data") === "true");
        }),
      ),
      { parse: "none", ...HIDDEN_DOC },
    );
};
