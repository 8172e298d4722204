// The built-in authorization server's routes (D27): /oauth/authorize (login, then consent),
// /oauth/token, /oauth/register (RFC 7591), /oauth/revoke (RFC 7009), and the connected-apps
// page. Forms are checked against a CSRF token (login: a cookie of its own; consent and apps:
// the session's), and the host check already refuses a POST from another Origin. With an
// upstream OpenID Connect provider (CORPUS_OIDC_ISSUER) a person not signed in is sent there,
// and comes back at /oauth/oidc/callback; the password form is then off.
import { Elysia } from "elysia";
import { SIGNING_ALG } from "../auth/signing-key";
import type { Config } from "../config";
import { isDocumentPagePath } from "../documents/open";
import { errorBody } from "../http/errors";
import { infoOf, type RequestInfo, requestContext } from "../http/request-context";
import { limitKey, parseRanges } from "../limits/client-ip";
import type { Logger } from "../log";
import { authorizationServerMetadata } from "../metadata/service";
import { secret } from "./context";
import { InvalidClientMetadata, InvalidRequest, OAuthError, TemporarilyUnavailable } from "./errors";
import { appsPage, consentPage, loginPage, messagePage, page } from "./pages";
import type { OAuthServer } from "./service";
import { SESSION_TTL_SECONDS } from "./sign-in";
import { KNOWN_ADDRESS_MS } from "./throttle";
import { PENDING_TTL_SECONDS, UPSTREAM_CALLBACK_PATH, UPSTREAM_COOKIE, UpstreamError } from "./upstream";

export const SESSION_COOKIE = "corpus_session";
export const LOGIN_COOKIE = "corpus_login";
/** A browser's own random id, set at a password sign-in: that account's sign-ins from it are never slowed by strangers' failures (throttle.ts). */
export const DEVICE_COOKIE = "corpus_device";
const MAX_FORM_BYTES = 16 * 1024;

export const OAUTH_PATHS = {
  authorize: "/oauth/authorize",
  token: "/oauth/token",
  register: "/oauth/register",
  revoke: "/oauth/revoke",
  apps: "/oauth/apps",
  login: "/oauth/login",
} as const;

/** Form posts these paths take (application/x-www-form-urlencoded, RFC 6749); every other POST stays JSON-only. */
export const FORM_PATHS: ReadonlySet<string> = new Set([
  "/oauth/token",
  "/oauth/revoke",
  "/oauth/login",
  "/oauth/consent",
  "/oauth/apps/revoke",
  "/oauth/logout",
]);

export function cookies(request: Request): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) map.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return map;
}

/** A form post a browser marks as sent from another site (Fetch Metadata): refused before its form is read. */
export function sentFromAnotherSite(request: Request): boolean {
  const site = request.headers.get("sec-fetch-site");
  return site !== null && site !== "same-origin" && site !== "none";
}

/** A form post's fields; InvalidRequest when it is not one, or larger than 16 KiB. */
export async function form(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^\s*application\/x-www-form-urlencoded\s*(;|$)/i.test(type))
    throw new InvalidRequest("the body must be application/x-www-form-urlencoded");
  const text = await request.text();
  if (text.length > MAX_FORM_BYTES) throw new InvalidRequest("the form is too large");
  return new URLSearchParams(text);
}

const JSON_HEADERS = {
  "content-type": "application/json;charset=utf-8",
  "cache-control": "no-store",
  pragma: "no-cache",
  "x-content-type-options": "nosniff",
};

function oauthJson(body: unknown, status = 200, extra: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { ...JSON_HEADERS, ...extra } });
}

/** Headers an OAuth error is answered with: the Basic challenge of a 401, the Retry-After of a 429. */
function errorHeaders(error: OAuthError): Record<string, string> {
  if (error.status === 401) return { "www-authenticate": 'Basic realm="corpus"' };
  if (error instanceof TemporarilyUnavailable && error.retryAfter !== undefined) return { "retry-after": String(error.retryAfter) };
  return {};
}

/** Whether a form's CSRF field is the expected token (either may be missing). */
export const constantEqual = (a: string | null | undefined, b: string | null | undefined) =>
  !!a && !!b && a.length === b.length && Bun.hash(a) === Bun.hash(b) && a === b;

