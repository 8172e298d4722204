// The official SDK client naming itself by a Client ID Metadata Document (issue 17): its
// client_id is the https URL of a JSON document served on loopback (a test certificate for
// client.invalid, which this server is told resolves to 127.0.0.1). No registration: corpus
// fetches the document, shows its client_name on the consent page in headless Chromium, and
// the SDK exchanges the code with the URL as client_id, then lists tools and calls corpus_search.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import type { Browser } from "playwright-core";
import { createApp } from "../../src/app";
import { ANY_ADDRESS } from "../../src/net/pin";
import { OAuthServer } from "../../src/oauth/service";
import { SqliteOAuthStore } from "../../src/oauth/store";
import { createFetch } from "../../src/server";
import { testApp } from "../helpers";
import { AssistantProvider, askAboutTheOffsite, callbackServer, freePort, launchChromium, offsiteNotes, signInAndAllow } from "./assistant";

setDefaultTimeout(60_000);
const openssl = Bun.which("openssl");

let t: Awaited<ReturnType<typeof testApp>>;
let docs: ReturnType<typeof Bun.serve>;
let corpus: ReturnType<typeof Bun.serve>;
let browser: Browser;
let callback: ReturnType<typeof callbackServer>;
let documentUrl = "";
let fetchedDocuments = 0;
let url = "";

describe.skipIf(!openssl)("an SDK client with a Client ID Metadata Document", () => {
  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "corpus-cimd-flow-"));
    const made = Bun.spawnSync([
      openssl!,
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-keyout",
      join(dir, "key.pem"),
      "-out",
      join(dir, "cert.pem"),
      "-days",
      "1",
      "-subj",
      "/CN=client.invalid",
      "-addext",
      "subjectAltName=DNS:client.invalid",
    ]);
    if (made.exitCode !== 0) throw new Error(made.stderr.toString());
    const cert = readFileSync(join(dir, "cert.pem"), "utf8");
    callback = callbackServer();
    docs = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key: readFileSync(join(dir, "key.pem"), "utf8") },
      fetch: (r) => {
        if (new URL(r.url).pathname !== "/assistant/client.json") return new Response("no", { status: 404 });
        fetchedDocuments++;
        return Response.json({
          client_id: documentUrl,
          client_name: "Doc Flow Assistant",
          redirect_uris: [callback.url],
          grant_types: ["authorization_code", "refresh_token"],
          response_types: ["code"],
          token_endpoint_auth_method: "none",
        });
      },
    });
    documentUrl = `https://client.invalid:${docs.port}/assistant/client.json`;

    const notes = offsiteNotes();
    const port = await freePort();
    t = await testApp({ CORPUS_PORT: String(port), CORPUS_CONNECTOR_ROOTS: notes.roots });
    await t.services.accounts.add("alice", "alice's long password");
    await notes.add(t.services);
    // This server may fetch the document from loopback (client.invalid → 127.0.0.1) and trusts its test certificate.
    const oauth = new OAuthServer(t.config, t.services.auth, t.services.accounts, new SqliteOAuthStore(t.db), Date.now, {
      documentPolicy: ANY_ADDRESS,
      resolve: async () => ["127.0.0.1"],
      documentCa: cert,
    });
    const app = createApp({ ...t.services, oauth });
    corpus = Bun.serve({ hostname: "127.0.0.1", port, development: false, fetch: createFetch(app.fetch, t.config, t.log) });
    url = `http://127.0.0.1:${port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    corpus?.stop(true);
    docs?.stop(true);
    callback?.stop();
  });

  test("discovery, the URL as client_id (no registration), sign-in and consent in Chromium, tools/call corpus_search", async () => {
    const provider = new AssistantProvider(callback.url, "Doc Flow Assistant", documentUrl);
    const transport = new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { authProvider: provider });
    await expect(new Client({ name: "cimd-flow", version: "1.0.0" }).connect(transport)).rejects.toBeInstanceOf(UnauthorizedError);
    const authorize = provider.authorizationUrl!;
    expect(authorize.searchParams.get("client_id")).toBe(documentUrl);
    // Nothing was registered: the SDK used the URL instead of DCR.
    expect(t.db.query("SELECT kind FROM oauth_clients").all()).toEqual([]);

    const page = await browser.newPage();
    const params = await signInAndAllow(page, authorize, "Doc Flow Assistant", callback);
    await page.close();
    await transport.finishAuth(params);
    expect(fetchedDocuments).toBeGreaterThan(0);
    expect(t.db.query("SELECT client_id, kind FROM oauth_clients").all()).toEqual([{ client_id: documentUrl, kind: "metadata_document" }]);

    expect(await askAboutTheOffsite(new URL(`${url}/mcp`), provider, "cimd-flow")).toContain("Lisbon");
    const [, body] = provider.saved!.access_token.split(".");
    expect(JSON.parse(Buffer.from(body!, "base64url").toString()).client_id).toBe(documentUrl);
  });
});
