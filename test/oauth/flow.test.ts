// The whole flow as an assistant runs it (issue 17): the official MCP SDK client with its
// OAuth provider discovers the metadata, registers (DCR), opens the authorization URL in a
// real headless Chromium, where a person signs in and consents; then it lists tools and calls
// corpus_search. Then the refresh token rotates, the old one replayed revokes the grant, and
// revocation ends access.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { testConfig } from "../helpers";
import {
  AssistantProvider,
  askAboutTheOffsite,
  browserFlow,
  type callbackServer,
  freePort,
  offsiteNotes,
  signInAndAllow,
} from "./assistant";

setDefaultTimeout(120_000);

let running: Running;
let flow: Awaited<ReturnType<typeof browserFlow>> | undefined;
let browser: Browser;
let callback: ReturnType<typeof callbackServer>;
let received: Promise<URLSearchParams>;

beforeAll(async () => {
  const notes = offsiteNotes();
  // The metadata names the server's own address: the port must be known before it starts.
  const port = await freePort();
  running = await startServer(
    testConfig({ CORPUS_PORT: String(port), CORPUS_CONNECTOR_ROOTS: notes.roots }),
    createLogger("ERROR", memorySink().sink),
  );
  await running.services.accounts.add("alice", "alice's long password");
  flow = await browserFlow(running, notes);
  ({ browser, callback } = flow);
});

afterAll(async () => {
  await (flow?.close() ?? running?.stop());
});

const mcpUrl = () => new URL(`${running.url}/mcp`);

async function connected(provider: AssistantProvider) {
  const client = new Client({ name: "flow-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider }));
  return client;
}

const form = (body: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(body).toString(),
});

describe("an assistant connects with OAuth", () => {
  test("discovery, DCR, sign-in and consent in Chromium, tools, refresh rotation and reuse, revocation", async () => {
    const provider = new AssistantProvider(callback.url);
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    const first = new Client({ name: "flow-test", version: "1.0.0" });
    // No token yet: the SDK discovers the metadata, registers, and asks to open the browser.
    await expect(first.connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(provider.info!.client_id).toStartWith("corpus-");
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${running.url}/oauth/authorize`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("resource")).toBe(running.services.config.resourceUrl);
    expect(url.searchParams.get("scope")).toContain("offline_access");

    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const params = await signInAndAllow(page, url, "Flow Test Assistant", callback);
    await page.close();
    expect(params.get("iss")).toBe(running.services.config.issuer);
    // The SDK checks iss (RFC 9207) and exchanges the code with its verifier.
    await transport.finishAuth(params);
    expect(provider.saved?.refresh_token).toBeString();

    expect(await askAboutTheOffsite(mcpUrl(), provider, "flow-test")).toContain("Lisbon");

    // Refresh rotates.
    const token = `${running.url}/oauth/token`;
    const oldRefresh = provider.saved!.refresh_token!;
    const r1 = await fetch(token, form({ grant_type: "refresh_token", refresh_token: oldRefresh, client_id: provider.info!.client_id }));
    expect(r1.status).toBe(200);
    const rotated = (await r1.json()) as { access_token: string; refresh_token: string };
    expect(rotated.refresh_token).not.toBe(oldRefresh);
    provider.saved = { ...provider.saved!, ...rotated };
    const again = await connected(provider);
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();

    // The old refresh token replayed: the grant ends, the rotated tokens with it.
    const replay = await fetch(
      token,
      form({ grant_type: "refresh_token", refresh_token: oldRefresh, client_id: provider.info!.client_id }),
    );
    expect(replay.status).toBe(400);
    const probe = await fetch(`${running.url}/mcp`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${rotated.access_token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(probe.status).toBe(401);
    expect(probe.headers.get("www-authenticate")).toContain("resource_metadata=");
  });

  test("revocation (RFC 7009) ends access for an SDK client", async () => {
    // A second grant through the same forms, without the browser this time (the first test drove it).
    const provider = new AssistantProvider(callback.url);
    received = callback.next();
    const transport = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: provider });
    await expect(new Client({ name: "flow-test", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const page = await browser.newPage();
    await page.goto(provider.authorizationUrl!.href);
    await page.getByLabel("User name").fill("alice");
    await page.getByLabel("Password").fill("alice's long password");
    await page.keyboard.press("Enter");
    await page.getByRole("button", { name: "Allow" }).click();
    await transport.finishAuth(await received);
    await page.close();
    const client = await connected(provider);
    await client.listTools();
    await client.close();
    const rv = await fetch(
      `${running.url}/oauth/revoke`,
      form({ token: provider.saved!.refresh_token!, client_id: provider.info!.client_id }),
    );
    expect(rv.status).toBe(200);
    const after = new Client({ name: "flow-test", version: "1.0.0" });
    // The same provider (its methods through the prototype: a spread lost them, and the SDK then
    // failed on a missing method before any request), holding only the access token of the revoked grant.
    const revoked: AssistantProvider = Object.create(provider);
    revoked.redirectToAuthorization = () => {};
    revoked.tokens = () => ({ access_token: provider.saved!.access_token, token_type: "Bearer" });
    const t2 = new StreamableHTTPClientTransport(mcpUrl(), { authProvider: revoked });
    await expect(after.connect(t2)).rejects.toBeInstanceOf(UnauthorizedError);
  });
});
