// Sign-in at an upstream OpenID Connect provider, end to end (issue 17): a real, certified
// provider (`oidc-provider`, run under Node on loopback) is CORPUS_OIDC_ISSUER. The official
// MCP SDK client discovers corpus's metadata and registers; headless Chromium opens corpus's
// authorization URL, is sent on to the provider, signs in and consents there, comes back to
// corpus's callback and then corpus's own consent page; the SDK then lists tools and calls
// corpus_search as the provider's person, whose `sub`, namespaced by the issuer, is the corpus
// user owning the notes searched.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { OAuthMetadataSchema, OpenIdProviderDiscoveryMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import type { Browser } from "playwright-core";
import { createLogger, memorySink } from "../../src/log";
import { upstreamUserId } from "../../src/oauth/upstream";
import { type Running, startServer } from "../../src/server";
import { testConfig } from "../helpers";
import { AssistantProvider, askAboutTheOffsite, browserFlow, type callbackServer, freePort, offsiteNotes } from "./assistant";

setDefaultTimeout(60_000);
const CLIENT_ID = "corpus-at-upstream";
const CLIENT_SECRET = "a long upstream client secret";

let running: Running;
let flow: Awaited<ReturnType<typeof browserFlow>> | undefined;
let browser: Browser;
let upstream: ReturnType<typeof Bun.spawn>;
let issuer: string;
let callback: ReturnType<typeof callbackServer>;

/** Starts the provider under Node (its supported runtime) and answers its issuer. */
async function startUpstream(redirectUri: string): Promise<string> {
  upstream = Bun.spawn([Bun.which("node") ?? process.execPath, join(import.meta.dir, "upstream-provider.mjs")], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "ignore",
    env: {
      PATH: process.env.PATH ?? "",
      UPSTREAM_CLIENT_ID: CLIENT_ID,
      UPSTREAM_CLIENT_SECRET: CLIENT_SECRET,
      UPSTREAM_REDIRECT_URI: redirectUri,
    },
  });
  const reader = (upstream.stdout as ReadableStream<Uint8Array>).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the upstream provider ended before listening");
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return (JSON.parse(text.split("\n")[0]!) as { issuer: string }).issuer;
}

beforeAll(async () => {
  // corpus's callback is registered at the provider: its port is chosen first.
  const port = await freePort();
  issuer = await startUpstream(`http://127.0.0.1:${port}/oauth/oidc/callback`);
  const alice = upstreamUserId(issuer, "alice");
  const notes = offsiteNotes(alice);
  running = await startServer(
    testConfig({
      CORPUS_PORT: String(port),
      CORPUS_CONNECTOR_ROOTS: notes.roots,
      CORPUS_OIDC_ISSUER: issuer,
      CORPUS_OIDC_CLIENT_ID: CLIENT_ID,
      CORPUS_OIDC_CLIENT_SECRET: CLIENT_SECRET,
      CORPUS_METRICS_LISTEN: "127.0.0.1:0",
    }),
    createLogger("ERROR", memorySink().sink),
  );
  flow = await browserFlow(running, notes);
  ({ browser, callback } = flow);
});

afterAll(async () => {
  await (flow?.close() ?? running?.stop());
  upstream?.kill();
  await upstream?.exited;
});

describe("sign-in at an upstream OpenID Connect provider", () => {
  test("the metadata documents pass the SDK's schemas; openid-configuration describes corpus's own server", async () => {
    const as = await (await fetch(`${running.url}/.well-known/oauth-authorization-server`)).json();
    expect(OAuthMetadataSchema.safeParse(as).success).toBe(true);
    const oidc = (await (await fetch(`${running.url}/.well-known/openid-configuration`)).json()) as Record<string, any>;
    const parsed = OpenIdProviderDiscoveryMetadataSchema.safeParse(oidc);
    if (!parsed.success) console.error(parsed.error);
    expect(parsed.success).toBe(true);
    expect(oidc.issuer).toBe(running.services.config.issuer);
    expect(oidc.authorization_endpoint).toBe(as.authorization_endpoint);
    expect(oidc.token_endpoint).toBe(as.token_endpoint);
    expect(oidc.scopes_supported).toContain("openid");
    // Both documents list what the authorization server grants: the same scopes.
    expect(as.scopes_supported).toEqual(oidc.scopes_supported);
    expect(oidc.id_token_signing_alg_values_supported).toEqual(["EdDSA"]);
  });

  test("SDK client → corpus authorize → the provider's sign-in and consent → corpus consent → tools/call corpus_search", async () => {
    const provider = new AssistantProvider(callback.url, "Upstream Flow Assistant");
    const transport = new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), { authProvider: provider });
    await expect(new Client({ name: "oidc-flow", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const code = callback.next();
    await page.goto(provider.authorizationUrl!.href);
    // Not corpus's password form: the provider's own sign-in page.
    expect(new URL(page.url()).origin).toBe(issuer);
    await page.locator('input[name="login"]').fill("alice");
    await page.locator('input[name="password"]').fill("anything");
    await page.getByRole("button", { name: "Sign-in" }).click();
    // The provider's consent step: waited for as a page, not a time.
    const proceed = page.getByRole("button", { name: "Continue" });
    await proceed.waitFor();
    await page.waitForLoadState("load");
    await proceed.click();
    // Back at corpus, signed in as the provider's alice: corpus's own consent page.
    await page.getByRole("heading", { name: "Allow Upstream Flow Assistant?" }).waitFor();
    expect(new URL(page.url()).origin).toBe(running.url);
    const alice = upstreamUserId(issuer, "alice");
    expect(await page.getByText(alice).count()).toBeGreaterThan(0);
    await page.getByRole("button", { name: "Allow" }).click();
    const params = await code;
    await page.close();
    expect(params.get("iss")).toBe(running.services.config.issuer);
    await transport.finishAuth(params);

    expect(await askAboutTheOffsite(new URL(`${running.url}/mcp`), provider, "oidc-flow")).toContain("Lisbon");
    // The access token names the namespaced user, and corpus remembers where the person came from.
    const [, body] = provider.saved!.access_token.split(".");
    expect(JSON.parse(Buffer.from(body!, "base64url").toString()).sub).toBe(alice);
    expect((await running.services.accounts.list()).find((a) => a.id === alice)?.upstream).toMatchObject({ issuer, subject: "alice" });
  });

  test("the operator's metrics count the provider's answers at the callback: a sign-in completed, one refused (D35)", async () => {
    const count = async (result: string) => {
      const text = await (await fetch(`${running.metricsUrl}/metrics`)).text();
      const series = `corpus_sign_ins_total{method="oidc",result="${result}"} `;
      return Number(
        text
          .split("\n")
          .find((l) => l.startsWith(series))
          ?.slice(series.length) ?? 0,
      );
    };
    // The browser's sign-in of the test before.
    expect(await count("success")).toBe(1);
    const failures = await count("failure");
    const forged = await fetch(`${running.url}/oauth/oidc/callback?code=forged&state=forged`);
    expect(forged.status).toBe(400);
    expect(await count("failure")).toBe(failures + 1);
    expect(await count("success")).toBe(1);
  });

  test("the password form is off: a posted password signs no one in", async () => {
    const r = await fetch(`${running.url}/oauth/login`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ user: "alice", password: "alice's long password", csrf: "x", return: "/oauth/apps" }).toString(),
      redirect: "manual",
    });
    expect(r.status).toBe(400);
    expect(r.headers.getSetCookie().join()).not.toContain("corpus_session=");
  });
});
