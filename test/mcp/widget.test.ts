// The connector widget in a real headless Chromium (Debian `chromium`, driven by
// playwright-core), embedded as an MCP Apps host embeds it: the page is the template of
// resources/read, in an iframe; the host answers its ui/initialize and hands it the
// open_connectors result (the token in _meta, issue 13 item 8). It lists the connectors and
// adds and removes one through the REST control plane, asking before it removes; while one is
// indexed it shows a progress bar and asks for the list again until it is done.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, FrameLocator, Locator, Page } from "playwright-core";
import type { IndexedFolderConnector } from "../../src/connectors/indexed-source";
import { createLogger, memorySink } from "../../src/log";
import { PANEL_POLL_MS } from "../../src/mcp/widget";
import { type Running, startServer } from "../../src/server";
import { tempDir, testConfig } from "../helpers";
import { launchChromium } from "../support/chromium";
import { embeddingGate, writeDocs } from "../support/embedding-gate";
import { type DeclaredCsp, hostCspOf } from "../support/mcp-apps-host";

setDefaultTimeout(120_000);

let running: Running;
let host: ReturnType<typeof Bun.serve>;
let browser: Browser;
let roots: string;
let token: string;
/** The iframe of the widget inside the host page. */
const view = (page: Page) => page.frameLocator("#view");

/** A new browser page on the host's `path`; `prepare` runs before it loads (a fake clock, a request counter). */
async function openPage(path = "/", prepare?: (page: Page) => Promise<void>): Promise<Page> {
  const page = await browser.newPage();
  await prepare?.(page);
  await page.goto(`http://127.0.0.1:${host.port}${path}`);
  return page;
}

/** Fills the widget's form for a files connector (with a label, if given) and submits it. */
async function addFolder(w: FrameLocator, id: string, path: string, label?: string): Promise<void> {
  await w.locator("#f-id").fill(id);
  if (label !== undefined) await w.locator("#f-label").fill(label);
  await w.locator("#f-kind").selectOption("files");
  await w.locator("#f-path").fill(path);
  await w.locator("#add-button").click();
}

/** Adds a files connector through the form, waits until the widget says so and lists it: its row. */
async function addedFolder(w: FrameLocator, id: string, path: string, label?: string): Promise<Locator> {
  await addFolder(w, id, path, label);
  await w.getByText(`Added ${id}.`).waitFor();
  const row = w.locator(`tr[data-id="${id}"]`);
  await row.waitFor();
  return row;
}

/** Alice's connectors as GET /v1/connectors lists them. */
async function listedConnectors(): Promise<Array<{ id: string }>> {
  const r = await fetch(`${running.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } });
  return ((await r.json()) as { connectors: Array<{ id: string }> }).connectors;
}

/** The host page: embeds the view and plays the MCP Apps host's part of the handshake. */
const hostPage = (result: unknown, src = "/view", sandbox = "") => `<!doctype html><html><body>
<iframe id="view" src="${src}" ${sandbox ? `sandbox="${sandbox}"` : ""} style="width:100%;height:600px"></iframe>
<script>
const RESULT = ${JSON.stringify(result).replace(/</g, "\\u003c")};
const frame = document.getElementById("view");
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data, send = (x) => frame.contentWindow.postMessage(x, "*");
  if (m.method === "ui/initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, hostInfo: { name: "test-host", version: "1" }, hostCapabilities: {}, hostContext: {} } });
  if (m.method === "ui/notifications/initialized") {
    send({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: {} } });
    send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: RESULT });
  }
});
</script></body></html>`;

/** The sandbox of an MCP Apps view on its host's own sandbox origin: scripts, nothing more. */
const SANDBOX = "allow-scripts allow-same-origin";
let declared: DeclaredCsp = {};
let sandboxedPage = "";
let sandboxedNone = "";

beforeAll(async () => {
  roots = tempDir("corpus-widget-roots-");
  mkdirSync(join(roots, "notes"));
  writeFileSync(join(roots, "notes", "plan.md"), "# Plan\n\nOffsite in Lisbon.\n");
  // The page that embeds the widget lives on its own origin, as in an assistant.
  let page = "";
  let template = "";
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (r) => {
      const path = new URL(r.url).pathname;
      const html = { "content-type": "text/html" };
      if (path === "/view") return new Response(template, { headers: html });
      // As an MCP Apps host frames a view: a sandbox without modals or forms, and a CSP made
      // from the resource's _meta.ui.csp (or, to show the check bites, one that allows no calls).
      if (path === "/view-csp") return new Response(template, { headers: { ...html, "content-security-policy": hostCspOf(declared) } });
      if (path === "/view-csp-none") return new Response(template, { headers: { ...html, "content-security-policy": hostCspOf({}) } });
      if (path === "/sandboxed") return new Response(sandboxedPage, { headers: html });
      if (path === "/sandboxed-none") return new Response(sandboxedNone, { headers: html });
      return new Response(page, { headers: html });
    },
  });
  const origin = `http://127.0.0.1:${host.port}`;
  running = await startServer(
    testConfig({
      CORPUS_PORT: "0",
      CORPUS_CONNECTOR_ROOTS: roots,
      CORPUS_CORS_ALLOW_ORIGINS_CSV: origin,
      CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1",
    }),
    createLogger("ERROR", memorySink().sink),
  );
  token = (await running.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write", "corpus:search"])).token;
  const rpc = async (method: string, params: unknown) => {
    const r = await fetch(`${running.url}/mcp`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    return ((await r.json()) as { result: any }).result;
  };
  // As a host does: the template (cacheable, no secret in it), then the tool's result.
  template = (await rpc("resources/read", { uri: "ui://corpus/connectors.html" })).contents[0].text;
  const result = await rpc("tools/call", { name: "open_connectors", arguments: {} });
  expect(template).not.toContain("eyJ");
  expect(JSON.stringify(result.content)).not.toContain("eyJ");
  page = hostPage(result);
  declared = (await rpc("resources/read", { uri: "ui://corpus/connectors.html" })).contents[0]._meta.ui.csp;
  sandboxedPage = hostPage(result, "/view-csp", SANDBOX);
  sandboxedNone = hostPage(result, "/view-csp-none", SANDBOX);
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  host?.stop(true);
  await running?.stop();
});

