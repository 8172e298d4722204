// Client ID Metadata Documents (MCP authorization 2025-11-25): a client_id that is an https
// URL names its own metadata. The document is fetched through the pinned, address-checked
// client of src/net: by default a client cannot point the server at its own network.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../src/app";
import { beginRequest } from "../../src/http/request-context";
import { ANY_ADDRESS } from "../../src/net/pin";
import { MAX_CLIENTS, REGISTRATIONS_PER_HOUR } from "../../src/oauth/registration";
import { OAuthServer } from "../../src/oauth/service";
import { SqliteOAuthStore } from "../../src/oauth/store";
import { BASE, req, testApp } from "../helpers";
import { OPENSSL, selfSigned } from "../support/certificates";
import { consent, fillClientTable, formPost, pkce, signIn, tokenRequest } from "./support";

async function revokeRequest(app: ReturnType<typeof createApp>, body: Record<string, string>, headers: Record<string, string> = {}) {
  const r = await app.handle(formPost("/oauth/revoke", body, headers));
  return { status: r.status, body: (await r.json()) as Record<string, any>, headers: r.headers };
}

const REDIRECT = "http://127.0.0.1:9999/cb";
let t: Awaited<ReturnType<typeof testApp>>;
let docs: ReturnType<typeof Bun.serve>;
let app: ReturnType<typeof createApp>;
const served: Record<string, string> = {};
/** Requests the documents server answered, by path: every outbound fetch the server made. */
const hits = new Map<string, number>();
let base = "";
let cert = "";

/** A server of its own (its own limits and table) that may reach the documents server, and trusts its certificate unless told not to. */
async function serverWith(trustCertificate = true) {
  const own = await testApp();
  const oauth = new OAuthServer(own.config, own.services.auth, own.services.accounts, new SqliteOAuthStore(own.db), Date.now, {
    documentPolicy: ANY_ADDRESS,
    resolve: async () => ["127.0.0.1"],
    ...(trustCertificate ? { documentCa: cert } : {}),
  });
  return { ...own, app: createApp({ ...own.services, oauth }) };
}

const authorizeAs = (clientId: string) =>
  req(
    `/oauth/authorize?${new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: "S256" })}`,
  );

/** Serves a valid document at `path` (its client_id its own URL). */
function serve(path: string, name = "Doc Client"): string {
  const clientId = `${base}${path}`;
  served[path] = JSON.stringify({ client_id: clientId, client_name: name, redirect_uris: [REDIRECT], token_endpoint_auth_method: "none" });
  return clientId;
}

