// AES-256-GCM (D3). Sealed form: version byte, 12-byte nonce, ciphertext, 16-byte tag. The
// associated data binds a ciphertext to its place (a user, a table, a purpose), so a value
// copied elsewhere does not open.
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";

const VERSION = 1;
const NONCE = 12;
const TAG = 16;

export function seal(key: Uint8Array, plaintext: Uint8Array | string, aad: string): Buffer {
  const nonce = randomBytes(NONCE);
  const cipher = createCipheriv("aes-256-gcm", key, nonce);
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const body = Buffer.concat([cipher.update(typeof plaintext === "string" ? Buffer.from(plaintext, "utf8") : plaintext), cipher.final()]);
  return Buffer.concat([Buffer.of(VERSION), nonce, body, cipher.getAuthTag()]);
}

export class DecryptError extends Error {}

export function open(key: Uint8Array, sealed: Uint8Array, aad: string): Buffer {
  const buf = Buffer.from(sealed.buffer, sealed.byteOffset, sealed.byteLength);
  if (buf.length < 1 + NONCE + TAG || buf[0] !== VERSION) throw new DecryptError("not a sealed value");
  const decipher = createDecipheriv("aes-256-gcm", key, buf.subarray(1, 1 + NONCE));
  decipher.setAAD(Buffer.from(aad, "utf8"));
  decipher.setAuthTag(buf.subarray(buf.length - TAG));
  try {
    return Buffer.concat([decipher.update(buf.subarray(1 + NONCE, buf.length - TAG)), decipher.final()]);
  } catch {
    throw new DecryptError("cannot decrypt: wrong key or tampered value");
  }
}

/**
 * What tells one sealing of a value from every other: its version byte, nonce and tag (a value
 * sealed again, the same or not, has a fresh random nonce, and the tag authenticates the rest),
 * with its length; 33 bytes however long the value, for a memo to know a row is unchanged without
 * hashing the whole of it.
 */
export function sealingOf(sealed: Uint8Array): Uint8Array {
  const out = new Uint8Array(1 + NONCE + TAG + 4);
  const n = sealed.length;
  for (let i = 0; i < 1 + NONCE && i < n; i++) out[i] = sealed[i]!;
  for (let i = Math.max(0, n - TAG); i < n; i++) out[1 + NONCE + i - (n - TAG)] = sealed[i]!;
  for (let i = 0; i < 4; i++) out[1 + NONCE + TAG + i] = (n >>> (8 * i)) & 0xff;
  return out;
}

export const openText = (key: Uint8Array, sealed: Uint8Array, aad: string) => open(key, sealed, aad).toString("utf8");
