// Sign-in at an upstream OpenID Connect provider (issue 17; D27): when CORPUS_OIDC_ISSUER is
// set, the built-in authorization server sends the browser there instead of showing its own
// sign-in form. Authorization code with PKCE S256, `state` bound to the browser by a cookie,
// `nonce` in the ID token; the provider found by discovery (`<issuer>/.well-known/openid-configuration`,
// its `issuer` equal to the configured one), and the ID token verified with jose against the
// provider's JWKS: signature (asymmetric algorithms only), iss, aud (and azp), exp, iat, nonce.
// The person's `sub`, namespaced by the issuer, becomes the corpus user; consent and tokens
// stay corpus's own.
import { createHash, randomBytes } from "node:crypto";
import { createRemoteJWKSet, type JWTPayload, jwtVerify } from "jose";
import { SAFE_SUBJECT } from "../auth/subjects";

export const UPSTREAM_CALLBACK_PATH = "/oauth/oidc/callback";
/** The cookie binding a pending sign-in to the browser that started it (login CSRF). */
export const UPSTREAM_COOKIE = "corpus_oidc";
/** How long a person has at the provider before the sign-in must start again. */
export const PENDING_TTL_SECONDS = 600;
/** Most sign-ins waiting at once: past it the oldest is forgotten (nothing grows without bound). */
export const MAX_PENDING = 10_000;
/**
 * Most sign-ins one client address (an IPv6 /64) has waiting: past it that address's oldest
 * is forgotten, so a flood of anonymous page views from one address forgets only its own.
 */
export const MAX_PENDING_PER_ADDRESS = 10;
const DISCOVERY_TTL_MS = 3_600_000;
const HTTP_TIMEOUT_MS = 10_000;
const MAX_ANSWER_BYTES = 256 * 1024;
/** ID token signatures accepted: the provider's keys only, never `none` nor a MAC keyed with the client secret. */
const ASYMMETRIC = new Set(["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"]);
/** Seconds of clock difference allowed with the provider on exp and iat. */
export const CLOCK_TOLERANCE_SECONDS = 60;

/** A failure a person may be told about (never a secret, never a stack). */
export class UpstreamError extends Error {}

export interface UpstreamSettings {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** This server's callback, registered at the provider. */
  redirectUri: string;
}

interface ProviderMetadata {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  token_endpoint_auth_methods_supported?: string[];
  id_token_signing_alg_values_supported?: string[];
  code_challenge_methods_supported?: string[];
  authorization_response_iss_parameter_supported?: boolean;
}

interface Pending {
  bindingHash: string;
  nonce: string;
  verifier: string;
  returnTo: string;
  expiresAt: number;
  /** The client address that started it (a limit key). */
  address: string;
}

export interface UpstreamIdentity {
  /** The corpus user: the provider's `sub` namespaced by its issuer (upstreamUserId). */
  user: string;
  subject: string;
  name: string | null;
}

/** SHA-256 of `text` in base64url: a PKCE S256 challenge (RFC 7636), or a secret kept as its hash. */
export const sha256 = (text: string) => createHash("sha256").update(text).digest("base64url");
/** 32 random bytes in base64url: a state, nonce or PKCE verifier. */
export const randomToken = () => randomBytes(32).toString("base64url");

/**
 * The corpus user id of a provider's subject: `oidc-<first 8 hex digits of SHA-256(issuer)>-<sub>`,
 * so two providers (or two realms of one) never share a user, and no upstream subject is ever
 * a password account's name. A `sub` with characters a user id cannot hold, or too long,
 * becomes `oidc-<tag>-h<first 32 hex digits of SHA-256(sub)>`.
 */
export function upstreamUserId(issuer: string, sub: string): string {
  const tag = createHash("sha256").update(issuer).digest("hex").slice(0, 8);
  const plain = `oidc-${tag}-${sub}`;
  if (SAFE_SUBJECT.test(plain)) return plain;
  return `oidc-${tag}-h${createHash("sha256").update(sub).digest("hex").slice(0, 32)}`;
}