// What the OpenAPI document says of these routes: their answers are written here (OAuth's
// `{ error, error_description }`, or a page), so they are described, not validated.
const OAUTH_ERROR_SCHEMA = {
  type: "object",
  properties: { error: { type: "string" }, error_description: { type: "string" } },
  required: ["error"],
};
const jsonAnswer = (description: string, schema: object = { type: "object", additionalProperties: true }) => ({
  description,
  content: { "application/json": { schema } },
});
const htmlAnswer = (description: string) => ({ description, content: { "text/html": { schema: { type: "string" } } } });
const oauthErrors = {
  400: jsonAnswer(
    "invalid_request, invalid_grant, invalid_target, invalid_scope, unsupported_grant_type, invalid_client_metadata, invalid_redirect_uri",
    OAUTH_ERROR_SCHEMA,
  ),
  401: jsonAnswer("invalid_client", OAUTH_ERROR_SCHEMA),
};
const formBody = (fields: string[]) => ({
  required: true,
  content: {
    "application/x-www-form-urlencoded": {
      schema: { type: "object", properties: Object.fromEntries(fields.map((f) => [f, { type: "string" }])) },
    },
  },
});
/** The route options of an OAuth endpoint answering JSON: its body read by the handler, its answers and the OAuth errors. */
const endpointDoc = (summary: string, requestBody: object, answers: Record<number, object>) => ({
  parse: "none" as const,
  detail: { tags: ["oauth"], summary, requestBody, responses: { ...answers, ...oauthErrors } } as never,
});
const pageDoc = (summary: string, fields?: string[], extra: Record<number, object> = {}) => ({
  tags: ["oauth"],
  summary,
  ...(fields ? { requestBody: formBody(fields) } : {}),
  responses: {
    200: htmlAnswer("a page"),
    303: { description: "on to the next step, or back to the client's redirect URI with code or error, state and iss" },
    400: htmlAnswer("a page saying why the request cannot be used"),
    401: htmlAnswer("the sign-in page"),
    403: htmlAnswer("a form without its CSRF token"),
    ...extra,
  },
});

export const OPENID_CONFIGURATION_PATH = "/.well-known/openid-configuration";

/**
 * With an upstream provider, corpus is an OpenID Provider as well as an OAuth authorization
 * server: the RFC 8414 document (same issuer, same endpoints) with the fields OpenID Connect
 * Discovery 1.0 requires. `sub` is the corpus user (for an upstream person, their namespaced
 * id); ID tokens are EdDSA, signed with the key of jwks_uri. Undefined without a provider.
 */
export function openidConfiguration(config: Config, oauth: OAuthServer): Record<string, unknown> | undefined {
  if (!oauth.upstream) return undefined;
  return {
    ...authorizationServerMetadata(config),
    scopes_supported: oauth.grantableScopes(),
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [SIGNING_ALG],
    claims_supported: ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce"],
  };
}

