// The connector widget's "Grant access" button (issue 38) in a real headless Chromium, framed as
// an MCP Apps host frames it (a sandbox without pop-ups, the CSP its resource declares): a user
// adds an IMAP connector that signs in with OAuth, sees that access is not granted yet, presses
// the button; the host is asked to open the provider's authorization page (ui/open-link), the
// provider (a token issuer on loopback) sends the browser back to corpus's own confirmation page
// (its CSP, no script), the person confirms, and the panel, following the grant, shows it
// granted with its access token's expiry and the mailbox read from a real Dovecot. A refusal at
// the provider shows as an error with its reason.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, FrameLocator, Page } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { PAGE_CSP } from "../../src/oauth/pages";
import { type Running, startServer } from "../../src/server";
import { testConfig } from "../helpers";
import { launchChromium } from "../support/chromium";
import { type OAuthDovecot, startOAuthDovecot } from "../support/dovecot-oauth";
import { type DeclaredCsp, hostCspOf } from "../support/mcp-apps-host";
import { localProvidersFile, startTokenIssuer, type TokenIssuer } from "../support/oauth-issuer";
import { freePort } from "../support/tcp";

setDefaultTimeout(120_000);

let running: Running;
let host: ReturnType<typeof Bun.serve>;
let browser: Browser;
let issuer: TokenIssuer;
let dovecot: OAuthDovecot;
let token: string;
let declared: DeclaredCsp = {};
let hostHtml = "";
let template = "";

/**
 * The host page: frames the view in a sandbox without pop-ups, answers ui/initialize offering
 * openLinks, hands over the tool result, and keeps the links the view asks it to open.
 */
const hostPage = (result: unknown) => `<!doctype html><html><body>
<iframe id="view" src="/view" sandbox="allow-scripts allow-same-origin" style="width:100%;height:600px"></iframe>
<script>
const RESULT = ${JSON.stringify(result).replace(/</g, "\\u003c")};
window.opened = [];
const frame = document.getElementById("view");
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data, send = (x) => frame.contentWindow.postMessage(x, "*");
  if (m.method === "ui/initialize") send({ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, hostInfo: { name: "test-host", version: "1" }, hostCapabilities: { openLinks: {} }, hostContext: {} } });
  if (m.method === "ui/notifications/initialized") send({ jsonrpc: "2.0", method: "ui/notifications/tool-result", params: RESULT });
  if (m.method === "ui/open-link") { window.opened.push(m.params.url); send({ jsonrpc: "2.0", id: m.id, result: {} }); }
});
</script></body></html>`;