describe.skipIf(!OPENSSL)("client ID metadata documents", () => {
  beforeAll(async () => {
    const made = selfSigned(mkdtempSync(join(tmpdir(), "corpus-cimd-")), "client.invalid", ["DNS:client.invalid"]);
    cert = made.cert;
    docs = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert, key: made.key },
      fetch: (r) => {
        const path = new URL(r.url).pathname;
        hits.set(path, (hits.get(path) ?? 0) + 1);
        return new Response(served[path] ?? "no", { status: served[path] ? 200 : 404, headers: { "content-type": "application/json" } });
      },
    });
    base = `https://client.invalid:${docs.port}`;
    t = await testApp();
    await t.services.accounts.add("alice", "alice's long password");
    // This server is told client.invalid is the loopback documents server, and may reach it (a test's own CA).
    const oauth = new OAuthServer(t.config, t.services.auth, t.services.accounts, new SqliteOAuthStore(t.db), Date.now, {
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
        expect(await r.text()).toContain("could not be read");
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
  test("a fetch that fails says only that the document could not be read; its TLS error goes to the log", async () => {
    const own = await serverWith(false);
    try {
      const r = await own.app.handle(authorizeAs(serve("/untrusted.json")));
      expect(r.status).toBe(400);
      const html = await r.text();
      expect(html).toContain("could not be read");
      expect(html).not.toMatch(/certificate|self.signed|TLS|SSL|ECONN|status \d/i);
      const logged = own.logs.records().find((l) => l.message === "oauth request refused");
      expect(String(logged?.detail)).toMatch(/certificate|self.signed/i);
    } finally {
      await own.services.close();
    }
  });

  test("a refused document at the token and revocation endpoints is invalid_client 401 with its challenge, as every failed client authentication", async () => {
    const own = await serverWith();
    try {
      const liar = `${base}/wrong.json`;
      const basic = { authorization: `Basic ${Buffer.from(`${encodeURIComponent(liar)}:`).toString("base64")}` };
      const answers = [
        await tokenRequest(own.app, { grant_type: "refresh_token", refresh_token: "x", client_id: liar }),
        await tokenRequest(own.app, { grant_type: "refresh_token", refresh_token: "x" }, basic),
        await revokeRequest(own.app, { token: "x", client_id: liar }),
        await revokeRequest(own.app, { token: "x" }, basic),
      ];
      for (const r of answers) {
        expect([r.status, r.body.error]).toEqual([401, "invalid_client"]);
        expect(r.headers.get("www-authenticate")).toStartWith("Basic ");
      }
      // At /oauth/authorize the same document is a page (400), never a challenge.
      const page = await own.app.handle(authorizeAs(liar));
      expect(page.status).toBe(400);
      expect(page.headers.get("www-authenticate")).toBeNull();
    } finally {
      await own.services.close();
    }
  });

  test("one address makes the server fetch at most its hourly allowance of documents (429 with Retry-After)", async () => {
    const own = await serverWith();
    try {
      const paths = Array.from({ length: REGISTRATIONS_PER_HOUR + 3 }, (_, i) => `/allowance-${i}.json`);
      const statuses: number[] = [];
      for (const path of paths) statuses.push((await own.app.handle(authorizeAs(`${base}${path}`))).status);
      expect(statuses.slice(0, REGISTRATIONS_PER_HOUR).every((s) => s === 400)).toBe(true); // no such document: 404
      const refused = await own.app.handle(authorizeAs(`${base}/allowance-last.json`));
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
      expect(statuses.slice(REGISTRATIONS_PER_HOUR)).toEqual([429, 429, 429]);
      expect(paths.concat("/allowance-last.json").reduce((n, p) => n + (hits.get(p) ?? 0), 0)).toBe(REGISTRATIONS_PER_HOUR);
    } finally {
      await own.services.close();
    }
  });

  test("attack: registrations and metadata documents from one address share one hourly allowance; another address keeps its own", async () => {
    const own = await serverWith();
    const from = (r: Request, address: string) => {
      beginRequest(r, address);
      return own.app.handle(r);
    };
    const register = (address: string) =>
      from(
        new Request(`${BASE}/oauth/register`, {
          method: "POST",
          body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: "none", client_name: "App" }),
          headers: { "content-type": "application/json" },
        }),
        address,
      );
    try {
      for (let i = 0; i < REGISTRATIONS_PER_HOUR - 1; i++) expect((await register("192.0.2.77")).status).toBe(201);
      // The last of the hour's allowance: a document fetched.
      expect((await from(authorizeAs(serve("/shared-1.json")), "192.0.2.77")).status).toBe(200);
      // Past it, neither a document is fetched nor a client registered from that address.
      expect((await from(authorizeAs(serve("/shared-2.json")), "192.0.2.77")).status).toBe(429);
      expect(hits.get("/shared-2.json")).toBeUndefined();
      expect((await register("192.0.2.77")).status).toBe(429);
      // A document already kept is served from the table, not fetched again, past the allowance too.
      expect((await from(authorizeAs(`${base}/shared-1.json`), "192.0.2.77")).status).toBe(200);
      expect(hits.get("/shared-1.json")).toBe(1);
      expect((await from(authorizeAs(`${base}/shared-2.json`), "192.0.2.78")).status).toBe(200);
    } finally {
      await own.services.close();
    }
  });

  test("a document is fetched once for requests at the same time, and kept: no fetch per request", async () => {
    const own = await serverWith();
    try {
      const clientId = serve("/kept.json", "Kept Client");
      const pages = await Promise.all(Array.from({ length: 5 }, () => own.app.handle(authorizeAs(clientId))));
      expect(pages.map((p) => p.status)).toEqual([200, 200, 200, 200, 200]);
      for (let i = 0; i < 30; i++) expect((await own.app.handle(authorizeAs(clientId))).status).toBe(200);
      expect(hits.get("/kept.json")).toBe(1);
    } finally {
      await own.services.close();
    }
  });

  test("metadata-document clients count against the cap on clients: a full table fetches no new one", async () => {
    const own = await serverWith();
    try {
      const store = new SqliteOAuthStore(own.db);
      const known = serve("/known.json", "Known Client");
      expect((await own.app.handle(authorizeAs(known))).status).toBe(200);
      // Introduced within the hour: a full table drops only clients never used for longer.
      fillClientTable(store, Math.floor(Date.now() / 1000), REDIRECT);
      const r = await own.app.handle(authorizeAs(serve("/one-too-many.json")));
      expect(r.status).toBe(503);
      expect(hits.get("/one-too-many.json")).toBeUndefined();
      expect(store.countClients()).toBe(MAX_CLIENTS);
      // A client already kept is still served from the table.
      expect((await own.app.handle(authorizeAs(known))).status).toBe(200);
    } finally {
      await own.services.close();
    }
  });
});