export const oauthRoutes = (config: Config, oauth: OAuthServer, log: Logger) => {
  /** What an error keeps from the client (a metadata document's TLS error, say) is the operator's to read. */
  const logDetail = (error: OAuthError) => {
    if (error.detail) log.warning("oauth request refused", { error: error.error, reason: error.message, detail: error.detail });
  };
  /** An OAuth endpoint's answer: what `run` returns, or the OAuthError it throws as `{ error, error_description }`. */
  const oauthAnswer = async (run: () => Promise<Response>): Promise<Response> => {
    try {
      return await run();
    } catch (error) {
      if (!(error instanceof OAuthError)) throw error;
      logDetail(error);
      return oauthJson({ error: error.error, error_description: error.message }, error.status, errorHeaders(error));
    }
  };
  /** A page saying why an authorization request cannot be used (never a redirect to an unverified URI). */
  const refusedPage = (error: OAuthError) => {
    logDetail(error);
    const status = error instanceof TemporarilyUnavailable ? error.status : 400;
    const headers: Array<[string, string]> = Object.entries(errorHeaders(error));
    return page("Cannot continue", messagePage("This sign-in link cannot be used", error.message), status, headers);
  };
  /** An upstream sign-in that fails is the operator's to see (a provider down, a key rotated, an attack): its reason, never a code or token. */
  const upstreamFailed = (stage: "start" | "callback", error: UpstreamError) =>
    log.warning("upstream sign-in failed", { stage, issuer: config.CORPUS_OIDC_ISSUER, reason: error.message });
  const secure = config.issuer.startsWith("https://") || config.resourceUrl.startsWith("https://");
  const trusted = parseRanges(config.CORPUS_TRUSTED_PROXIES);
  // The session's cookie also reaches a cited document's page (/d/<id>, D36), opened only for its signed-in owner.
  const cookie = (name: string, value: string, maxAge: number, path = name === SESSION_COOKIE ? "/" : "/oauth") =>
    `${name}=${value}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
  /**
   * The session cookie as it was set before it moved to Path=/ (for /d/<id>, D36): ended, so a
   * browser holding it is not sent between a document's page (which never sees it) and the
   * sign-in (which does) for as long as the session lives, and is signed out by signing out.
   */
  const formerSessionCookie: [string, string] = ["set-cookie", cookie(SESSION_COOKIE, "", 0, "/oauth")];
  /**
   * Where a sign-in may lead back to: this server's own OAuth pages or a document's page, never an
   * open redirect; only visible ASCII (as a URL's query is written), which a Location header holds.
   */
  const returnTarget = (back: string | null | undefined) =>
    back &&
    /^[\x21-\x7e]+$/.test(back) &&
    (back.startsWith(`${OAUTH_PATHS.authorize}?`) || back === OAUTH_PATHS.apps || isDocumentPagePath(back))
      ? back
      : OAUTH_PATHS.apps;
  const address = (request: Request, info: RequestInfo | undefined) => limitKey(infoOf(request, info).clientBehind(trusted));
  const session = async (request: Request) => {
    const id = cookies(request).get(SESSION_COOKIE);
    const s = await oauth.session(id);
    return s && id ? { ...s, id } : undefined;
  };
  const redirect = (location: string, headers: Array<[string, string]> = []) => {
    const h = new Headers({ location, "cache-control": "no-store" });
    for (const [k, v] of headers) h.append(k, v);
    return new Response(null, { status: 303, headers: h });
  };

  /** The login page, with a fresh login CSRF cookie when the browser has none. */
  const login = (
    request: Request,
    carry: Record<string, string>,
    status = 200,
    extra: { error?: string; user?: string; clientName?: string; headers?: Array<[string, string]> } = {},
  ) => {
    let csrf = cookies(request).get(LOGIN_COOKIE);
    const headers: Array<[string, string]> = [...(extra.headers ?? [])];
    if (!csrf || !/^[A-Za-z0-9_-]{43}$/.test(csrf)) {
      csrf = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
      headers.push(["set-cookie", cookie(LOGIN_COOKIE, csrf, 3600)]);
    }
    return page("Sign in", loginPage({ action: "/oauth/login", csrf, carry, ...extra }), status, headers);
  };

  /**
   * A person not signed in: to the upstream provider when there is one (a 303, with the cookie
   * binding the sign-in to this browser), else the sign-in form.
   */
  const signInFirst = async (
    request: Request,
    info: RequestInfo | undefined,
    returnTo: string,
    status = 200,
    extra: { error?: string; clientName?: string } = {},
  ): Promise<Response> => {
    if (!oauth.upstream) return login(request, { return: returnTo }, status, extra);
    try {
      const started = await oauth.upstream.begin(returnTo, address(request, info));
      return redirect(started.url, [["set-cookie", cookie(UPSTREAM_COOKIE, started.binding, PENDING_TTL_SECONDS)]]);
    } catch (error) {
      if (error instanceof UpstreamError) {
        upstreamFailed("start", error);
        return page("Cannot sign in", messagePage("Cannot sign in", `Sign-in failed: ${error.message}.`), 502);
      }
      throw error;
    }
  };

  /** What an authorization request shows: a page for a bad client or redirect, else login or consent. */
  const authorize = async (request: Request, info: RequestInfo | undefined, query: string): Promise<Response> => {
    let checked: Awaited<ReturnType<typeof oauth.authorizationRequest>>;
    try {
      checked = await oauth.authorizationRequest(new URLSearchParams(query), address(request, info));
    } catch (error) {
      if (error instanceof OAuthError) return refusedPage(error);
      throw error;
    }
    if ("redirectError" in checked) {
      const e = checked.redirectError;
      return redirect(
        oauth.redirect(e.redirectUri, {
          error: e.error,
          error_description: e.description,
          ...(e.state !== undefined ? { state: e.state } : {}),
        }),
      );
    }
    const r = checked.request;
    const s = await session(request);
    if (!s) return signInFirst(request, info, `${OAUTH_PATHS.authorize}?${query}`, 200, { clientName: r.client.name });
    return page(
      "Allow access",
      consentPage({
        user: s.user,
        clientName: r.client.name,
        redirectUri: r.redirectUri,
        scopes: r.scopes,
        csrf: s.csrf,
        carry: { request: query },
      }),
    );
  };

  return new Elysia({ name: "corpus/oauth" })
    .use(requestContext)
    .get(OAUTH_PATHS.authorize, ({ request, info }) => authorize(request, info, new URL(request.url).search.slice(1)), {
      detail: pageDoc("Authorization endpoint: sign in, then consent (authorization code with PKCE S256)", undefined, {
        429: htmlAnswer("too many client metadata documents fetched for this address (Retry-After)"),
        503: htmlAnswer("no room for another client"),
      }) as never,
    })
    .post(
      "/oauth/login",
      async ({ request, info }) => {
        if (oauth.upstream)
          return page(
            "Cannot continue",
            messagePage("Sign-in refused", "People sign in at this server's identity provider, not with a password here."),
            400,
          );
        let f: URLSearchParams;
        try {
          f = await form(request);
        } catch {
          return page("Cannot continue", messagePage("Sign-in refused", "The form could not be read."), 400);
        }
        const target = returnTarget(f.get("return"));
        if (!constantEqual(f.get("csrf"), cookies(request).get(LOGIN_COOKIE))) {
          return login(request, { return: target }, 403, {
            error: "This sign-in form has expired or did not come from this server. Please sign in again.",
          });
        }
        // Longer than any account name can be (128): cut, so neither the page nor the throttle keeps it whole.
        const user = (f.get("user") ?? "").trim().slice(0, 129);
        const given = cookies(request).get(DEVICE_COOKIE);
        const device = given && /^[A-Za-z0-9_-]{43}$/.test(given) ? given : undefined;
        // A new id at each sign-in, as a session's: one put in the browser by a stranger is never made known.
        const issued = secret();
        const result = await oauth.login(user, f.get("password") ?? "", address(request, info), device, issued);
        if (!result.ok) {
          if (result.refused) {
            const { reason, retryAfter } = result.refused;
            return login(request, { return: target }, 429, {
              user,
              error:
                reason === "busy"
                  ? "Too many sign-ins at once. Try again in a moment."
                  : retryAfter < 60
                    ? `Too many failed sign-ins. Try again in ${retryAfter} seconds.`
                    : `Too many failed sign-ins. Try again in ${Math.ceil(retryAfter / 60)} minute(s).`,
              headers: [["retry-after", String(retryAfter)]],
            });
          }
          return login(request, { return: target }, 401, { user, error: "The user name or password is not right." });
        }
        const s = await oauth.createSession(user);
        return redirect(target, [
          ["set-cookie", cookie(SESSION_COOKIE, s.id, SESSION_TTL_SECONDS)],
          ["set-cookie", cookie(LOGIN_COOKIE, "", 0)],
          ["set-cookie", cookie(DEVICE_COOKIE, issued, KNOWN_ADDRESS_MS / 1000)],
        ]);
      },
      {
        parse: "none",
        detail: pageDoc("Sign in (form)", ["user", "password", "csrf", "return"], {
          429: htmlAnswer("too many failed sign-ins (Retry-After)"),
        }) as never,
      },
    )
    .post(
      "/oauth/consent",
      async ({ request, info }) => {
        const s = await session(request);
        let f: URLSearchParams;
        try {
          f = await form(request);
        } catch {
          return page("Cannot continue", messagePage("Consent refused", "The form could not be read."), 400);
        }
        if (!s)
          return signInFirst(request, info, `${OAUTH_PATHS.authorize}?${f.get("request") ?? ""}`, 401, { error: "Please sign in first." });
        if (!constantEqual(f.get("csrf"), s.csrf))
          return page(
            "Cannot continue",
            messagePage("Consent refused", "This form did not come from this server, or it has expired. Start again from the application."),
            403,
          );
        let checked: Awaited<ReturnType<typeof oauth.authorizationRequest>>;
        try {
          checked = await oauth.authorizationRequest(new URLSearchParams(f.get("request") ?? ""), address(request, info));
        } catch (error) {
          if (error instanceof OAuthError) return refusedPage(error);
          throw error;
        }
        if ("redirectError" in checked)
          return page("Cannot continue", messagePage("This sign-in link cannot be used", checked.redirectError.description), 400);
        const r = checked.request;
        const chosen = new Set(f.getAll("grant_scope"));
        const granted = r.scopes.filter((x) => chosen.has(x));
        if (f.get("decision") !== "allow" || granted.length === 0) {
          return redirect(
            oauth.redirect(r.redirectUri, {
              error: "access_denied",
              error_description: "the user denied access",
              ...(r.state !== undefined ? { state: r.state } : {}),
            }),
          );
        }
        return redirect(await oauth.issueCode(r, s.user, granted));
      },
      { parse: "none", detail: pageDoc("Consent (form)", ["csrf", "request", "decision", "grant_scope"]) as never },
    )
    .post(
      OAUTH_PATHS.token,
      ({ request, info }) =>
        oauthAnswer(async () =>
          oauthJson(await oauth.token(await form(request), request.headers.get("authorization"), address(request, info))),
        ),
      endpointDoc(
        "Token endpoint: authorization_code (PKCE) and refresh_token grants",
        formBody([
          "grant_type",
          "code",
          "code_verifier",
          "redirect_uri",
          "refresh_token",
          "client_id",
          "client_secret",
          "resource",
          "scope",
        ]),
        { 200: jsonAnswer("access_token, token_type, expires_in, scope, and refresh_token with offline_access") },
      ),
    )
    .post(
      OAUTH_PATHS.revoke,
      ({ request, info }) =>
        oauthAnswer(async () => {
          await oauth.revoke(await form(request), request.headers.get("authorization"), address(request, info));
          return oauthJson({});
        }),
      endpointDoc("Token revocation (RFC 7009)", formBody(["token", "token_type_hint", "client_id", "client_secret"]), {
        200: jsonAnswer("revoked, or not a token of this client"),
      }),
    )
    .post(
      OAUTH_PATHS.register,
      ({ request, info }) =>
        oauthAnswer(async () => {
          let meta: unknown;
          try {
            const text = await request.text();
            if (text.length > MAX_FORM_BYTES) throw new Error();
            meta = JSON.parse(text);
          } catch {
            throw new InvalidClientMetadata("the body must be a JSON object of at most 16 KiB");
          }
          if (typeof meta !== "object" || meta === null || Array.isArray(meta))
            throw new InvalidClientMetadata("the body must be a JSON object");
          return oauthJson(await oauth.register(meta as Record<string, unknown>, address(request, info)), 201);
        }),
      endpointDoc(
        "Dynamic client registration (RFC 7591)",
        {
          required: true,
          content: {
            "application/json": {
              schema: {
                type: "object",
                properties: {
                  redirect_uris: { type: "array", items: { type: "string" } },
                  client_name: { type: "string" },
                  token_endpoint_auth_method: { type: "string" },
                  grant_types: { type: "array", items: { type: "string" } },
                },
                required: ["redirect_uris"],
              },
            },
          },
        },
        {
          201: jsonAnswer("the client information (client_id, and client_secret for a confidential client)"),
          429: jsonAnswer("too many registrations from this address (Retry-After)", OAUTH_ERROR_SCHEMA),
        },
      ),
    )
    .get(
      OAUTH_PATHS.login,
      async ({ request, info }) => {
        const back = returnTarget(new URL(request.url).searchParams.get("return"));
        const s = await session(request);
        // Signed in: the session's cookie set again where every page sees it (Path=/), the former one ended.
        return s
          ? redirect(back, [formerSessionCookie, ["set-cookie", cookie(SESSION_COOKIE, s.id, SESSION_TTL_SECONDS)]])
          : signInFirst(request, info, back);
      },
      { detail: pageDoc("Sign in, then back to `return` (a document's page /d/<id>, or this server's own pages)") as never },
    )
    .get(
      OAUTH_PATHS.apps,
      async ({ request, info }) => {
        const s = await session(request);
        if (!s) return signInFirst(request, info, OAUTH_PATHS.apps);
        return page("Connected apps", appsPage({ user: s.user, csrf: s.csrf, apps: await oauth.connectedApps(s.user) }));
      },
      { detail: pageDoc("Connected apps: the applications holding access, each revocable") as never },
    )
    .post(
      "/oauth/apps/revoke",
      async ({ request, info }) => {
        const s = await session(request);
        const f = await form(request).catch(() => new URLSearchParams());
        if (!s) return signInFirst(request, info, OAUTH_PATHS.apps, 401, { error: "Please sign in first." });
        if (!constantEqual(f.get("csrf"), s.csrf))
          return page("Cannot continue", messagePage("Refused", "This form did not come from this server, or it has expired."), 403);
        const done = await oauth.revokeAppOf(s.user, f.get("grant") ?? "");
        return page(
          "Connected apps",
          appsPage({
            user: s.user,
            csrf: s.csrf,
            apps: await oauth.connectedApps(s.user),
            notice: done ? "Access revoked." : "Nothing to revoke.",
          }),
          done ? 200 : 404,
        );
      },
      {
        parse: "none",
        detail: pageDoc("Revoke a connected app (form)", ["csrf", "grant"], { 404: htmlAnswer("not a grant of this user") }) as never,
      },
    )
    .get(
      UPSTREAM_CALLBACK_PATH,
      async ({ request }) => {
        const clear: [string, string] = ["set-cookie", cookie(UPSTREAM_COOKIE, "", 0)];
        try {
          const done = await oauth.upstreamSignIn(new URL(request.url).searchParams, cookies(request).get(UPSTREAM_COOKIE));
          // Only back into this server's own OAuth pages: never an open redirect.
          const target = returnTarget(done.returnTo);
          return redirect(target, [["set-cookie", cookie(SESSION_COOKIE, done.session.id, SESSION_TTL_SECONDS)], clear]);
        } catch (error) {
          if (error instanceof UpstreamError) {
            upstreamFailed("callback", error);
            return page(
              "Cannot sign in",
              messagePage("Sign-in refused", `${error.message[0]!.toUpperCase()}${error.message.slice(1)}.`),
              400,
              [clear],
            );
          }
          throw error;
        }
      },
      {
        detail: pageDoc("The upstream OpenID Connect provider's answer (code, state): signs the person in, then on to consent", undefined, {
          400: htmlAnswer("a page saying why the sign-in is refused (state, nonce, issuer, audience, expiry, signature)"),
        }) as never,
      },
    )
    .get(
      OPENID_CONFIGURATION_PATH,
      () =>
        openidConfiguration(config, oauth) ??
        oauthJson(
          errorBody(404, "no OpenID Connect provider is configured (CORPUS_OIDC_ISSUER): see /.well-known/oauth-authorization-server"),
          404,
        ),
      {
        detail: {
          tags: ["metadata"],
          summary:
            "OpenID Connect Discovery 1.0 document of the built-in authorization server, served when an upstream provider is configured (CORPUS_OIDC_ISSUER); else 404",
          responses: {
            200: jsonAnswer("the RFC 8414 document with the OpenID Provider fields"),
            404: { description: "no upstream provider" },
          },
        } as never,
      },
    )
    .post(
      "/oauth/logout",
      async ({ request }) => {
        const s = await session(request);
        const f = await form(request).catch(() => new URLSearchParams());
        if (s && constantEqual(f.get("csrf"), s.csrf)) await oauth.endSession(s.id);
        else if (s) return page("Cannot continue", messagePage("Refused", "This form did not come from this server."), 403);
        return page("Signed out", messagePage("Signed out", "You are signed out of corpus."), 200, [
          ["set-cookie", cookie(SESSION_COOKIE, "", 0)],
          formerSessionCookie,
        ]);
      },
      { parse: "none", detail: pageDoc("Sign out (form)", ["csrf"]) as never },
    );
};
