// Each attack of the auth issue, with tokens made by jose in the test.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CryptoKey, exportJWK, generateKeyPair, type JWTHeaderParameters, SignJWT, UnsecuredJWT } from "jose";
import { AuthFailure, type AuthService } from "../../src/auth/service";
import type { Principal } from "../../src/auth/verifier";
import { createLogger } from "../../src/log";
import { createServices, type Services } from "../../src/services";
import { tempDir, testConfig } from "../helpers";
import { skewedClock } from "../support/clock";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let services: Services;
let auth: AuthService;
const ISS = "http://127.0.0.1:8080";
const AUD = "http://127.0.0.1:8080";

beforeAll(async () => {
  services = await createServices(
    testConfig(),
    createLogger("ERROR", () => {}),
  );
  auth = services.auth;
});

async function fails(header: string | null, status: number, reason: RegExp, scope: "corpus:search" = "corpus:search") {
  try {
    await auth.authenticate(header, scope);
  } catch (error) {
    expect(error).toBeInstanceOf(AuthFailure);
    const f = error as AuthFailure;
    expect(f.status).toBe(status as 401);
    expect(f.message).toMatch(reason);
    expect(f.challenge).toStartWith(`Bearer resource_metadata="${AUD}/.well-known/oauth-protected-resource"`);
    return f;
  }
  throw new Error("expected a failure");
}

const localSign = (
  claims: Record<string, unknown>,
  opts: { exp?: number | string; iat?: number; nbf?: number | string; iss?: string; aud?: string } = {},
) => {
  let jwt = new SignJWT({ scope: "corpus:search", ...claims })
    .setProtectedHeader({ alg: "EdDSA", kid: auth.key.kid })
    .setSubject("alice")
    .setIssuer(opts.iss ?? ISS)
    .setAudience(opts.aud ?? AUD)
    .setIssuedAt(opts.iat)
    .setExpirationTime(opts.exp ?? "1h")
    .setJti(crypto.randomUUID());
  if (opts.nbf !== undefined) jwt = jwt.setNotBefore(opts.nbf);
  return jwt.sign(auth.key.privateKey);
};

/** Alice's token for this server (corpus:search, one hour) signed with `key` under `header`: keys and algorithms it must refuse. */
const signedWith = (header: JWTHeaderParameters, key: CryptoKey | Uint8Array) =>
  new SignJWT({ scope: "corpus:search" })
    .setProtectedHeader(header)
    .setSubject("alice")
    .setIssuer(ISS)
    .setAudience(AUD)
    .setExpirationTime("1h")
    .sign(key);