beforeAll(async () => {
  issuer = startTokenIssuer("127.0.0.2");
  dovecot = await startOAuthDovecot({ introspectionUrl: issuer.introspectionEndpoint, mechanisms: "oauthbearer xoauth2", messages: 20 });
  const providers = localProvidersFile(issuer);
  host = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (r) => {
      const html = { "content-type": "text/html" };
      if (new URL(r.url).pathname === "/view")
        return new Response(template, { headers: { ...html, "content-security-policy": hostCspOf(declared) } });
      return new Response(hostHtml, { headers: html });
    },
  });
  running = await startServer(
    testConfig({
      // The callback's address (the public URL) is where this server listens.
      CORPUS_PORT: String(await freePort()),
      CORPUS_CORS_ALLOW_ORIGINS_CSV: `http://127.0.0.1:${host.port}`,
      CORPUS_CONNECTOR_ALLOW_HOSTS: "127.0.0.1,127.0.0.2",
      CORPUS_IMAP_OAUTH_PROVIDERS_FILE: providers,
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
  const resource = (await rpc("resources/read", { uri: "ui://corpus/connectors.html" })).contents[0];
  template = resource.text;
  declared = resource._meta.ui.csp;
  hostHtml = hostPage(await rpc("tools/call", { name: "open_connectors", arguments: {} }));
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  host?.stop(true);
  await running?.stop();
  dovecot?.stop();
  issuer?.stop();
});

/** Fills the widget's form for an IMAP connector that signs in with OAuth, as `mailbox`, and adds it. */
async function addOAuthMail(w: FrameLocator, id: string, mailbox: string): Promise<void> {
  await w.locator("#f-id").fill(id);
  await w.locator("#f-kind").selectOption("imap");
  await w.locator("#f-host").fill("127.0.0.1");
  await w.locator("#f-port").fill(String(dovecot.port));
  await w.locator("#f-secure").uncheck();
  await w.locator("#f-user").fill(mailbox);
  await w.locator("#f-oauth").fill("local");
  await w.locator("#add-button").click();
}

/** The link the view asked the host to open, once it has. */
async function openedLink(page: Page, count: number): Promise<string> {
  await page.waitForFunction((n) => (window as unknown as { opened: string[] }).opened.length >= n, count);
  return page.evaluate((n) => (window as unknown as { opened: string[] }).opened[n - 1]!, count);
}

describe("the connector widget's grant button", () => {
  test("not granted, the button, the provider's page through the host, corpus's confirmation, then granted and read", async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${host.port}/`);
    const w = page.frameLocator("#view");
    await addOAuthMail(w, "mail", "enron");
    await w.getByText(/Added mail, but it cannot connect: no OAuth grant yet/).waitFor();
    const row = w.locator('tr[data-id="mail"]');
    expect(await row.locator(".grant").textContent()).toBe("OAuth with Local issuer: access not granted yet");

    await row.getByRole("button", { name: "Grant access to mail" }).click();
    const asked = new URL(await openedLink(page, 1));
    expect(asked.origin + asked.pathname).toBe(issuer.authorizationEndpoint);
    expect(asked.searchParams.get("code_challenge_method")).toBe("S256");
    expect(asked.searchParams.get("redirect_uri")).toBe(`${running.url}/connectors/oauth/callback`);
    // The same address as a link, for a host that opens nothing; the row waits for the grant.
    expect(await w.locator("#message a").getAttribute("href")).toBe(asked.href);
    expect(await w.locator("#message a").getAttribute("rel")).toBe("noopener noreferrer");
    await row.locator('.grant[data-grant="waiting"]').waitFor();
    expect(await w.locator("#live").isVisible()).toBe(true);

    // At the provider, then back at corpus's confirmation page in a browser tab of its own.
    const back = await issuer.approve(asked.href, "enron");
    const tab = await browser.newPage();
    tab.on("console", (m) => {
      if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
    });
    const answer = await tab.goto(back.href);
    expect(answer!.headers()["content-security-policy"]).toBe(PAGE_CSP);
    await tab.getByText("Grant access to this mailbox?").waitFor();
    expect(await tab.locator("script").count()).toBe(0);
    await tab.getByRole("button", { name: "Grant access" }).click();
    await tab.getByRole("heading", { name: "Access granted" }).waitFor();
    await tab.close();

    // The panel follows the grant until it is finished.
    const granted = row.locator('.grant[data-grant="granted"]');
    await granted.waitFor();
    expect(await granted.textContent()).toMatch(
      /^OAuth with Local issuer: access granted \d{4}-\d\d-\d\d \d\d:\d\d UTC; access token valid until \d{4}-\d\d-\d\d \d\d:\d\d UTC, renewed before$/,
    );
    expect(await row.getByRole("button", { name: "Grant access to mail" }).textContent()).toBe("Grant access again");
    await row.locator(".status.ok").waitFor();
    expect(await row.locator(".status").textContent()).toContain("20 records");
    await w.locator("#live").waitFor({ state: "hidden" });
    expect(violations).toEqual([]);
    // No token the provider issued reached the page.
    const html = await page.frames()[1]!.content();
    for (const secret of issuer.issued) expect(html).not.toContain(secret);
    await page.close();
  });

  test("a grant refused at the provider shows as an error with its reason", async () => {
    const page = await browser.newPage();
    await page.goto(`http://127.0.0.1:${host.port}/`);
    const w = page.frameLocator("#view");
    await addOAuthMail(w, "denied", "enron");
    const row = w.locator('tr[data-id="denied"]');
    await row.getByRole("button", { name: "Grant access to denied" }).click();
    const asked = new URL(await openedLink(page, 1));
    await row.locator('.grant[data-grant="waiting"]').waitFor();
    // The provider sends the browser back with its refusal instead of a code.
    const tab = await browser.newPage();
    await tab.goto(`${running.url}/connectors/oauth/callback?error=access_denied&state=${asked.searchParams.get("state")}`);
    await tab.getByText("Local issuer did not grant access (access_denied)").waitFor();
    await tab.close();
    const error = row.locator('.grant[data-grant="error"]');
    await error.waitFor();
    expect(await error.textContent()).toBe(
      "OAuth with Local issuer: error: the last attempt to grant access failed: Local issuer did not grant access (access_denied)",
    );
    expect(await row.getByRole("button", { name: "Grant access to denied" }).textContent()).toBe("Grant access again");
    await page.close();
  });
});
