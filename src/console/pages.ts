// The operator console's pages (D35): the OAuth pages' look (oauth/pages.ts) widened for
// tables, no script at all, a CSP allowing only the page's own style sheet and form posts to
// this server. Every form carries the session's CSRF token; every field has its label, in the
// order a keyboard reaches them.
import type { AccountInfo } from "../accounts/store";
import { MIN_PASSWORD_LENGTH } from "../accounts/store";
import type { ConnectorViewT } from "../connectors/model";
import type { GrantState } from "../connectors/oauth/grants";
import { escapeHtml, hidden, pageStyle } from "../oauth/pages";
import type { BackupBounds, BackupFile, BackupRun } from "./backups";

export const CONSOLE_PATHS = {
  home: "/console",
  login: "/console/login",
  logout: "/console/logout",
  users: "/console/users",
  addUser: "/console/users/add",
  removeUser: "/console/users/remove",
  resetPassword: "/console/users/password",
  revokeAccess: "/console/users/revoke",
  backups: "/console/backups",
  startBackup: "/console/backups/start",
  removeBackup: "/console/backups/remove",
  errors: "/console/errors",
  connectors: "/console/connectors",
  grantConnector: "/console/connectors/grant",
  downloadBackup: "/console/backups/download",
} as const;

export const CONSOLE_STYLE = pageStyle(
  `main:has(>.console){max-width:60rem}nav{display:flex;gap:1rem;align-items:center;flex-wrap:wrap;border-bottom:1px solid #d6d3d1;margin-bottom:1rem;padding-bottom:.5rem}
nav a{color:#1c1917}nav a[aria-current=page]{font-weight:700}nav form{margin-left:auto}nav button{margin:0}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #e7e5e4;vertical-align:top}
td form{display:inline-block;margin:0 .3rem .3rem 0}td button{margin:0;padding:.3rem .7rem;font-size:.9rem}
td input[type=password]{width:12rem;padding:.3rem}.sr{position:absolute;left:-9999px}.ok{color:#15803d;font-weight:600}
a:focus{outline:3px solid #2563eb;outline-offset:2px}dl{display:grid;grid-template-columns:max-content 1fr;gap:.3rem 1rem}dt{font-weight:600}dd{margin:0}`,
  "; form-action 'self'",
);

const when = (seconds: number) => `${new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ")} UTC`;

export function bytes(n: number): string {
  if (!Number.isFinite(n)) return "unknown";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${i === 0 ? v : v.toFixed(1)} ${units[i]}`;
}

/** The frame of every signed-in page: what the operator can reach, and sign-out. */
function frame(o: { user: string; csrf: string; current: "health" | "users" | "connectors" | "backups" | "errors" }, body: string): string {
  const link = (href: string, name: string, here: boolean) => `<a href="${href}"${here ? ' aria-current="page"' : ""}>${name}</a>`;
  return `<div class="console"><nav aria-label="Console">${link(CONSOLE_PATHS.home, "Health", o.current === "health")}${link(CONSOLE_PATHS.users, "Users", o.current === "users")}${link(CONSOLE_PATHS.connectors, "Connectors", o.current === "connectors")}${link(CONSOLE_PATHS.backups, "Backups", o.current === "backups")}${link(CONSOLE_PATHS.errors, "Last errors", o.current === "errors")}
<span class="muted">Operator <strong>${escapeHtml(o.user)}</strong></span>
<form method="post" action="${CONSOLE_PATHS.logout}">${hidden({ csrf: o.csrf })}<button type="submit" class="secondary">Sign out</button></form></nav>
${body}</div>`;
}

const notice = (o: { notice?: string; error?: string }) =>
  `${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ""}${o.notice ? `<p class="ok" role="status">${escapeHtml(o.notice)}</p>` : ""}`;

export function signInPage(o: { csrf: string; error?: string; user?: string }): string {
  return `<h1>corpus console</h1><p>For operators (<code>corpus user add --operator</code>).</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ""}
<form method="post" action="${CONSOLE_PATHS.login}">${hidden({ csrf: o.csrf })}
<label for="user">User name</label><input type="text" id="user" name="user" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(o.user ?? "")}">
<label for="password">Password</label><input type="password" id="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button></form>`;
}

export interface HealthView {
  version: string;
  auth: { healthy: boolean; reason?: string };
  connectors: { healthy: boolean; reason?: string };
  disk: { free: number; minFree: number; reserve: boolean; low?: string };
  databaseBytes: number;
  owed?: Record<string, number>;
}