describe("bearer token verification (D4)", () => {
  test("a token this server issued is accepted, with its user and scopes", async () => {
    const { token } = await auth.issuer.issue("alice", ["corpus:search", "corpus:read"]);
    const p = await auth.authenticate(`Bearer ${token}`, "corpus:search");
    expect(p.user).toBe("alice");
    expect([...p.scopes]).toEqual(["corpus:search", "corpus:read"]);
    expect(p.expiresAt - Math.floor(Date.now() / 1000)).toBeGreaterThan(3590);
  });

  test("no token, another scheme, or a malformed header is 401", async () => {
    await fails(null, 401, /bearer token is required/);
    await fails("Basic YWxpY2U6c2VjcmV0", 401, /bearer token is required/);
    await fails("Bearer", 401, /bearer token is required/);
    await fails("Bearer not-a-jwt", 401, /malformed/);
  });

  test("alg: none is refused", async () => {
    const unsigned = new UnsecuredJWT({ scope: "corpus:search" })
      .setSubject("alice")
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("1h")
      .encode();
    await fails(`Bearer ${unsigned}`, 401, /./);
  });

  test("key confusion: an HMAC token keyed with the public key is refused", async () => {
    const publicBytes = new TextEncoder().encode(JSON.stringify(auth.key.publicJwk));
    const hs = await signedWith({ alg: "HS256", kid: auth.key.kid }, publicBytes);
    await fails(`Bearer ${hs}`, 401, /algorithm is not allowed|invalid/);
    const rawX = Buffer.from(auth.key.publicJwk.x!, "base64url");
    const hs2 = await signedWith({ alg: "HS256", kid: auth.key.kid }, rawX);
    await fails(`Bearer ${hs2}`, 401, /./);
  });

  test("wrong issuer, wrong audience, expired, not yet valid are 401", async () => {
    await fails(`Bearer ${await localSign({}, { iss: "https://evil.example" })}`, 401, /claim iss/);
    await fails(`Bearer ${await localSign({}, { aud: "https://other.example" })}`, 401, /claim aud/);
    await fails(`Bearer ${await localSign({}, { exp: Math.floor(Date.now() / 1000) - 60 })}`, 401, /expired/);
    await fails(`Bearer ${await localSign({}, { nbf: Math.floor(Date.now() / 1000) + 600 })}`, 401, /not yet valid/);
  });

  test("a tampered payload or signature is 401", async () => {
    const { token } = await auth.issuer.issue("alice", ["corpus:search"]);
    const [h, p, s] = token.split(".") as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, "base64url").toString());
    const forged = Buffer.from(JSON.stringify({ ...claims, sub: "mallory" })).toString("base64url");
    await fails(`Bearer ${h}.${forged}.${s}`, 401, /signature is invalid/);
    const flipped = s.slice(0, 10) + (s[10] === "A" ? "B" : "A") + s.slice(11);
    await fails(`Bearer ${h}.${p}.${flipped}`, 401, /signature is invalid/);
  });

  test("a token from an unknown key is 401", async () => {
    const other = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const foreign = await signedWith({ alg: "EdDSA", kid: "someone-else" }, other.privateKey);
    await fails(`Bearer ${foreign}`, 401, /unknown key/);
    // The right kid but another key's signature.
    const spoofed = await signedWith({ alg: "EdDSA", kid: auth.key.kid }, other.privateKey);
    await fails(`Bearer ${spoofed}`, 401, /signature is invalid/);
  });

  test("a valid token without the scope is 403 insufficient_scope, naming the scope", async () => {
    const { token } = await auth.issuer.issue("alice", ["connectors:read"]);
    const f = await fails(`Bearer ${token}`, 403, /lacks the scope corpus:search/);
    expect(f.challenge).toContain('error="insufficient_scope"');
    expect(f.challenge).toContain('scope="corpus:search"');
  });

  test("a header seen before is answered at once, its scope still checked, and refused once its token has expired", async () => {
    const clock = { t: Date.now() };
    const s = await createServices(
      testConfig(),
      createLogger("ERROR", () => {}),
      () => clock.t,
    );
    try {
      const { token } = await s.auth.issuer.issue("frank", ["corpus:search"], 60);
      const header = () => ["Bearer", token].join(" "); // a new string each time, as every request's is
      expect((await s.auth.authenticate(header(), "corpus:search")).user).toBe("frank");
      const again = s.auth.authenticate(header(), "corpus:search");
      expect(again).not.toBeInstanceOf(Promise);
      expect((again as Principal).user).toBe("frank");
      expect(() => s.auth.authenticate(header(), "corpus:read")).toThrow(/lacks the scope corpus:read/);
      clock.t += 120_000;
      let failure: unknown;
      await Promise.resolve()
        .then(() => s.auth.authenticate(header(), "corpus:search"))
        .catch((error) => (failure = error));
      expect(failure).toBeInstanceOf(AuthFailure);
      expect((failure as AuthFailure).message).toMatch(/expired/);
    } finally {
      await s.close();
    }
  });

  test("revoked by jti, or by the user's not-before stamp, is 401", async () => {
    const one = await auth.issuer.issue("carol", ["corpus:search"]);
    const two = await auth.issuer.issue("carol", ["corpus:search"]);
    await auth.authenticate(`Bearer ${one.token}`, "corpus:search");
    auth.store.revokeToken(one.jti, one.expiresAt);
    await fails(`Bearer ${one.token}`, 401, /revoked/);
    await auth.authenticate(`Bearer ${two.token}`, "corpus:search");
    expect(auth.store.revokeUser("carol")).toBe(2);
    await fails(`Bearer ${two.token}`, 401, /revoked/);
    // Another user is untouched.
    const dave = await auth.issuer.issue("dave", ["corpus:search"]);
    expect((await auth.authenticate(`Bearer ${dave.token}`, "corpus:search")).user).toBe("dave");
    // Dave's tag was looked up (and remembered) above: his own stamp still takes effect.
    auth.store.revokeUser("dave");
    await fails(`Bearer ${dave.token}`, 401, /revoked/);
  });
});

