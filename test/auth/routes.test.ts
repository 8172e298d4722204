import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { createLocalJWKSet, jwtVerify } from "jose";
import { createLogger } from "../../src/log";
import { createServices } from "../../src/services";
import { req, testApp, testConfig } from "../helpers";

describe("this server's keys (D4)", () => {
  test("GET /.well-known/jwks.json verifies the tokens it issues", async () => {
    const { app, services } = await testApp();
    const jwks = (await (await app.handle(req("/.well-known/jwks.json"))).json()) as { keys: Array<Record<string, string>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: services.auth.key.kid });
    expect(jwks.keys[0]).not.toHaveProperty("d");
    const { token } = await services.auth.issuer.issue("alice", ["corpus:read"]);
    const { payload, protectedHeader } = await jwtVerify(token, createLocalJWKSet(jwks as never), {
      issuer: "http://127.0.0.1:8080",
      audience: "http://127.0.0.1:8080",
    });
    expect(protectedHeader).toMatchObject({ alg: "EdDSA", kid: services.auth.key.kid });
    expect(payload).toMatchObject({ sub: "alice", scope: "corpus:read" });
    for (const claim of ["iat", "exp", "jti"]) expect(payload).toHaveProperty(claim);
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  test("the key pair is generated once, 0600, private half sealed; stable across restarts", async () => {
    const config = testConfig();
    const a = await createServices(
      config,
      createLogger("ERROR", () => {}),
    );
    const file = join(config.CORPUS_DATA_DIR, "signing-key.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(stored).not.toHaveProperty("private_jwk");
    expect(JSON.stringify(stored)).not.toContain('"d"');
    const { token } = await a.auth.issuer.issue("alice", ["corpus:read"]);
    await a.close();
    const b = await createServices(
      config,
      createLogger("ERROR", () => {}),
    );
    expect(b.auth.key.kid).toBe(a.auth.key.kid);
    expect((await b.auth.authenticate(`Bearer ${token}`, "corpus:read")).user).toBe("alice");
    await b.close();
  });

  test("auth health is healthy with a working key", async () => {
    const { app } = await testApp();
    expect((await app.handle(req("/api/auth/health"))).status).toBe(200);
  });
});