/** The body as text, read no further than MAX_ANSWER_BYTES. */
async function boundedText(response: Response, what: string): Promise<string> {
  const tooLarge = () => new UpstreamError(`the identity provider's ${what} is too large`);
  if (Number(response.headers.get("content-length") ?? 0) > MAX_ANSWER_BYTES) throw tooLarge();
  if (!response.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_ANSWER_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function readJson(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await boundedText(response, what);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UpstreamError(`the identity provider's ${what} is not JSON`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UpstreamError(`the identity provider's ${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

const isUrl = (v: unknown): v is string => {
  if (typeof v !== "string") return false;
  try {
    const u = new URL(v);
    return u.protocol === "https:" || u.protocol === "http:";
  } catch {
    return false;
  }
};

export class UpstreamOidc {
  private metadata?: { value: ProviderMetadata; fetchedAt: number };
  private jwks?: { uri: string; set: ReturnType<typeof createRemoteJWKSet> };
  private readonly pending = new Map<string, Pending>();
  /** The keys of `pending` by the address that started them, oldest first. */
  private readonly pendingByAddress = new Map<string, Set<string>>();

  constructor(
    readonly settings: UpstreamSettings,
    private readonly now: () => number = Date.now,
  ) {}

  get issuer(): string {
    return this.settings.issuer;
  }

  /** The provider's metadata, by discovery; kept an hour. */
  async discover(): Promise<ProviderMetadata> {
    if (this.metadata && this.metadata.fetchedAt + DISCOVERY_TTL_MS > this.now()) return this.metadata.value;
    const url = `${this.settings.issuer.replace(/\/+$/, "")}/.well-known/openid-configuration`;
    let response: Response;
    try {
      response = await fetch(url, {
        signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
        redirect: "error",
        headers: { accept: "application/json" },
      });
    } catch {
      throw new UpstreamError("the identity provider could not be reached");
    }
    if (response.status !== 200) throw new UpstreamError(`the identity provider's discovery document answered ${response.status}`);
    const doc = await readJson(response, "discovery document");
    // OpenID Connect Discovery 1.0 section 4.3: the issuer must be exactly the configured one.
    if (doc.issuer !== this.settings.issuer)
      throw new UpstreamError("the identity provider's discovery document names another issuer than CORPUS_OIDC_ISSUER");
    for (const name of ["authorization_endpoint", "token_endpoint", "jwks_uri"] as const)
      if (!isUrl(doc[name])) throw new UpstreamError(`the identity provider's discovery document has no ${name}`);
    const methods = doc.code_challenge_methods_supported;
    if (Array.isArray(methods) && !methods.includes("S256")) throw new UpstreamError("the identity provider does not support PKCE S256");
    const value = doc as unknown as ProviderMetadata;
    this.metadata = { value, fetchedAt: this.now() };
    if (this.jwks?.uri !== value.jwks_uri) {
      this.jwks = {
        uri: value.jwks_uri,
        set: createRemoteJWKSet(new URL(value.jwks_uri), { timeoutDuration: HTTP_TIMEOUT_MS, cacheMaxAge: DISCOVERY_TTL_MS }),
      };
    }
    return value;
  }

  /**
   * Starts a sign-in: answers the provider's authorization URL and the value of the cookie
   * that binds it to this browser. `returnTo` is where the browser goes once signed in;
   * `address` the client's (a limit key), whose own oldest sign-in goes past its share.
   */
  async begin(returnTo: string, address: string): Promise<{ url: string; binding: string }> {
    const meta = await this.discover();
    const state = randomToken();
    const nonce = randomToken();
    const verifier = randomToken();
    const binding = randomToken();
    this.forgetExpired();
    const mine = this.pendingByAddress.get(address);
    while (mine && mine.size >= MAX_PENDING_PER_ADDRESS) this.forget(mine.values().next().value!);
    while (this.pending.size >= MAX_PENDING) this.forget(this.pending.keys().next().value!);
    const key = sha256(state);
    this.pending.set(key, {
      bindingHash: sha256(binding),
      nonce,
      verifier,
      returnTo,
      expiresAt: this.now() + PENDING_TTL_SECONDS * 1000,
      address,
    });
    const keys = this.pendingByAddress.get(address) ?? new Set<string>();
    this.pendingByAddress.set(address, keys.add(key));
    const url = new URL(meta.authorization_endpoint);
    const params = {
      response_type: "code",
      client_id: this.settings.clientId,
      redirect_uri: this.settings.redirectUri,
      scope: "openid profile",
      state,
      nonce,
      code_challenge: createHash("sha256").update(verifier).digest("base64url"),
      code_challenge_method: "S256",
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { url: url.href, binding };
  }

  private forgetExpired(): void {
    const at = this.now();
    // Inserted in time order with one lifetime: the expired ones are at the front.
    for (const [key, p] of this.pending) {
      if (p.expiresAt > at) break;
      this.forget(key);
    }
  }

  /** Forgets a pending sign-in, and its place in its address's list. */
  private forget(key: string): void {
    const p = this.pending.get(key);
    if (!p) return;
    this.pending.delete(key);
    const keys = this.pendingByAddress.get(p.address);
    keys?.delete(key);
    if (keys?.size === 0) this.pendingByAddress.delete(p.address);
  }

  /** Sign-ins waiting at the provider (for tests and health). */
  pendingCount(): number {
    this.forgetExpired();
    return this.pending.size;
  }

  /**
   * The provider's answer at the callback: checks state against the browser's cookie (used
   * once), exchanges the code with the PKCE verifier, verifies the ID token. Answers who signed
   * in and where to go next.
   */
  async finish(params: URLSearchParams, binding: string | undefined): Promise<UpstreamIdentity & { returnTo: string }> {
    const state = params.get("state");
    if (!state) throw new UpstreamError("the identity provider's answer has no state");
    const key = sha256(state);
    const pending = this.pending.get(key);
    if (!pending || pending.expiresAt <= this.now())
      throw new UpstreamError("this sign-in is unknown or has expired; start again from the application");
    if (!binding || sha256(binding) !== pending.bindingHash)
      throw new UpstreamError("this sign-in was started in another browser; start again from the application");
    this.forget(key);
    const meta = await this.discover();
    // RFC 9207: an answer naming another issuer is a mix-up.
    const iss = params.get("iss");
    if ((iss !== null || meta.authorization_response_iss_parameter_supported) && iss !== this.settings.issuer)
      throw new UpstreamError("the answer names another issuer than the identity provider");
    const error = params.get("error");
    if (error) throw new UpstreamError(`the identity provider refused the sign-in (${error.slice(0, 100)})`);
    const code = params.get("code");
    if (!code) throw new UpstreamError("the identity provider's answer has no code");
    const idToken = await this.exchange(meta, code, pending.verifier);
    return { ...(await this.verifyIdToken(meta, idToken, pending.nonce)), returnTo: pending.returnTo };
  }

  private async exchange(meta: ProviderMetadata, code: string, verifier: string): Promise<string> {
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: this.settings.redirectUri,
      code_verifier: verifier,
    });
    const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded", accept: "application/json" };
    const methods = meta.token_endpoint_auth_methods_supported ?? ["client_secret_basic"];
    if (methods.includes("client_secret_basic")) {
      // RFC 6749 section 2.3.1: each part form-encoded before Basic.
      const enc = (s: string) => encodeURIComponent(s).replace(/%20/g, "+");
      headers.authorization = `Basic ${Buffer.from(`${enc(this.settings.clientId)}:${enc(this.settings.clientSecret)}`).toString("base64")}`;
    } else if (methods.includes("client_secret_post")) {
      form.set("client_id", this.settings.clientId);
      form.set("client_secret", this.settings.clientSecret);
    } else throw new UpstreamError("the identity provider takes neither client_secret_basic nor client_secret_post");
    let response: Response;
    try {
      response = await fetch(meta.token_endpoint, {
        method: "POST",
        headers,
        body: form.toString(),
        redirect: "error",
        signal: AbortSignal.timeout(HTTP_TIMEOUT_MS),
      });
    } catch {
      throw new UpstreamError("the identity provider's token endpoint could not be reached");
    }
    const body = await readJson(response, "token answer");
    if (response.status !== 200) {
      const e = typeof body.error === "string" ? body.error.slice(0, 100) : String(response.status);
      throw new UpstreamError(`the identity provider refused the code (${e})`);
    }
    if (typeof body.id_token !== "string") throw new UpstreamError("the identity provider's token answer has no id_token");
    return body.id_token;
  }

  private async verifyIdToken(meta: ProviderMetadata, idToken: string, nonce: string): Promise<UpstreamIdentity> {
    const offered = meta.id_token_signing_alg_values_supported ?? ["RS256"];
    const algorithms = offered.filter((a) => ASYMMETRIC.has(a));
    if (algorithms.length === 0) throw new UpstreamError("the identity provider signs ID tokens with no algorithm corpus accepts");
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(idToken, this.jwks!.set, {
        issuer: this.settings.issuer,
        audience: this.settings.clientId,
        algorithms,
        currentDate: new Date(this.now()),
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ["sub", "iat", "exp"],
      }));
    } catch (error) {
      const code = (error as { code?: string }).code;
      const why =
        code === "ERR_JWT_EXPIRED"
          ? "it has expired"
          : code === "ERR_JWT_CLAIM_VALIDATION_FAILED"
            ? `its ${(error as { claim?: string }).claim ?? "claims"} claim is not right`
            : code === "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" || code === "ERR_JWKS_NO_MATCHING_KEY"
              ? "its signature is not the provider's"
              : code === "ERR_JOSE_ALG_NOT_ALLOWED"
                ? "its algorithm is not allowed"
                : "it could not be verified";
      throw new UpstreamError(`the identity provider's ID token was refused: ${why}`);
    }
    // OpenID Connect Core 3.1.3.7: several audiences need azp, and azp must be this client.
    const aud = payload.aud;
    if (
      (Array.isArray(aud) && aud.length > 1 && payload.azp === undefined) ||
      (payload.azp !== undefined && payload.azp !== this.settings.clientId)
    )
      throw new UpstreamError("the identity provider's ID token was refused: its azp claim is not right");
    if (typeof payload.nonce !== "string" || payload.nonce !== nonce)
      throw new UpstreamError("the identity provider's ID token was refused: its nonce claim is not right");
    const sub = payload.sub!;
    if (sub.length === 0 || sub.length > 255)
      throw new UpstreamError("the identity provider's ID token was refused: its sub claim is not right");
    const named = [payload.preferred_username, payload.email, payload.name].find((v): v is string => typeof v === "string" && v.length > 0);
    return { user: upstreamUserId(this.settings.issuer, sub), subject: sub, name: named ? named.slice(0, 100) : null };
  }
}
