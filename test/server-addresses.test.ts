// Every address corpus gives out opens, wherever it listens (D4, D27, D36). Without
// CORPUS_OAUTH_RESOURCE_URL the configured address may be none a client can go to: CORPUS_PORT=0
// (a free port) and a wildcard CORPUS_HOST (0.0.0.0). Real listeners, real requests, as an
// assistant signs in: the 401's resource_metadata URL, fetched, is the protected-resource
// document; its authorization server's metadata names endpoints that open; a token obtained
// through them (registration, sign-in, consent, code exchange) is accepted on /mcp; the
// connector OAuth callback opens.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readdirSync, readlinkSync } from "node:fs";
import { createLogger, memorySink } from "../src/log";
import { type Running, startServer } from "../src/server";
import { testConfig } from "./helpers";
import { freePort } from "./oauth/assistant";
import { consent, pkce, register, signIn, tokenRequest } from "./oauth/support";

setDefaultTimeout(120_000);

const REDIRECT = "http://127.0.0.1:9/callback";
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "addresses-test", version: "1.0.0" } },
};

/** The in-process helpers' requests, sent over the wire to `origin` instead. */
const overTheWire = (origin: string) => ({
  handle: (request: Request) => {
    const url = new URL(request.url);
    return fetch(`${origin}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      redirect: "manual",
    });
  },
});

const postMcp = (url: string, headers: Record<string, string> = {}) =>
  fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(INITIALIZE),
  });

describe.each([
  ["loopback, CORPUS_PORT=0", "127.0.0.1", 0],
  ["wildcard 0.0.0.0, CORPUS_PORT=0", "0.0.0.0", 0],
  ["wildcard 0.0.0.0, a fixed port", "0.0.0.0", -1],
])("%s, no CORPUS_OAUTH_RESOURCE_URL", (_, host, portSetting) => {
  let running: Running;
  const logs = memorySink();
  /** Where this machine reaches the listener: its real port, on loopback. */
  let origin: string;
  beforeAll(async () => {
    const port = portSetting === -1 ? await freePort() : portSetting;
    running = await startServer(testConfig({ CORPUS_HOST: host, CORPUS_PORT: String(port) }), createLogger("WARNING", logs.sink));
    await running.services.accounts.add("alice", "alice's long password");
    origin = `http://127.0.0.1:${running.server.port}`;
  });
  afterAll(async () => {
    await running?.stop();
  });

  test("the 401's resource_metadata opens, the metadata's endpoints open, a token obtained through them is accepted", async () => {
    const refused = await postMcp(`${origin}/mcp`);
    expect(refused.status).toBe(401);
    const resourceMetadataUrl = /resource_metadata="([^"]+)"/.exec(refused.headers.get("www-authenticate") ?? "")?.[1];
    expect(resourceMetadataUrl).toBe(`${origin}/.well-known/oauth-protected-resource`);

    const resourceDocument = await fetch(resourceMetadataUrl!);
    expect(resourceDocument.status).toBe(200);
    const resource = (await resourceDocument.json()) as { resource: string; authorization_servers: string[] };
    expect(resource.resource).toBe(origin);
    expect(resource.authorization_servers).toEqual([origin]);

    const metadata = await fetch(`${resource.authorization_servers[0]}/.well-known/oauth-authorization-server`);
    expect(metadata.status).toBe(200);
    const as = (await metadata.json()) as Record<string, string>;
    expect(as.issuer).toBe(origin);
    for (const name of [
      "authorization_endpoint",
      "token_endpoint",
      "registration_endpoint",
      "revocation_endpoint",
      "jwks_uri",
      "service_documentation",
    ]) {
      expect({ name, underOrigin: as[name]?.startsWith(`${origin}/`) }).toEqual({ name, underOrigin: true });
      // Each one answers at the address it names (a GET without parameters: never "not found").
      const { status } = await fetch(as[name]!, { redirect: "manual" });
      expect({ name, status, opens: status !== 404 && status < 500 }).toMatchObject({ name, opens: true });
    }
    expect((await fetch(as.jwks_uri!)).status).toBe(200);
    expect((await fetch(as.service_documentation!)).status).toBe(200);

    // Sign-in as an assistant does it, at those endpoints.
    const wire = overTheWire(origin);
    const client = await register(wire, { client_name: "Addresses Test", redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
    expect(client.status).toBe(201);
    const session = await signIn(wire, "alice", "alice's long password");
    const { verifier, challenge } = pkce();
    const back = await consent(wire, session, {
      response_type: "code",
      client_id: client.body.client_id,
      redirect_uri: REDIRECT,
      code_challenge: challenge,
      code_challenge_method: "S256",
      scope: "corpus:search",
      state: "s1",
      resource: resource.resource,
    });
    expect(back.searchParams.get("iss")).toBe(origin);
    const token = await tokenRequest(wire, {
      grant_type: "authorization_code",
      code: back.searchParams.get("code")!,
      redirect_uri: REDIRECT,
      client_id: client.body.client_id,
      code_verifier: verifier,
      resource: resource.resource,
    });
    expect(token.status).toBe(200);
    const claims = JSON.parse(Buffer.from(token.body.access_token.split(".")[1], "base64url").toString()) as { iss: string; aud: string };
    expect(claims).toMatchObject({ iss: origin, aud: origin });
    const accepted = await postMcp(`${origin}/mcp`, { authorization: `Bearer ${token.body.access_token}` });
    expect(accepted.status).toBe(200);
  });

  test("a wildcard host without CORPUS_OAUTH_RESOURCE_URL is said at start, with the address assistants sign in at", () => {
    const said = logs.records().filter((r) => String(r.message).includes("no CORPUS_OAUTH_RESOURCE_URL"));
    expect(said.map((r) => r.message)).toEqual(
      host === "0.0.0.0" ? [expect.stringContaining(`assistants sign in at ${origin}, on this machine only`)] : [],
    );
  });

  test("the connector OAuth callback it gives providers opens", async () => {
    const callback = running.services.connectors.grants.redirectUri;
    expect(callback).toBe(`${origin}/connectors/oauth/callback`);
    const page = await fetch(callback);
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toStartWith("text/html");
  });
});

/** The sockets this process holds open. */
const openSockets = () =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith("socket:");
    } catch {
      return false; // closed while listed (the directory's own descriptor)
    }
  }).length;

test("with CORPUS_PORT=0 the listener is bound before the rest is built: a start that fails after leaves nothing listening", async () => {
  const taken = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  try {
    const before = openSockets();
    const config = testConfig({ CORPUS_PORT: "0", CORPUS_METRICS_LISTEN: `127.0.0.1:${taken.port}` });
    await expect(startServer(config, createLogger("ERROR", memorySink().sink))).rejects.toThrow(String(taken.port));
    expect(openSockets()).toBe(before);
  } finally {
    taken.stop(true);
  }
});
