// The connector widget (D22): one self-contained page that lists the user's connectors with
// their status and adds, configures and removes them through the REST control plane, asking
// before it removes. A connector indexing or embedding shows a progress bar with its counts,
// rate and time left, and the list is asked for again every PANEL_POLL_MS until all are done.
// An IMAP connector that signs in with OAuth shows its grant (none, waiting, granted with its
// access token's expiry, error with the reason) and a "Grant access" button: it starts the
// provider's authorization flow (POST /v1/connectors/{id}/oauth) and opens the provider's page
// through the host (MCP Apps ui/open-link, the Apps SDK's openExternal; a link besides, since a
// sandbox may block pop-ups), then follows the grant until it is finished. The page itself is a static template, the same for everyone (hosts may
// fetch and cache it before any call): what it works with arrives with the open_connectors
// result, outside what the model reads (issue 13 item 8). The list comes in
// `structuredContent`, the API's address and a short-lived token limited to the caller's
// connector routes in `_meta["corpus/panel"]`. MCP Apps hosts hand the result to the page in a
// `ui/notifications/tool-result` message after the `ui/initialize` handshake; the Apps SDK puts
// it in `window.openai` (`toolOutput`, `toolResponseMetadata`).
import { kindFieldsHtml, kindForms, kindOptionsHtml, scriptJson } from "./widget-form";

/** The key of the tool result's `_meta` that carries the panel's access. */
export const PANEL_META = "corpus/panel";

/** What `_meta["corpus/panel"]` holds. */
export interface PanelAccess {
  apiBase: string;
  /** Absent when the caller has no token to derive one from (CORPUS_AUTH_DISABLED): read-only. */
  token?: string;
  /** Unix seconds. */
  expiresAt?: number;
  canWrite: boolean;
}

/** How often the page asks for the list again while a connector is indexing or embedding. */
export const PANEL_POLL_MS = 3_000;

/** The MCP Apps revision the page speaks with its host. */
const APPS_PROTOCOL_VERSION = "2026-01-26";

export function connectorsWidget(): string {
  return WIDGET_HTML;
}

