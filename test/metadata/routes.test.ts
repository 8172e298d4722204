import { describe, expect, test } from "bun:test";
import { req, testApp } from "../helpers";

const SCOPES = ["corpus:read", "corpus:search", "connectors:read", "connectors:write"];

describe("OAuth metadata documents (second document parts 2, 4, 5; D4)", () => {
  test("protected-resource metadata from the defaults", async () => {
    const { app } = await testApp();
    const r = await app.handle(req("/.well-known/oauth-protected-resource"));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      resource: "http://127.0.0.1:8080",
      authorization_servers: ["http://127.0.0.1:8080"],
      scopes_supported: SCOPES,
      resource_documentation: "http://127.0.0.1:8080/openapi",
      bearer_methods_supported: ["header"],
    });
  });

  test("the protected-resource document also at the MCP endpoint's path-suffixed address (it was 404), without offline_access", async () => {
    const { app } = await testApp({ CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com", CORPUS_ALLOWED_HOSTS: "corpus.example.com" });
    const root = await app.handle(req("/.well-known/oauth-protected-resource"));
    const suffixed = await app.handle(req("/.well-known/oauth-protected-resource/mcp"));
    expect(suffixed.status).toBe(200);
    expect(suffixed.headers.get("content-type")).toContain("application/json");
    const doc = (await suffixed.json()) as { scopes_supported: string[] };
    expect(doc).toEqual((await root.json()) as typeof doc);
    expect(doc.scopes_supported).toEqual(SCOPES);
    expect(doc.scopes_supported).not.toContain("offline_access");
  });

  test("both documents from the CORPUS_OAUTH_* variables", async () => {
    const { app } = await testApp({
      CORPUS_OAUTH_RESOURCE_URL: "https://corpus.example.com",
      CORPUS_OAUTH_ISSUER: "https://id.example.com",
      CORPUS_OAUTH_AUTHORIZATION_ENDPOINT: "https://id.example.com/authorize",
      CORPUS_OAUTH_TOKEN_ENDPOINT: "https://id.example.com/token",
      CORPUS_OAUTH_JWKS_URI: "https://id.example.com/jwks",
    });
    const pr = (await (await app.handle(req("/.well-known/oauth-protected-resource"))).json()) as Record<string, unknown>;
    expect(pr.resource).toBe("https://corpus.example.com");
    expect(pr.authorization_servers).toEqual(["https://id.example.com"]);
    const r = await app.handle(req("/.well-known/oauth-authorization-server"));
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({
      issuer: "https://id.example.com",
      authorization_endpoint: "https://id.example.com/authorize",
      token_endpoint: "https://id.example.com/token",
      jwks_uri: "https://id.example.com/jwks",
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["client_secret_basic"],
      scopes_supported: SCOPES,
    });
  });

  test("a file:// JWKS is not handed to clients; they get this server's key set", async () => {
    const { app } = await testApp({
      CORPUS_OAUTH_AUTHORIZATION_ENDPOINT: "https://id.example.com/authorize",
      CORPUS_OAUTH_TOKEN_ENDPOINT: "https://id.example.com/token",
      CORPUS_OAUTH_JWKS_URI: "file:///etc/corpus/jwks.json",
    });
    const doc = (await (await app.handle(req("/.well-known/oauth-authorization-server"))).json()) as Record<string, unknown>;
    expect(doc.jwks_uri).toBe("http://127.0.0.1:8080/.well-known/jwks.json");
  });

  test("incomplete configuration is 500 with a body naming what is missing", async () => {
    const { app } = await testApp({ CORPUS_OAUTH_TOKEN_ENDPOINT: "https://id.example.com/token" });
    const r = await app.handle(req("/.well-known/oauth-authorization-server"));
    expect(r.status).toBe(500);
    expect(await r.json()).toEqual({
      type: "server_error",
      message: "OAuth configuration error: CORPUS_OAUTH_AUTHORIZATION_ENDPOINT is not set",
    });
    expect(r.headers.get("x-frame-options")).toBe("DENY");
  });
});
