// The authorization server's pages (D27), served by the executable itself: no script, no
// CDN, no external font. One small style sheet inline, allowed by its hash in the CSP;
// `frame-ancestors 'none'` so that no page can be framed (clickjacking the consent).
import { createHash } from "node:crypto";
import { SECURITY_HEADERS } from "../http/response";
import { redirectDestination } from "./redirect-uris";

const CSS = `*{box-sizing:border-box}body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f5f4;color:#1c1917}
main{max-width:28rem;margin:2rem auto;padding:1.5rem;background:#fff;border-radius:.5rem;box-shadow:0 1px 3px #0002}
h1{font-size:1.4rem;margin-top:0}pre{white-space:pre-wrap;overflow-wrap:anywhere}code{overflow-wrap:anywhere}mark{background:#fde68a}label{display:block;margin:.8rem 0 .2rem;font-weight:600}
input[type=text],input[type=password]{width:100%;padding:.6rem;font-size:1rem;border:1px solid #78716c;border-radius:.3rem}
fieldset{border:1px solid #d6d3d1;border-radius:.3rem;margin:1rem 0}fieldset label{font-weight:400;display:flex;gap:.5rem;align-items:flex-start}
button{font-size:1rem;padding:.6rem 1.2rem;margin:1rem .5rem 0 0;border-radius:.3rem;border:1px solid #1c1917;background:#1c1917;color:#fff;cursor:pointer}
button.secondary{background:#fff;color:#1c1917}button:focus,input:focus{outline:3px solid #2563eb;outline-offset:2px}
.error{color:#b91c1c;font-weight:600}.muted{color:#57534e;font-size:.9rem}ul{padding-left:1.2rem}li{margin:.6rem 0}
@media (max-width:30rem){main{margin:0;border-radius:0;box-shadow:none}}`;

/** A page's style sheet and the CSP allowing it (by its hash) and nothing else. */
export interface PageStyle {
  css: string;
  csp: string;
}

/** The OAuth pages' look with `extraCss` after it (the console's, D35); `directives` adds to the CSP. */
export function pageStyle(extraCss = "", directives = ""): PageStyle {
  const css = CSS + extraCss;
  const hash = createHash("sha256").update(css).digest("base64");
  return { css, csp: `default-src 'none'; style-src 'sha256-${hash}'; frame-ancestors 'none'; base-uri 'none'${directives}` };
}

const OAUTH_STYLE = pageStyle();

export const PAGE_CSP = OAUTH_STYLE.csp;

export const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** A page with the security headers, the CSP, and no caching; `headers` adds (Set-Cookie). */
export function page(
  title: string,
  body: string,
  status = 200,
  headers: Array<[string, string]> = [],
  style: PageStyle = OAUTH_STYLE,
): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>${escapeHtml(title)} · corpus</title><style>${style.css}</style></head><body><main>${body}</main></body></html>`;
  const list = new Headers({
    ...SECURITY_HEADERS,
    "content-type": "text/html;charset=utf-8",
    "content-security-policy": style.csp,
    "cache-control": "no-store",
    "referrer-policy": "same-origin",
  });
  for (const [k, v] of headers) list.append(k, v);
  return new Response(html, { status, headers: list });
}

export const hidden = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => `<input type="hidden" name="${escapeHtml(k)}" value="${escapeHtml(v)}">`)
    .join("");

export function loginPage(o: {
  action: string;
  csrf: string;
  carry: Record<string, string>;
  error?: string;
  user?: string;
  clientName?: string;
}): string {
  return `<h1>Sign in to corpus</h1>
${o.clientName ? `<p>${escapeHtml(o.clientName)} asks to use corpus on your behalf.</p>` : ""}
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ""}
<form method="post" action="${escapeHtml(o.action)}">${hidden({ ...o.carry, csrf: o.csrf })}
<label for="user">User name</label><input type="text" id="user" name="user" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(o.user ?? "")}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`;
}

export const SCOPE_TEXT: Record<string, string> = {
  "corpus:search": "Search your connected sources and open the documents an answer cites",
  "corpus:read": "Run deep searches over the answers you were given, and open the documents they cite",
  "connectors:read": "See which sources you have connected",
  "connectors:write": "Add and remove your connectors and webhooks, and delete your data",
  offline_access: "Stay connected when you are away (a refresh token)",
  openid: "Know who you are: your corpus user id (an ID token)",
};

export function consentPage(o: {
  user: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  csrf: string;
  carry: Record<string, string>;
}): string {
  const to = redirectDestination(o.redirectUri);
  const where =
    "site" in to
      ? `<strong>${escapeHtml(to.site)}</strong>`
      : `the app on this device that opens <strong>${escapeHtml(to.appScheme)}</strong> links`;
  return `<h1>Allow ${escapeHtml(o.clientName)}?</h1>
<p>Signed in as <strong>${escapeHtml(o.user)}</strong>.</p>
<p><strong>${escapeHtml(o.clientName)}</strong> will be sent back to ${where} with access to corpus. The name is what the application says of itself; check the address.</p>
<form method="post" action="/oauth/consent">${hidden({ ...o.carry, csrf: o.csrf })}
<fieldset><legend>It asks to</legend>
${o.scopes.map((s, i) => `<label for="scope${i}"><input type="checkbox" id="scope${i}" name="grant_scope" value="${escapeHtml(s)}" checked> <span>${escapeHtml(SCOPE_TEXT[s] ?? s)} <span class="muted">(${escapeHtml(s)})</span></span></label>`).join("\n")}
</fieldset>
<button type="submit" name="decision" value="allow">Allow</button><button type="submit" name="decision" value="deny" class="secondary">Deny</button></form>`;
}

export function appsPage(o: {
  user: string;
  csrf: string;
  apps: Array<{ grantId: string; clientName: string; scopes: string[]; since: number }>;
  notice?: string;
}): string {
  const items = o.apps.length
    ? `<ul>${o.apps
        .map(
          (a) =>
            `<li><strong>${escapeHtml(a.clientName)}</strong><br><span class="muted">${escapeHtml(a.scopes.join(", "))} · since ${new Date(a.since * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC</span>
<form method="post" action="/oauth/apps/revoke">${hidden({ csrf: o.csrf, grant: a.grantId })}<button type="submit" class="secondary" aria-label="Revoke ${escapeHtml(a.clientName)}">Revoke</button></form></li>`,
        )
        .join("")}</ul>`
    : "<p>No application holds access to your account.</p>";
  return `<h1>Connected apps</h1><p>Signed in as <strong>${escapeHtml(o.user)}</strong>.</p>
${o.notice ? `<p role="status">${escapeHtml(o.notice)}</p>` : ""}${items}
<form method="post" action="/oauth/logout">${hidden({ csrf: o.csrf })}<button type="submit" class="secondary">Sign out</button></form>`;
}

export const messagePage = (title: string, text: string) => `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p>`;
