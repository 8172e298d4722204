// This server's token signing key (D4): an Ed25519 key pair generated on first start, kept in
// DATA_DIR/signing-key.json (mode 0600) with the private half sealed by the master key.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { DecryptError, openText, seal } from "../crypto/aead";

export const SIGNING_KEY_FILE = "signing-key.json";
export const SIGNING_ALG = "EdDSA";
const AAD = "corpus/signing-key";

export interface SigningKey {
  kid: string;
  privateKey: CryptoKey;
  publicJwk: JWK;
}

interface StoredKey {
  kid: string;
  alg: string;
  public_jwk: JWK;
  sealed_private_jwk: string;
}

export async function loadSigningKey(dataDir: string, masterKey: Buffer): Promise<SigningKey> {
  const path = join(dataDir, SIGNING_KEY_FILE);
  if (!existsSync(path)) {
    const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { crv: "Ed25519", extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    const stored: StoredKey = {
      kid,
      alg: SIGNING_ALG,
      public_jwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: "sig" },
      sealed_private_jwk: seal(masterKey, JSON.stringify(await exportJWK(privateKey)), AAD).toString("base64"),
    };
    writeFileSync(path, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  }
  const stored = JSON.parse(readFileSync(path, "utf8")) as StoredKey;
  const privateJwk = JSON.parse(openText(masterKey, Buffer.from(stored.sealed_private_jwk, "base64"), AAD)) as JWK;
  const privateKey = (await importJWK(privateJwk, SIGNING_ALG)) as CryptoKey;
  return { kid: stored.kid, privateKey, publicJwk: stored.public_jwk };
}

/** Whether `masterKey` opens the private half kept in a signing-key.json's text (how `corpus restore` checks a key first). */
export function opensSigningKey(text: string, masterKey: Buffer): boolean {
  const stored = JSON.parse(text) as StoredKey;
  try {
    openText(masterKey, Buffer.from(stored.sealed_private_jwk, "base64"), AAD);
    return true;
  } catch (error) {
    if (error instanceof DecryptError) return false;
    throw error;
  }
}