describe("an external identity provider's JWKS (CORPUS_OAUTH_JWKS_URI)", () => {
  let rsa: { privateKey: CryptoKey; publicKey: CryptoKey };
  let jwksPath: string;
  let ext: Services;
  const clock = skewedClock();
  const issue = (key: CryptoKey, kid: string, claims: Record<string, unknown> = {}, iss = ISS) =>
    new SignJWT({ scope: "corpus:read", ...claims })
      .setProtectedHeader({ alg: "RS256", kid })
      .setSubject("erin")
      .setIssuer(iss)
      .setAudience(AUD)
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(key);

  beforeAll(async () => {
    rsa = await generateKeyPair("RS256");
    jwksPath = join(tempDir(), "jwks.json");
    writeFileSync(jwksPath, JSON.stringify({ keys: [{ ...(await exportJWK(rsa.publicKey)), kid: "idp-1", alg: "RS256", use: "sig" }] }));
    ext = await createServices(
      testConfig({ CORPUS_OAUTH_JWKS_URI: `file://${jwksPath}` }),
      createLogger("ERROR", () => {}),
      clock.now,
    );
  });

  test("its tokens are accepted beside this server's own", async () => {
    const p = await ext.auth.authenticate(`Bearer ${await issue(rsa.privateKey, "idp-1")}`, "corpus:read");
    expect(p.user).toBe("erin");
    const own = await ext.auth.issuer.issue("frank", ["corpus:read"]);
    expect((await ext.auth.authenticate(`Bearer ${own.token}`, "corpus:read")).user).toBe("frank");
  });

  test("a rotated key is picked up when a token names it", async () => {
    const next = await generateKeyPair("RS256");
    writeFileSync(
      jwksPath,
      JSON.stringify({
        keys: [
          { ...(await exportJWK(rsa.publicKey)), kid: "idp-1", alg: "RS256" },
          { ...(await exportJWK(next.publicKey)), kid: "idp-2", alg: "RS256" },
        ],
      }),
    );
    clock.advance(1_000); // the file is re-read at most once a second
    const p = await ext.auth.authenticate(`Bearer ${await issue(next.privateKey, "idp-2")}`, "corpus:read");
    expect(p.user).toBe("erin");
  });

  test("still: issuer and audience are checked, and HS256 is never allowed", async () => {
    try {
      await ext.auth.authenticate(`Bearer ${await issue(rsa.privateKey, "idp-1", {}, "https://other-idp.example")}`, "corpus:read");
      throw new Error("accepted");
    } catch (e) {
      expect((e as AuthFailure).status).toBe(401);
    }
    const hs = await new SignJWT({ scope: "corpus:read" })
      .setProtectedHeader({ alg: "HS256", kid: "idp-1" })
      .setSubject("erin")
      .setIssuer(ISS)
      .setAudience(AUD)
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode("x".repeat(32)));
    await expect(ext.auth.authenticate(`Bearer ${hs}`, "corpus:read")).rejects.toBeInstanceOf(AuthFailure);
  });

  test("auth health reports an unreadable JWKS", async () => {
    writeFileSync(jwksPath, "not json");
    const results = await Promise.all(ext.auth.healthChecks().map((c) => c()));
    expect(results.some((r) => !r.healthy && /JWKS/.test(r.reason ?? ""))).toBe(true);
  });
});