const WIDGET_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>corpus connectors</title>
<style>
  :root { font: 14px/1.45 system-ui, sans-serif; color: #1d2330; }
  body { margin: 12px; }
  h1 { font-size: 16px; margin: 0 0 8px; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: 6px 8px; border-bottom: 1px solid #e3e6ee; vertical-align: top; }
  .status { font-weight: 600; }
  .status.ok { color: #13795b; } .status.indexing, .status.embedding, .status.checking { color: #a56a00; } .status.error { color: #b42318; }
  .reason, .progress-text { color: #6b7280; font-size: 12px; }
  .grant { margin-top: 4px; font-size: 12px; } .grant.granted { color: #13795b; } .grant.error { color: #b42318; } .grant.waiting { color: #a56a00; }
  .progress { margin-top: 4px; }
  .progress progress { width: 100%; max-width: 260px; height: 10px; display: block; }
  #live { color: #6b7280; font-size: 12px; margin: 6px 0 0; }
  form { display: grid; grid-template-columns: 120px 1fr; gap: 6px 10px; margin-top: 14px; max-width: 560px; }
  form .wide { grid-column: 1 / -1; }
  input, select, textarea { font: inherit; padding: 4px 6px; }
  textarea { min-height: 70px; font-family: ui-monospace, monospace; font-size: 12px; }
  button { font: inherit; padding: 4px 10px; cursor: pointer; }
  .confirm { font-size: 13px; max-width: 260px; }
  #message { margin-top: 8px; min-height: 1.4em; }
  #message.error { color: #b42318; }
  .kind-fields { display: contents; }
  [hidden] { display: none !important; }
</style>
</head>
<body>
<h1>Connectors</h1>
<table>
  <thead><tr><th>Connector</th><th>Kind</th><th>Status</th><th></th></tr></thead>
  <tbody id="rows"><tr><td colspan="4">Waiting for the assistant…</td></tr></tbody>
</table>
<p id="live" hidden>Connectors are being indexed or granted access: this list updates every ${PANEL_POLL_MS / 1000} s until they are done.</p>
<form id="add" aria-label="Add a connector">
  <strong class="wide" id="form-title">Add a connector</strong>
  <label for="f-id">Id</label><input id="f-id" name="id" required pattern="[a-z0-9][a-z0-9_\\-]{0,62}" placeholder="mail">
  <label for="f-label">Label</label><input id="f-label" name="label" placeholder="Work mail">
  <label for="f-kind">Kind</label>
  <select id="f-kind" name="kind">${kindOptionsHtml()}</select>
  ${kindFieldsHtml()}
  <span></span><span><button type="button" id="add-button">Add</button> <button type="button" id="cancel-button" hidden>Cancel</button></span>
</form>
<div id="message" role="status"></div>
<script>
(() => {
  const PANEL_META = ${JSON.stringify(PANEL_META)};
  // Each kind's fields (the kinds table): what to read into its config and fill in to configure it.
  const FORMS = ${scriptJson(kindForms())};
  // Nothing to act with until the host hands over the tool result.
  let panel = { apiBase: "", canWrite: false };
  // What the host said it offers (MCP Apps ui/initialize): openLinks opens the provider's page.
  let hostCapabilities = {};
  const rows = document.getElementById("rows");
  const message = document.getElementById("message");
  const form = document.getElementById("add");
  const POLL_MS = ${PANEL_POLL_MS};
  const live = document.getElementById("live");
  let poll;
  const say = (text, error) => { message.textContent = text; message.className = error ? "error" : ""; };
  const api = async (method, path, body) => {
    if (!panel.token) throw new Error("The panel has no access to the connectors: open it again from the assistant.");
    const r = await fetch(panel.apiBase + path, {
      method,
      headers: { authorization: "Bearer " + panel.token, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const json = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(json.message || (json.error && json.error.message) || ("HTTP " + r.status));
    return json;
  };
  const cell = (text, cls) => { const td = document.createElement("td"); td.textContent = text; if (cls) td.className = cls; return td; };
  function draw(list) {
    rows.replaceChildren();
    if (list.length === 0) {
      const tr = document.createElement("tr");
      const td = cell("No connectors yet.");
      td.colSpan = 4;
      tr.append(td);
      rows.append(tr);
    }
    for (const c of list) {
      const tr = document.createElement("tr");
      tr.dataset.id = c.id;
      const name = cell(c.label + " (" + c.id + ")");
      const status = document.createElement("td");
      const s = document.createElement("span");
      s.className = "status " + c.status;
      s.textContent = c.status + (c.records !== undefined ? " · " + c.records + " records" : "") + (c.indexed && !c.progress ? " · " + c.indexed.embedded + "/" + c.indexed.chunks + " chunks embedded" : "");
      status.append(s);
      if (c.progress) status.append(progressOf(c));
      if (c.reason) { const r = document.createElement("div"); r.className = "reason"; r.textContent = c.reason; status.append(r); }
      if (c.grant) status.append(grantOf(c));
      const actions = document.createElement("td");
      if (c.owner === "user" && panel.canWrite && panel.token) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = "Remove";
        b.setAttribute("aria-label", "Remove " + c.id);
        // Asked in the row itself: a host's sandbox may not allow confirm() (no allow-modals).
        b.addEventListener("click", () => {
          const ask = document.createElement("div");
          ask.className = "confirm";
          ask.setAttribute("role", "alertdialog");
          ask.setAttribute("aria-label", "Remove " + c.id + "?");
          ask.textContent = "Remove the connector " + c.label + " (" + c.id + ")? Its local index is deleted; the source itself is not touched. ";
          const yes = document.createElement("button");
          yes.type = "button";
          yes.textContent = "Remove " + c.id;
          yes.setAttribute("aria-label", "Yes, remove " + c.id);
          const no = document.createElement("button");
          no.type = "button";
          no.textContent = "Keep";
          no.addEventListener("click", () => { ask.remove(); b.hidden = false; b.focus(); });
          yes.addEventListener("click", async () => {
            try { await api("DELETE", "/v1/connectors/" + encodeURIComponent(c.id)); say("Removed " + c.id + "."); await refresh(); }
            catch (e) { say(e.message, true); }
          });
          ask.append(yes, " ", no);
          b.hidden = true;
          actions.append(ask);
          no.focus();
        });
        if (c.grant) {
          const g = document.createElement("button");
          g.type = "button";
          g.textContent = c.grant.state === "granted" || c.grant.state === "error" ? "Grant access again" : "Grant access";
          g.setAttribute("aria-label", "Grant access to " + c.id);
          g.addEventListener("click", () => grantAccess(c));
          actions.append(g, " ");
        }
        const edit = document.createElement("button");
        edit.type = "button";
        edit.textContent = "Configure";
        edit.setAttribute("aria-label", "Configure " + c.id);
        edit.addEventListener("click", () => configure(c));
        actions.append(edit, " ", b);
      } else if (c.owner === "operator") actions.append(document.createTextNode("operator"));
      tr.append(name, cell(c.kind), status, actions);
      rows.append(tr);
    }
    follow(list);
  }
  // A phase under way: a bar, its counts, the rate and the time left (issue 14).
  const count = (n) => n.toLocaleString("en-US");
  const seconds = (n) => n < 90 ? n + " s" : n < 5400 ? Math.round(n / 60) + " min" : (n / 3600).toFixed(1) + " h";
  function progressOf(c) {
    const p = c.progress;
    const counted = count(p.done) + " of " + count(p.total) + " " + p.unit + (p.phase === "indexing" ? " read" : " embedded");
    const box = document.createElement("div");
    box.className = "progress";
    const bar = document.createElement("progress");
    bar.max = Math.max(p.total, 1);
    bar.value = Math.min(p.done, bar.max);
    bar.textContent = counted;
    bar.setAttribute("aria-label", c.label + ": " + p.phase + ", " + counted);
    const text = document.createElement("div");
    text.className = "progress-text";
    text.textContent = counted + (p.rate_per_second !== null ? " · " + p.rate_per_second + " " + p.unit + "/s" : " · measuring the rate") + (p.eta_seconds !== null ? " · about " + seconds(p.eta_seconds) + " left" : "");
    box.append(bar, text);
    return box;
  }
  // An OAuth grant's state, in words (issue 38): times in UTC, as the server gives them.
  const at = (iso) => iso.slice(0, 16).replace("T", " ") + " UTC";
  function grantOf(c) {
    const g = c.grant;
    const line = document.createElement("div");
    line.className = "grant " + g.state;
    line.dataset.grant = g.state;
    const head = "OAuth with " + g.provider + ": ";
    let text =
      g.state === "granted" ? head + "access granted " + at(g.granted_at) + (g.access_expires_at ? "; access token valid until " + at(g.access_expires_at) + ", renewed before" : "") + (g.reason ? "; " + g.reason : "")
      : g.state === "waiting" ? head + "waiting for access to be granted at " + g.provider
      : g.state === "error" ? head + "error: " + g.reason
      : head + "access not granted yet";
    if (g.waiting_until) text += " (a grant started must be finished by " + at(g.waiting_until) + ")";
    line.textContent = text;
    return line;
  }
  // The provider's page, opened by the host when it can (a sandbox may forbid pop-ups).
  let linkId = 0;
  function openLink(url) {
    if (hostCapabilities.openLinks && window.parent !== window) {
      window.parent.postMessage({ jsonrpc: "2.0", id: "corpus-open-link-" + ++linkId, method: "ui/open-link", params: { url } }, "*");
      return;
    }
    if (window.openai && typeof window.openai.openExternal === "function") { window.openai.openExternal({ href: url }); return; }
    window.open(url, "_blank", "noopener,noreferrer");
  }
  async function grantAccess(c) {
    try {
      const started = await api("POST", "/v1/connectors/" + encodeURIComponent(c.id) + "/oauth", {});
      const url = String(started.authorize_url || "");
      if (!url.startsWith("https://") && !url.startsWith("http://")) throw new Error("The server answered no authorization address.");
      openLink(url);
      // The same address as a link: where the host opened nothing, the person opens it.
      message.className = "";
      const link = document.createElement("a");
      link.href = url;
      link.target = "_blank";
      link.rel = "noopener noreferrer";
      link.textContent = c.grant.provider + "'s page";
      message.replaceChildren("Grant access to " + c.id + " at ", link, ", then confirm on corpus's page; this list follows the grant until it is finished.");
      await refresh();
    } catch (e) { say(e.message, true); }
  }
  // Asks again while something is under way, and stops once everything is done.
  function follow(list) {
    clearTimeout(poll);
    const busy = list.some((c) => c.status === "indexing" || c.status === "embedding" || c.status === "checking" || (c.grant && c.grant.waiting_until));
    live.hidden = !(busy && panel.token);
    if (busy && panel.token) poll = setTimeout(refresh, POLL_MS);
  }
  async function refresh() {
    try { draw((await api("GET", "/v1/connectors")).connectors); }
    catch (e) { clearTimeout(poll); live.hidden = true; say(e.message, true); }
  }
  const kind = document.getElementById("f-kind");
  const showKind = () => { for (const f of document.querySelectorAll(".kind-fields")) f.hidden = !f.dataset.kind.split(" ").includes(kind.value); };
  kind.addEventListener("change", showKind);
  showKind();
  form.hidden = true;
  // The same form configures a connector: its id and kind fixed, its fields filled in, the
  // password left empty (kept unless typed), the database URL as shown (its *** kept).
  let editing = null;
  const title = document.getElementById("form-title");
  const submit = document.getElementById("add-button");
  const cancel = document.getElementById("cancel-button");
  function configure(c) {
    editing = c.id;
    const set = (n, value) => { form.elements[n].value = value === undefined || value === null ? "" : String(value); };
    const config = c.config || {};
    set("id", c.id); set("label", c.label); kind.value = c.kind;
    form.elements.id.readOnly = true; kind.disabled = true; showKind();
    for (const f of FORMS[c.kind] || []) {
      const el = form.elements[f.name];
      if (f.input === "checkbox") el.checked = config[f.name] !== false;
      // A secret is never shown: left empty, it is kept.
      else if (f.input === "password") { el.value = ""; el.placeholder = "unchanged"; }
      else if (f.input === "json") set(f.name, JSON.stringify(config[f.name] ?? null));
      else set(f.name, config[f.name]);
    }
    title.textContent = "Configure " + c.id; submit.textContent = "Save"; cancel.hidden = false;
    form.elements.label.focus();
  }
  function adding() {
    editing = null;
    form.reset();
    form.elements.id.readOnly = false; kind.disabled = false; showKind();
    for (const el of form.querySelectorAll("input[type=password]")) el.placeholder = "";
    title.textContent = "Add a connector"; submit.textContent = "Add"; cancel.hidden = true;
  }
  cancel.addEventListener("click", adding);
  // Saved on the button and on Enter, not by submitting the form: a host's sandbox may block
  // form submission (no allow-forms), and with it the submit event.
  submit.addEventListener("click", save);
  form.addEventListener("keydown", (event) => { if (event.key === "Enter" && event.target.tagName === "INPUT") { event.preventDefault(); void save(); } });
  form.addEventListener("submit", (event) => event.preventDefault());
  async function save() {
    if (!form.reportValidity()) return;
    const v = (n) => form.elements[n].value.trim();
    const k = kind.value;
    // Each field of the kind into its config; an empty one is left out, so the schema's default applies.
    const config = {};
    for (const f of FORMS[k] || []) {
      const el = form.elements[f.name];
      if (f.input === "checkbox") { config[f.name] = el.checked; continue; }
      const value = f.input === "password" ? el.value : el.value.trim();
      if (value === "") continue;
      if (f.input === "number") config[f.name] = Number(value);
      else if (f.input === "json") {
        try { config[f.name] = JSON.parse(value); } catch { say(f.label + " must be JSON.", true); return; }
      } else config[f.name] = value;
    }
    try {
      if (editing) {
        const changed = await api("PATCH", "/v1/connectors/" + encodeURIComponent(editing), { ...(v("label") ? { label: v("label") } : {}), config });
        say(changed.status === "error" ? "Saved " + changed.id + ", but it cannot connect: " + changed.reason : "Saved " + changed.id + ".", changed.status === "error");
        adding();
      } else {
        const created = await api("POST", "/v1/connectors", { id: v("id"), kind: k, ...(v("label") ? { label: v("label") } : {}), config });
        say(created.status === "error" ? "Added " + created.id + ", but it cannot connect: " + created.reason : "Added " + created.id + ".", created.status === "error");
        for (const el of form.querySelectorAll("input[type=password]")) el.value = "";
      }
      await refresh();
    } catch (e) { say(e.message, true); }
  }
  // The open_connectors result: the list in structuredContent, the access in _meta.
  function receive(result) {
    if (!result || typeof result !== "object") return;
    const access = result._meta && result._meta[PANEL_META];
    if (access && typeof access.apiBase === "string") panel = access;
    form.hidden = !(panel.canWrite && panel.token);
    const list = result.structuredContent && result.structuredContent.connectors;
    if (Array.isArray(list)) draw(list);
    else if (panel.token) refresh();
    if (!panel.token) say("Read-only: this panel has no token to change connectors with.", false);
  }
  // MCP Apps: ui/initialize to the host, then the tool result as a notification.
  const INIT_ID = "corpus-connectors-init";
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent || window.parent === window) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id === INIT_ID && "result" in m) hostCapabilities = (m.result && m.result.hostCapabilities) || {};
    if (m.id === INIT_ID && "result" in m) window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} }, "*");
    else if (m.method === "ui/notifications/tool-result") receive(m.params);
  });
  if (window.parent !== window) {
    window.parent.postMessage({ jsonrpc: "2.0", id: INIT_ID, method: "ui/initialize", params: { protocolVersion: "${APPS_PROTOCOL_VERSION}", appInfo: { name: "corpus-connectors", version: "1" }, appCapabilities: {} } }, "*");
  }
  // Apps SDK: the same result in window.openai, now or once the host sets it.
  const fromOpenAi = () => {
    const o = window.openai;
    if (o && o.toolResponseMetadata) receive({ _meta: o.toolResponseMetadata, structuredContent: o.toolOutput });
  };
  window.addEventListener("openai:set_globals", fromOpenAi);
  fromOpenAi();
})();
</script>
</body>
</html>`;
