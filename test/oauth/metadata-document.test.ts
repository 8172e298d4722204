// Client ID Metadata Documents (MCP authorization 2025-11-25): a client_id that is an https
// URL names its own metadata. The document is fetched through the pinned, address-checked
// client of src/net: by default a client cannot point the server at its own network.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { ANY_ADDRESS } from "../../src/net/pin";
import { OAuthServer } from "../../src/oauth/service";
import { OAuthStore } from "../../src/oauth/store";
import { req, testApp } from "../helpers";
import { OPENSSL, selfSigned } from "../support/certificates";
import { consent, pkce, signIn, tokenRequest } from "./support";

const REDIRECT = "http://127.0.0.1:9999/cb";
let t: Awaited<ReturnType<typeof testApp>>;
let docs: ReturnType<typeof Bun.serve>;
let app: ReturnType<typeof createApp>;
const served: Record<string, string> = {};
let base = "";

describe.skipIf(!OPENSSL)("client ID metadata documents", () => {
  beforeAll(async () => {
    const { cert, key } = selfSigned(mkdtempSync(join(tmpdir(), "corpus-cimd-")), "client.invalid", ["DNS:client.invalid"]);
    docs = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key },
      fetch: (r) =>
        new Response(served[new URL(r.url).pathname] ?? "no", {
          status: served[new URL(r.url).pathname] ? 200 : 404,
          headers: { "content-type": "application/json" },
        }),
    });
    base = `https://client.invalid:${docs.port}`;
    t = await testApp();
    await t.services.accounts.add("alice", "alice's long password");
    // This server is told client.invalid is the loopback documents server, and may reach it (a test's own CA).
    const oauth = new OAuthServer(t.config, t.services.auth, t.services.accounts, new OAuthStore(t.db), Date.now, {
      documentPolicy: ANY_ADDRESS,
      resolve: async () => ["127.0.0.1"],
      documentCa: cert,
    });
    app = createApp({ ...t.services, oauth });
    served["/client.json"] = JSON.stringify({
      client_id: `${base}/client.json`,
      client_name: "Doc Client",
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: "none",
    });
    served["/wrong.json"] = JSON.stringify({ client_id: `${base}/other.json`, client_name: "Liar", redirect_uris: [REDIRECT] });
    served["/big.json"] = JSON.stringify({ client_id: `${base}/big.json`, client_name: "x".repeat(10_000), redirect_uris: [REDIRECT] });
  });

  afterAll(() => docs?.stop(true));

  test("the document names the client: consent shows its name, the code is redeemed with the URL as client_id", async () => {
    const session = await signIn(app, "alice", "alice's long password");
    const p = pkce();
    const clientId = `${base}/client.json`;
    const page = await (
      await app.handle(
        req(
          `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: "S256" })}`,
          { headers: { cookie: session } },
        ),
      )
    ).text();
    expect(page).toContain("Doc Client");
    const url = await consent(app, session, {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT,
      code_challenge: p.challenge,
      code_challenge_method: "S256",
      scope: "corpus:search",
    });
    const r = await tokenRequest(app, {
      grant_type: "authorization_code",
      code: url.searchParams.get("code")!,
      code_verifier: p.verifier,
      client_id: clientId,
      redirect_uri: REDIRECT,
    });
    expect(r.status).toBe(200);
    expect(r.body.access_token).toBeString();
  });

  test("a document whose client_id is not its URL, or too large, or missing, is refused", async () => {
    for (const path of ["/wrong.json", "/big.json", "/missing.json"]) {
      const r = await app.handle(
        req(
          `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: `${base}${path}`, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256" })}`,
        ),
      );
      expect(r.status).toBe(400);
      expect(r.headers.get("location")).toBeNull();
    }
  });

  test("by default a client_id URL on a private or loopback address is never fetched (SSRF)", async () => {
    let hits = 0;
    const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => (hits++, new Response("{}")) });
    try {
      for (const host of [`127.0.0.1:${probe.port}`, "10.0.0.1", "169.254.169.254", "[::1]"]) {
        const r = await t.app.handle(
          req(
            `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: `https://${host}/client.json`, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256" })}`,
          ),
        );
        expect(r.status).toBe(400);
        expect(await r.text()).toContain("could not be used");
      }
      const plain = await t.app.handle(
        req(
          `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: `http://127.0.0.1:${probe.port}/client.json`, redirect_uri: REDIRECT })}`,
        ),
      );
      expect(plain.status).toBe(400);
      expect(hits).toBe(0);
    } finally {
      probe.stop(true);
    }
  });
});