describe("the connector widget", () => {
  test("adds a connector and, after asking, removes it", async () => {
    const page = await openPage();
    const w = view(page);
    await w.getByText("No connectors yet.").waitFor();

    const row = await addedFolder(w, "notes", join(roots, "notes"), "Team notes");
    expect(await row.textContent()).toContain("Team notes (notes)");
    expect((await listedConnectors()).map((c) => c.id)).toEqual(["notes"]);

    // It asks first, in the row (a host's sandbox may forbid confirm()): keeping it keeps it.
    await w.locator('button[aria-label="Remove notes"]').click();
    expect(await w.locator('[role="alertdialog"]').textContent()).toContain("Remove the connector Team notes (notes)?");
    await w.getByRole("button", { name: "Keep" }).click();
    expect(await w.locator('[role="alertdialog"]').count()).toBe(0);
    expect(await w.locator('tr[data-id="notes"]').count()).toBe(1);

    await w.locator('button[aria-label="Remove notes"]').click();
    await w.locator('button[aria-label="Yes, remove notes"]').click();
    await w.getByText("Removed notes.").waitFor();
    await w.getByText("No connectors yet.").waitFor();
    expect(await listedConnectors()).toEqual([]);
    await page.close();
  });

  test("configures a connector (D22): its fields filled in, a new label and folder saved with PATCH", async () => {
    mkdirSync(join(roots, "minutes"), { recursive: true });
    writeFileSync(join(roots, "minutes", "board.md"), "# Board\n\nBudget approved.\n");
    const page = await openPage();
    const w = view(page);
    await addFolder(w, "papers", join(roots, "notes"), "Papers");
    await w.getByText("Added papers.").waitFor();
    await w.locator('button[aria-label="Configure papers"]').click();
    expect(await w.locator("#form-title").textContent()).toBe("Configure papers");
    expect(await w.locator("#f-path").inputValue()).toBe(join(roots, "notes"));
    expect(await w.locator("#f-id").getAttribute("readonly")).not.toBeNull();
    await w.locator("#f-label").fill("Board minutes");
    await w.locator("#f-path").fill(join(roots, "minutes"));
    await w.locator("#add-button").click();
    await w.getByText("Saved papers.").waitFor();
    await w.getByText("Board minutes (papers)").waitFor();
    expect(await w.locator("#form-title").textContent()).toBe("Add a connector");
    expect((await listedConnectors()).find((c) => c.id === "papers")).toMatchObject({
      label: "Board minutes",
      config: { path: join(roots, "minutes") },
    });
    await fetch(`${running.url}/v1/connectors/papers`, { method: "DELETE", headers: { authorization: `Bearer ${token}` } });
    await page.close();
  });

  test("inside a sandboxed iframe under the CSP its resource declares, it lists, adds and removes (issue 18, gap 2)", async () => {
    expect(declared.connectDomains).toEqual([new URL(running.url).origin]);
    const page = await openPage("/sandboxed");
    const w = view(page);
    await addedFolder(w, "sandboxed", join(roots, "notes"));
    await w.locator('button[aria-label="Remove sandboxed"]').click();
    await w.locator('button[aria-label="Yes, remove sandboxed"]').click();
    await w.getByText("Removed sandboxed.").waitFor();
    await page.close();
  });

  test("the same page under a CSP that allows no calls cannot reach the API: the declaration is what lets it", async () => {
    const page = await openPage("/sandboxed-none");
    const w = view(page);
    await addFolder(w, "blocked", join(roots, "notes"));
    await w.locator("#message.error").waitFor();
    expect((await listedConnectors()).map((c) => c.id)).not.toContain("blocked");
    await page.close();
  });

  test("a connector being indexed shows a progress bar with its counts, rate and time left, followed until it is done", async () => {
    // The embedding is held at a gate and let through batch by batch; the page's timers run on a
    // fake clock, so each poll happens when the test moves it on.
    const gate = embeddingGate(running.services.embeddings);
    try {
      writeDocs(join(roots, "reports"), 8);
      let polls = 0;
      const page = await openPage("/", async (p) => {
        await p.clock.install();
        p.on("request", (r) => {
          if (r.method() === "GET" && r.url().endsWith("/v1/connectors")) polls++;
        });
      });
      const w = view(page);
      await w.locator("#f-id").waitFor();
      const row = await addedFolder(w, "reports", join(roots, "reports"), "Reports");
      await w.locator("#live").waitFor();

      // Read; the first batch waits at the gate: the next poll shows embedding at 0.
      await gate.arrived();
      const connector = (await running.services.connectors.active("alice", ["reports"]))[0]!.connector as IndexedFolderConnector;
      const chunks = connector.progress().total;
      expect(chunks).toBeGreaterThan(16);
      await page.clock.runFor(PANEL_POLL_MS);
      const bar = row.getByRole("progressbar", { name: `Reports: embedding, 0 of ${chunks} chunks embedded` });
      await bar.waitFor();
      expect(await bar.evaluate((b: HTMLProgressElement) => [b.value, b.max])).toEqual([0, chunks]);
      expect(await row.locator(".status").textContent()).toContain("embedding");
      expect(await row.locator(".progress-text").textContent()).toContain(`0 of ${chunks} chunks embedded · measuring the rate`);

      // One batch through: counts, rate and time left. A batch ends with the rest of its last
      // record, so how many it holds is read, not assumed.
      gate.one();
      await gate.arrived();
      const embedded = connector.progress().embedded;
      expect(embedded).toBeGreaterThan(0);
      expect(embedded).toBeLessThan(chunks);
      await page.clock.runFor(PANEL_POLL_MS);
      await row.getByRole("progressbar", { name: `Reports: embedding, ${embedded} of ${chunks} chunks embedded` }).waitFor();
      expect(await row.locator(".progress-text").textContent()).toMatch(
        new RegExp(`^${embedded} of ${chunks} chunks embedded · [0-9.]+ chunks/s · about [0-9.]+ (s|min|h) left$`),
      );

      // All through: ok, the bar gone, and the page stops asking.
      gate.open();
      await connector.embedPending();
      await page.clock.runFor(PANEL_POLL_MS);
      await row.locator(".status.ok").waitFor();
      expect(await row.locator("progress").count()).toBe(0);
      expect(await row.locator(".status").textContent()).toBe(`ok · 8 records · ${chunks}/${chunks} chunks embedded`);
      expect(await w.locator("#live").isHidden()).toBe(true);
      const asked = polls;
      await page.clock.runFor(PANEL_POLL_MS * 10);
      expect(polls).toBe(asked);
      await page.close();
    } finally {
      gate.restore();
    }
  });

  test("a connector that cannot connect is shown with its reason", async () => {
    const page = await openPage();
    const w = view(page);
    await w.locator("#f-id").fill("mail");
    await w.locator("#f-kind").selectOption("imap");
    await w.locator("#f-host").fill("127.0.0.1");
    await w.locator("#f-port").fill("1");
    await w.locator("#f-secure").uncheck();
    await w.locator("#f-user").fill("alice");
    await w.locator("#f-password").fill("secret-pass");
    await w.locator("#add-button").click();
    // (The reason's wording is the connector's; that it is shown is the widget's.)
    await w.getByText(/it cannot connect: IMAP server 127\.0\.0\.1:1 /).waitFor();
    expect(await w.locator('tr[data-id="mail"] .status').textContent()).toContain("error");
    expect(await page.frames()[1]!.content()).not.toContain("secret-pass");
    await page.close();
  });
});
