// This server's token signing key (D4): an Ed25519 key pair generated on first start, kept in
// DATA_DIR/signing-key.json (mode 0600) with the private half sealed by the master key; with a
// shared PostgreSQL (D33), kept there instead in the same form (one row, the private half sealed
// by the master key every node holds), so a token minted on one node verifies on every other with
// nothing copied. A node whose folder has the file (a deployment from before) offers its key as
// the shared one: the first node's wins, the tokens it signed still verify.

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CryptoKey, calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import type postgres from "postgres";
import { DecryptError, openText, seal } from "../crypto/aead";
import type { PgMigration } from "../store/postgres-migrations";

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

/** A new key pair, its private half sealed by the master key, as it is kept. */
async function newStoredKey(masterKey: Buffer): Promise<StoredKey> {
  const { privateKey, publicKey } = await generateKeyPair(SIGNING_ALG, { crv: "Ed25519", extractable: true });
  const publicJwk = await exportJWK(publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    alg: SIGNING_ALG,
    public_jwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: "sig" },
    sealed_private_jwk: seal(masterKey, JSON.stringify(await exportJWK(privateKey)), AAD).toString("base64"),
  };
}

/** The key as kept, its private half opened with the master key. */
async function openStoredKey(stored: StoredKey, masterKey: Buffer): Promise<SigningKey> {
  const privateJwk = JSON.parse(openText(masterKey, Buffer.from(stored.sealed_private_jwk, "base64"), AAD)) as JWK;
  const privateKey = (await importJWK(privateJwk, SIGNING_ALG)) as CryptoKey;
  return { kid: stored.kid, privateKey, publicJwk: stored.public_jwk };
}

export async function loadSigningKey(dataDir: string, masterKey: Buffer): Promise<SigningKey> {
  const path = join(dataDir, SIGNING_KEY_FILE);
  if (!existsSync(path)) {
    writeFileSync(path, `${JSON.stringify(await newStoredKey(masterKey), null, 2)}\n`, { mode: 0o600, flag: "wx" });
  }
  return openStoredKey(JSON.parse(readFileSync(path, "utf8")) as StoredKey, masterKey);
}

export const SIGNING_KEY_TABLE = "corpus_signing_key";

export const signingKeyPgMigrations: PgMigration[] = [
  {
    id: "auth-pg-002-signing-key",
    up: (tx) =>
      tx.unsafe(`CREATE TABLE ${SIGNING_KEY_TABLE} (
        id integer PRIMARY KEY CHECK (id = 1),
        stored text NOT NULL,
        created_at bigint NOT NULL
      )`),
  },
];

/**
 * The nodes' one signing key in the shared database: the row there, or, on the first start of
 * all, this folder's file's key (a deployment from before) or a new one, kept unless another node
 * kept its own meanwhile (then that one: every node ends with one key).
 */
export async function loadSharedSigningKey(sql: postgres.Sql, dataDir: string, masterKey: Buffer): Promise<SigningKey> {
  const table = sql(SIGNING_KEY_TABLE);
  const read = async () => (await sql<{ stored: string }[]>`SELECT stored FROM ${table} WHERE id = 1`)[0]?.stored;
  let stored = await read();
  if (stored === undefined) {
    const path = join(dataDir, SIGNING_KEY_FILE);
    const offered = existsSync(path) ? readFileSync(path, "utf8") : JSON.stringify(await newStoredKey(masterKey));
    // Opened first: a file sealed under another master key is refused here, not kept for every node.
    await openStoredKey(JSON.parse(offered) as StoredKey, masterKey);
    await sql`INSERT INTO ${table} (id, stored, created_at) VALUES (1, ${offered}, ${Date.now()}) ON CONFLICT (id) DO NOTHING`;
    stored = (await read())!;
  }
  return openStoredKey(JSON.parse(stored) as StoredKey, masterKey);
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