const state = (s: { healthy: boolean; reason?: string }) =>
  s.healthy ? `<span class="ok">healthy</span>` : `<span class="error">unhealthy</span>: ${escapeHtml(s.reason ?? "")}`;

export function healthPage(o: { user: string; csrf: string }, h: HealthView): string {
  const owed = h.owed
    ? Object.entries(h.owed)
        .map(([k, n]) => `<dt>${escapeHtml(k.replaceAll("_", " "))}</dt><dd>${n}</dd>`)
        .join("")
    : "<dt>owed work</dt><dd>cannot be read now</dd>";
  return frame(
    { ...o, current: "health" },
    `<h1>Health</h1>
<h2>Service</h2><dl><dt>status</dt><dd><span class="ok">ok</span> (corpus ${escapeHtml(h.version)})</dd>
<dt>auth</dt><dd>${state(h.auth)}</dd><dt>connectors</dt><dd>${state(h.connectors)}</dd></dl>
<h2>Disk</h2><dl><dt>free in the data folder</dt><dd>${bytes(h.disk.free)}${h.disk.low ? ` <span class="error">${escapeHtml(h.disk.low)}</span>` : ""}</dd>
<dt>floor (CORPUS_MIN_FREE_BYTES)</dt><dd>${bytes(h.disk.minFree)}</dd>
<dt>storage reserve</dt><dd>${h.disk.reserve ? "in place" : "not in place"}</dd>
<dt>database</dt><dd>${bytes(h.databaseBytes)}</dd></dl>
<h2>Owed work</h2><dl>${owed}</dl>`,
  );
}

export function usersPage(
  o: { user: string; csrf: string; notice?: string; error?: string },
  accounts: AccountInfo[],
  form: { user?: string; operator?: boolean } = {},
): string {
  const rows = accounts
    .map((a, i) => {
      const id = escapeHtml(a.id);
      const kind = a.upstream
        ? `signs in at ${escapeHtml(a.upstream.issuer)}${a.upstream.name ? ` (${escapeHtml(a.upstream.name)})` : ""}`
        : a.operator
          ? "operator"
          : "user";
      const post = (action: string, label: string, inner = "", cls = "secondary") =>
        `<form method="post" action="${action}">${hidden({ csrf: o.csrf, user: a.id })}${inner}<button type="submit" class="${cls}" aria-label="${escapeHtml(label)}">${escapeHtml(label.split(" ")[0]!)}</button></form>`;
      const reset = a.upstream
        ? ""
        : post(
            CONSOLE_PATHS.resetPassword,
            `Reset the password of ${a.id}`,
            `<label class="sr" for="password${i}">New password for ${id}</label><input type="password" id="password${i}" name="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required placeholder="new password">`,
          );
      return `<tr><td>${id}</td><td>${kind}</td><td>${when(a.createdAt)}</td><td>${reset}${post(CONSOLE_PATHS.revokeAccess, `Revoke the tokens and apps of ${a.id}`)}${a.id === o.user ? "" : post(CONSOLE_PATHS.removeUser, `Remove ${a.id}`, `<label><input type="checkbox" name="delete_data" value="true"> and delete their data</label>`)}</td></tr>`;
    })
    .join("\n");
  return frame(
    { ...o, current: "users" },
    `<h1>Users</h1>${notice(o)}
<h2>Add a user</h2>
<form method="post" action="${CONSOLE_PATHS.addUser}">${hidden({ csrf: o.csrf })}
<label for="new-user">User name</label><input type="text" id="new-user" name="user" autocapitalize="none" spellcheck="false" autocomplete="off" required value="${escapeHtml(form.user ?? "")}">
<label for="new-password">Password (at least ${MIN_PASSWORD_LENGTH} characters)</label><input type="password" id="new-password" name="password" autocomplete="new-password" minlength="${MIN_PASSWORD_LENGTH}" required>
<label for="new-operator"><input type="checkbox" id="new-operator" name="operator" value="true"${form.operator ? " checked" : ""}> An operator (may use this console)</label>
<button type="submit">Add</button></form>
<h2>Everyone</h2>
${accounts.length ? `<table><thead><tr><th scope="col">User</th><th scope="col">Kind</th><th scope="col">Added</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>` : "<p>No users yet.</p>"}
<p class="muted">Revoking ends every token issued to the user until now, their connected apps and their sign-in sessions; the account stays. Removing an account revokes the same; their indexed data stays until they delete it (DELETE /v1/delete_my_data).</p>`,
  );
}

