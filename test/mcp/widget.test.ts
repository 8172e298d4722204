// The connector widget in a real headless Chromium (Debian `chromium`, driven by
// playwright-core): it lists the connectors and adds and removes one through the REST
// control plane, asking before it removes.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { startServer, type Running } from "../../src/server";
import { tempDir, testConfig } from "../helpers";

setDefaultTimeout(120_000);

const CHROMIUM = "/usr/bin/chromium";
let running: Running;
let host: ReturnType<typeof Bun.serve>;
let browser: Browser;
let roots: string;
let token: string;

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) throw new Error("Debian chromium is needed for the widget test: apt-get install chromium");
  roots = tempDir("corpus-widget-roots-");
  mkdirSync(join(roots, "notes"));
  writeFileSync(join(roots, "notes", "plan.md"), "# Plan\n\nOffsite in Lisbon.\n");
  // The page that embeds the widget lives on its own origin, as in an assistant.
  let html = "";
  host = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response(html, { headers: { "content-type": "text/html" } }) });
  const origin = `http://127.0.0.1:${host.port}`;
  running = await startServer(testConfig({ CORPUS_PORT: "0", CORPUS_CONNECTOR_ROOTS: roots, CORPUS_CORS_ALLOW_ORIGINS_CSV: origin }), createLogger("ERROR", memorySink().sink));
  token = (await running.services.auth.issuer.issue("alice", ["connectors:read", "connectors:write", "corpus:search"])).token;
  const r = await fetch(`${running.url}/mcp`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", accept: "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "open_connectors", arguments: {} } }),
  });
  const body = (await r.json()) as { result: { content: Array<{ type: string; resource?: { text: string } }> } };
  html = body.result.content.find((c) => c.type === "resource")!.resource!.text;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
});

afterAll(async () => {
  await browser?.close();
  host?.stop(true);
  await running?.stop();
});

describe("the connector widget", () => {
  test("adds a connector and, after asking, removes it", async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${host.port}/`);
    await page.getByText("No connectors yet.").waitFor();

    await page.fill("#f-id", "notes");
    await page.fill("#f-label", "Team notes");
    await page.selectOption("#f-kind", "files");
    await page.fill("#f-path", join(roots, "notes"));
    await page.click("#add-button");
    await page.getByText("Added notes.").waitFor();
    const row = page.locator('tr[data-id="notes"]');
    await row.waitFor();
    expect(await row.textContent()).toContain("Team notes (notes)");
    const listed = (await (await fetch(`${running.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } })).json()) as { connectors: Array<{ id: string }> };
    expect(listed.connectors.map((c) => c.id)).toEqual(["notes"]);

    // It asks first: dismissing keeps the connector.
    let asked = "";
    page.once("dialog", (d) => {
      asked = d.message();
      void d.dismiss();
    });
    await page.click('button[aria-label="Remove notes"]');
    expect(asked).toContain("Remove the connector Team notes (notes)?");
    expect(await page.locator('tr[data-id="notes"]').count()).toBe(1);

    page.once("dialog", (d) => void d.accept());
    await page.click('button[aria-label="Remove notes"]');
    await page.getByText("Removed notes.").waitFor();
    await page.getByText("No connectors yet.").waitFor();
    const after = (await (await fetch(`${running.url}/v1/connectors`, { headers: { authorization: `Bearer ${token}` } })).json()) as { connectors: unknown[] };
    expect(after.connectors).toEqual([]);
    await page.close();
  });

  test("a connector that cannot connect is shown with its reason", async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${host.port}/`);
    await page.fill("#f-id", "mail");
    await page.selectOption("#f-kind", "imap");
    await page.fill("#f-host", "127.0.0.1");
    await page.fill("#f-port", "1");
    await page.uncheck("#f-secure");
    await page.fill("#f-user", "alice");
    await page.fill("#f-password", "secret-pass");
    await page.click("#add-button");
    await page.getByText("it cannot connect: IMAP server 127.0.0.1:1 refused the connection").waitFor();
    expect(await page.locator('tr[data-id="mail"] .status').textContent()).toContain("error");
    expect(await page.content()).not.toContain("secret-pass");
    await page.close();
  });
});
