// Redirect URIs by allow-list (issue 35 item 6; OAuth 2.1 section 2.3, RFC 8252 sections 7.1
// and 7.3): https anywhere, http on loopback only, a native app's private-use scheme in
// reverse-DNS form; nothing else registers, whatever a browser might do with it.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { req, testApp } from "../helpers";
import { pkce, register, signIn } from "./support";

const REFUSED = [
  "view-source:https://client.example/cb",
  "jar:https://client.example/app.jar!/cb",
  "mailto:someone@example.com",
  "javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "file:///etc/passwd",
  "blob:https://client.example/3c9d",
  "ftp://client.example/cb",
  "ws://127.0.0.1/cb",
  "http://example.com/cb",
  "http://127.0.0.1.example.com/cb",
  "foo:/cb",
  "myapp://callback",
  "https://client.example/cb#fragment",
  "https://user:secret@client.example/cb",
  "com.example.app:/cb#x",
  "/relative/cb",
];

const ALLOWED = [
  "https://client.example/cb",
  "https://client.example:8443/oauth/callback?x=1",
  "http://127.0.0.1/cb",
  "http://127.0.0.1:51000/cb",
  "http://[::1]:8080/cb",
  "http://localhost:3000/cb",
  "com.example.app:/oauth2redirect",
  "io.github.someone.tool:/cb",
];

let t: Awaited<ReturnType<typeof testApp>>;
beforeAll(async () => {
  t = await testApp();
});
afterAll(() => t.services.close());

describe("redirect URIs a client may register", () => {
  test.each(REFUSED)("%s is refused (invalid_redirect_uri)", async (uri) => {
    const r = await register(t.app, { redirect_uris: [uri], token_endpoint_auth_method: "none" });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_redirect_uri");
  });

  test("one refused URI among allowed ones refuses the registration", async () => {
    const r = await register(t.app, { redirect_uris: ["https://client.example/cb", "view-source:https://client.example/cb"] });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe("invalid_redirect_uri");
  });

  test("https, loopback http and reverse-DNS private-use schemes register", async () => {
    for (const uri of ALLOWED) {
      const r = await register(t.app, { redirect_uris: [uri], token_endpoint_auth_method: "none" });
      expect([uri, r.status]).toEqual([uri, 201]);
      expect(r.body.redirect_uris).toEqual([uri]);
    }
  });
});

describe("where the consent page says the person is sent back", () => {
  test("a web redirect by its host; a private-use scheme by the app's scheme, never the host it wrote", async () => {
    const app = await testApp();
    await app.services.accounts.add("erin", "erin's long password");
    const session = await signIn(app.app, "erin", "erin's long password");
    const consentText = async (redirectUri: string) => {
      const reg = await register(app.app, { redirect_uris: [redirectUri], token_endpoint_auth_method: "none", client_name: "Some App" });
      const query = new URLSearchParams({
        response_type: "code",
        client_id: reg.body.client_id,
        redirect_uri: redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
        scope: "corpus:search",
      });
      const page = await app.app.handle(req(`/oauth/authorize?${query}`, { headers: { cookie: session } }));
      expect(page.status).toBe(200);
      return (await page.text()).replace(/<[^>]+>/g, "");
    };
    expect(await consentText("https://client.example:8443/cb")).toContain("will be sent back to client.example:8443 with access");
    const native = await consentText("com.evil.app://accounts.google.com/cb");
    expect(native).toContain("will be sent back to the app on this device that opens com.evil.app: links");
    expect(native).not.toContain("accounts.google.com");
    await app.services.close();
  });
});
