// Drives the built-in authorization server in-process the way a browser would: the login
// form, then the consent form, following the 303s by hand.
import { createHash, randomBytes } from "node:crypto";
import { MAX_CLIENTS } from "../../src/oauth/registration";
import type { ClientRow, SqliteOAuthStore } from "../../src/oauth/store";
import { BASE } from "../helpers";

type Handle = { handle(request: Request): Promise<Response> | Response };

export const pkce = () => {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
};

/** The value of a hidden or named input in a page. */
export const field = (html: string, name: string) =>
  new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1]?.replaceAll("&amp;", "&").replaceAll("&quot;", '"');

export const cookieOf = (r: Response, name: string) =>
  r.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => c.startsWith(`${name}=`));

export const formPost = (path: string, body: Record<string, string | string[]>, headers: Record<string, string> = {}) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(body)) for (const x of Array.isArray(v) ? v : [v]) params.append(k, x);
  return new Request(`${BASE}${path}`, {
    method: "POST",
    body: params.toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
};

export async function register(app: Handle, meta: Record<string, unknown>) {
  const r = await app.handle(
    new Request(`${BASE}/oauth/register`, { method: "POST", body: JSON.stringify(meta), headers: { "content-type": "application/json" } }),
  );
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

/** Signs in as `user` and answers the session cookie. */
export async function signIn(app: Handle, user: string, password: string): Promise<string> {
  const page = await app.handle(new Request(`${BASE}/oauth/apps`));
  const loginCookie = cookieOf(page, "corpus_login")!;
  const csrf = field(await page.text(), "csrf")!;
  const r = await app.handle(formPost("/oauth/login", { user, password, csrf, return: "/oauth/apps" }, { cookie: loginCookie }));
  if (r.status !== 303) throw new Error(`sign-in answered ${r.status}`);
  return cookieOf(r, "corpus_session")!;
}

/** Consent as a signed-in user; answers the redirect URL (with code or error). */
export async function consent(
  app: Handle,
  session: string,
  query: Record<string, string>,
  decision = "allow",
  scopes?: string[],
): Promise<URL> {
  const q = new URLSearchParams(query).toString();
  const page = await app.handle(new Request(`${BASE}/oauth/authorize?${q}`, { headers: { cookie: session } }));
  if (page.status === 303) return new URL(page.headers.get("location")!);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`authorize answered ${page.status}: ${html}`);
  const csrf = field(html, "csrf")!;
  const asked = [...html.matchAll(/name="grant_scope" value="([^"]*)"/g)].map((m) => m[1]!);
  const r = await app.handle(formPost("/oauth/consent", { csrf, request: q, decision, grant_scope: scopes ?? asked }, { cookie: session }));
  if (r.status !== 303) throw new Error(`consent answered ${r.status}: ${await r.text()}`);
  return new URL(r.headers.get("location")!);
}

export async function tokenRequest(app: Handle, body: Record<string, string>, headers: Record<string, string> = {}) {
  const r = await app.handle(formPost("/oauth/token", body, headers));
  return { status: r.status, body: (await r.json()) as Record<string, any>, headers: r.headers };
}

/** A public client registered at `createdAt` (seconds) for `redirect`, never used, as a row of the client table. */
export const registeredClient = (clientId: string, name: string, createdAt: number, redirect: string): ClientRow => ({
  client_id: clientId,
  kind: "registered",
  name,
  redirect_uris: JSON.stringify([redirect]),
  auth_method: "none",
  secret_hash: null,
  grant_types: JSON.stringify(["authorization_code"]),
  created_at: createdAt,
  fetched_at: createdAt,
});

/** The client table filled up to MAX_CLIENTS with clients introduced about `at` (seconds), none ever used, as many addresses' registrations would. */
export function fillClientTable(store: SqliteOAuthStore, at: number, redirect: string): void {
  store.db.transaction(() => {
    for (let i = store.countClients(); i < MAX_CLIENTS; i++)
      store.putClient(registeredClient(`corpus-filler-${i}`, "filler", at - i / 1000, redirect));
  })();
}
