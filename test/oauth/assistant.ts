// What the browser-driven OAuth tests share: an assistant's OAuth provider for the official
// SDK client (kept in memory; the test opens the authorization URL itself), a loopback
// callback that receives the code; and, from test/support, a free port and the headless Chromium.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  Client,
  type OAuthClientInformationMixed,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  type OAuthTokens,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import type { Page } from "playwright-core";
import type { Running } from "../../src/server";
import type { Services } from "../../src/services";
import { connectorsSettled, tempDir } from "../helpers";
import { launchChromium } from "../support/chromium";

export { launchChromium } from "../support/chromium";
export { freePort } from "../support/tcp";

/**
 * An assistant's OAuth provider, keeping what the SDK hands it in memory; with `clientMetadataUrl`
 * it names itself by a Client ID Metadata Document instead of registering.
 */
export class AssistantProvider implements OAuthClientProvider {
  info?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  discovery?: OAuthDiscoveryState;
  constructor(
    readonly redirect: string,
    readonly name = "Flow Test Assistant",
    readonly clientMetadataUrl?: string,
  ) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.name,
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation = () => this.info;
  saveClientInformation = (info: OAuthClientInformationMixed) => void (this.info = info);
  tokens = () => this.saved;
  saveTokens = (tokens: OAuthTokens) => void (this.saved = tokens);
  redirectToAuthorization = (url: URL) => void (this.authorizationUrl = url);
  codeVerifier = () => this.verifier;
  saveCodeVerifier = (verifier: string) => void (this.verifier = verifier);
  discoveryState = () => this.discovery;
  saveDiscoveryState = (state: OAuthDiscoveryState) => void (this.discovery = state);
}

/** A loopback redirect URI's server: `next()`, called before the browser goes, resolves with the query of the next request. */
export function callbackServer() {
  let deliver: (p: URLSearchParams) => void = () => {};
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch(request) {
      deliver(new URL(request.url).searchParams);
      return new Response("<!doctype html><title>done</title><p>You may close this window.</p>", {
        headers: { "content-type": "text/html" },
      });
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/callback`,
    port: server.port!,
    next: () => new Promise<URLSearchParams>((r) => (deliver = r)),
    stop: () => server.stop(true),
  };
}

/**
 * What the assistant finds once signed in: `user`'s notes folder (one note about the team
 * offsite) under connector roots made here (`roots`, for CORPUS_CONNECTOR_ROOTS); `add` connects
 * it for the user in `services` and waits until it is read and embedded.
 */
export function offsiteNotes(user = "alice") {
  const base = tempDir("corpus-notes-roots-");
  const path = join(base, user, "notes");
  mkdirSync(path, { recursive: true });
  writeFileSync(join(path, "offsite.md"), "# Offsite\n\nThe team offsite is in Lisbon in May; the budget is 12,000 euros.\n");
  return {
    roots: join(base, "{user}"),
    async add(services: Pick<Services, "connectors">) {
      await services.connectors.add(user, { id: "notes", kind: "files", label: "Notes", config: { path } });
      await connectorsSettled(services, user);
    },
  };
}

/**
 * What a browser flow stands on, once `running` serves: the off-site notes connected, a
 * loopback callback and Chromium; `close` ends the three.
 */
export async function browserFlow(running: Running, notes: ReturnType<typeof offsiteNotes>) {
  await notes.add(running.services);
  const callback = callbackServer();
  const browser = await launchChromium();
  return {
    callback,
    browser,
    async close() {
      await browser.close();
      callback.stop();
      await running.stop();
    },
  };
}

/**
 * In Chromium, at corpus's authorization URL: signs in as alice with her password and allows
 * `assistant`, whose consent page must name the callback's host; resolves with what the
 * callback received (the code, state and iss).
 */
export async function signInAndAllow(page: Page, url: URL, assistant: string, callback: ReturnType<typeof callbackServer>) {
  const received = callback.next();
  await page.goto(url.href);
  await page.getByText(`${assistant} asks to use corpus`).waitFor();
  await page.getByLabel("User name").fill("alice");
  await page.getByLabel("Password").fill("alice's long password");
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: `Allow ${assistant}?` }).waitFor();
  if ((await page.getByText(`127.0.0.1:${callback.port}`).count()) === 0)
    throw new Error("the consent page does not name the redirect's host");
  await page.getByRole("button", { name: "Allow" }).click();
  return received;
}

/** Connects the official client to `mcpUrl` with `provider`'s tokens, lists the tools and asks about the offsite; returns the answer's text. */
export async function askAboutTheOffsite(mcpUrl: URL, provider: OAuthClientProvider, name: string): Promise<string> {
  const client = new Client({ name, version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  try {
    const { tools } = await client.listTools();
    if (!tools.some((t) => t.name === "corpus_search")) throw new Error("corpus_search is not listed");
    const answer = await client.callTool({ name: "corpus_search", arguments: { query: "where is the team offsite" } });
    if (answer.isError) throw new Error(`corpus_search failed: ${JSON.stringify(answer.content)}`);
    return JSON.stringify(answer.content);
  } finally {
    await client.close();
  }
}