const runState = (run: BackupRun) => {
  switch (run.state) {
    case "running":
      return "running (reload this page to see it end)";
    case "verifying":
      return "written, being verified (reload this page to see it end)";
    case "done":
      return `<span class="ok">written and verified</span>${run.removed.length ? `; removed, beyond what is kept: ${run.removed.map(escapeHtml).join(", ")}` : ""}`;
    case "failed":
      return `<span class="error">failed</span>: ${escapeHtml(run.message)}`;
  }
};

const keptText = (k: BackupBounds) =>
  `the newest ${k.keep === 1 ? "one" : k.keep} (CORPUS_BACKUP_KEEP)${k.keepDays ? `, none older than ${k.keepDays} day${k.keepDays === 1 ? "" : "s"} (CORPUS_BACKUP_KEEP_DAYS)` : ""}`;

export function backupsPage(
  o: { user: string; csrf: string; notice?: string; error?: string },
  b: { folder: string; last?: BackupRun; files: BackupFile[]; bounds: BackupBounds },
): string {
  const last = b.last ? `<p role="status">${escapeHtml(b.last.name)}, started ${when(b.last.startedAt)}: ${runState(b.last)}</p>` : "";
  const rows = b.files
    .map(
      (f) =>
        `<tr><td><a href="${CONSOLE_PATHS.downloadBackup}?name=${encodeURIComponent(f.name)}" download>${escapeHtml(f.name)}</a></td><td>${bytes(f.bytes)}</td><td>${when(f.at)}</td><td>${
          b.files.length > 1
            ? `<form method="post" action="${CONSOLE_PATHS.removeBackup}">${hidden({ csrf: o.csrf, name: f.name })}<button type="submit" class="secondary" aria-label="${escapeHtml(`Remove ${f.name}`)}">Remove</button></form>`
            : '<span class="muted">the only one</span>'
        }</td></tr>`,
    )
    .join("\n");
  return frame(
    { ...o, current: "backups" },
    `<h1>Backups</h1>${notice(o)}${last}
<p>A consistent snapshot of the database and the token signing key, taken while corpus serves (<code>corpus backup</code>), into <code>${escapeHtml(b.folder)}</code>, then checked (<code>corpus verify</code>). Never the master key: keep it apart. Copy backups off this disk; restore with <code>corpus restore</code>.</p>
<p>Kept: ${keptText(b.bounds)}. Once a new backup verifies, older ones beyond that are removed; never the new one.</p>
<form method="post" action="${CONSOLE_PATHS.startBackup}">${hidden({ csrf: o.csrf })}<button type="submit">Start a backup</button></form>
<h2>In the folder</h2>
${b.files.length ? `<table><thead><tr><th scope="col">File</th><th scope="col">Size</th><th scope="col">Written</th><th scope="col">Actions</th></tr></thead><tbody>${rows}</tbody></table>` : "<p>No backup yet.</p>"}`,
  );
}

/** The log's last warnings and errors since start (Logger.recentProblems): what each record says, escaped. */
export function errorsPage(o: { user: string; csrf: string }, records: Array<Record<string, unknown>>, kept: number): string {
  const rows = records
    .map((r) => {
      const { timestamp, level, logger, message, ...rest } = r;
      const fields = Object.entries(rest).filter(([, v]) => v !== null);
      return `<tr><td>${escapeHtml(
        String(timestamp ?? "")
          .replace("T", " ")
          .slice(0, 19),
      )}</td><td>${escapeHtml(String(level))}</td><td>${escapeHtml(String(logger))}</td><td>${escapeHtml(String(message))}${
        fields.length
          ? `<br><span class="muted">${escapeHtml(fields.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" "))}</span>`
          : ""
      }</td></tr>`;
    })
    .join("\n");
  return frame(
    { ...o, current: "errors" },
    `<h1>Last errors</h1><p>The last ${kept} warnings and errors of the log since corpus started, newest first (all of them are in the log: standard output, as JSON lines).</p>
${records.length ? `<table><thead><tr><th scope="col">Time (UTC)</th><th scope="col">Level</th><th scope="col">Part</th><th scope="col">Message</th></tr></thead><tbody>${rows}</tbody></table>` : "<p>None since the start.</p>"}`,
  );
}

const statusCounts = (views: ConnectorViewT[]) => {
  const by = new Map<string, number>();
  for (const v of views) by.set(v.status, (by.get(v.status) ?? 0) + 1);
  return [...by].map(([status, n]) => `${n} ${escapeHtml(status)}`).join(", ") || "none";
};

/**
 * Every user's connectors as counts by kind and state (never their labels, hosts or paths), and
 * the operator's own (CORPUS_CONNECTORS_FILE) each with its state and progress.
 */
/** An operator connector's OAuth grant in words (issue 38), as the users' panel says a user's. */
function grantText(g: GrantState): string {
  const at = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`;
  const waiting = g.waiting_until ? ` (a grant started must be finished by ${at(g.waiting_until)})` : "";
  if (g.state === "granted")
    return `granted ${at(g.granted_at ?? "")}${g.access_expires_at ? `; access token valid until ${at(g.access_expires_at)}, renewed before` : ""}${g.reason ? `; ${g.reason}` : ""}${waiting}`;
  if (g.state === "waiting") return `waiting for access to be granted at ${g.provider}${waiting}`;
  if (g.state === "error") return `error: ${g.reason ?? ""}${waiting}`;
  return "access not granted yet";
}

/** The page after Grant access: the provider's page is a link (the CSP's form-action keeps a form's redirect on this server). */
export function grantStartedPage(
  o: { user: string; csrf: string },
  id: string,
  provider: string,
  authorizeUrl: string,
  expiresAt: string,
): string {
  return frame(
    { ...o, current: "connectors" },
    `<h1>Grant access to ${escapeHtml(id)}</h1><p><a href="${escapeHtml(authorizeUrl)}" rel="noreferrer">Continue at ${escapeHtml(provider)}</a>: sign in there as the mailbox's owner and grant access; you come back to a page of this server that asks you to confirm.</p>
<p class="muted">The link works once, until ${escapeHtml(expiresAt.slice(0, 16).replace("T", " "))} UTC, and only while you are signed in here.</p>`,
  );
}

export function connectorsPage(
  o: { user: string; csrf: string },
  operatorConnectors: ConnectorViewT[],
  users: Array<{ user: string; connectors: ConnectorViewT[] }>,
  grants: Array<{ id: string; label: string; grant: GrantState }> = [],
): string {
  const granting = grants
    .map(
      (g) =>
        `<tr><td>${escapeHtml(g.id)}</td><td>${escapeHtml(g.grant.provider)}</td><td class="grant-${g.grant.state}">${escapeHtml(grantText(g.grant))}</td><td><form method="post" action="${CONSOLE_PATHS.grantConnector}">${hidden({ csrf: o.csrf, id: g.id })}<button type="submit" aria-label="Grant access to ${escapeHtml(g.id)}">${g.grant.state === "granted" || g.grant.state === "error" ? "Grant access again" : "Grant access"}</button></form></td></tr>`,
    )
    .join("\n");
  const own = operatorConnectors
    .map((c) => {
      const progress = c.indexed ? `${c.indexed.embedded} of ${c.indexed.chunks} chunks embedded` : "";
      return `<tr><td>${escapeHtml(c.id)}</td><td>${escapeHtml(c.kind)}</td><td>${escapeHtml(c.status)}${c.reason ? `: ${escapeHtml(c.reason)}` : ""}</td><td>${c.records ?? ""}</td><td>${progress}</td></tr>`;
    })
    .join("\n");
  const rows = users
    .map((u) => {
      const kinds = [...new Set(u.connectors.map((c) => c.kind))].map((k) => escapeHtml(k)).join(", ");
      const records = u.connectors.reduce((n, c) => n + (c.records ?? 0), 0);
      return `<tr><td>${escapeHtml(u.user)}</td><td>${u.connectors.length}</td><td>${kinds}</td><td>${statusCounts(u.connectors)}</td><td>${records}</td></tr>`;
    })
    .join("\n");
  return frame(
    { ...o, current: "connectors" },
    `<h1>Connectors</h1>
<h2>The operator's</h2>
${operatorConnectors.length ? `<table><thead><tr><th scope="col">Id</th><th scope="col">Kind</th><th scope="col">State</th><th scope="col">Records</th><th scope="col">Progress</th></tr></thead><tbody>${own}</tbody></table>` : "<p>None (CORPUS_CONNECTORS_FILE).</p>"}
${grants.length ? `<h2>Mailboxes signed in with OAuth</h2><table><thead><tr><th scope="col">Id</th><th scope="col">Provider</th><th scope="col">Grant</th><th scope="col">Action</th></tr></thead><tbody>${granting}</tbody></table>` : ""}
<h2>Users'</h2><p class="muted">Counts and states only: a user's labels, hosts and paths are theirs.</p>
${users.length ? `<table><thead><tr><th scope="col">User</th><th scope="col">Connectors</th><th scope="col">Kinds</th><th scope="col">States</th><th scope="col">Records</th></tr></thead><tbody>${rows}</tbody></table>` : "<p>No users yet.</p>"}`,
  );
}
