// The master key (D3, D30): CORPUS_MASTER_KEY, or the file CORPUS_MASTER_KEY_FILE, generated on
// first start with mode 0600. Its default lies beside the data folder, not in it, so a copy or
// backup of the folder does not carry the key that opens it. Installs that already keep
// DATA_DIR/master.key go on using it, with a warning. It wraps the per-user data keys and is
// never logged.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

/** Where the first version kept the key: inside the data folder. */
export const LEGACY_MASTER_KEY_FILE = "master.key";
export const KEY_BYTES = 32;

/** The default key file: `<data folder>.master.key`, beside the folder. */
export const defaultMasterKeyFile = (dataDir: string) => `${resolve(dataDir)}.master.key`;

export interface MasterKeySource {
  dataDir: string;
  /** CORPUS_MASTER_KEY */
  fromEnv?: string;
  /** CORPUS_MASTER_KEY_FILE */
  file?: string;
}

export interface MasterKey {
  key: Buffer;
  /** Said once at start when the key lies where a copy of the data folder takes it along. */
  warning?: string;
}

/** The file the key is read from when CORPUS_MASTER_KEY is unset. */
export function masterKeyPath(source: MasterKeySource): string {
  const legacy = join(source.dataDir, LEGACY_MASTER_KEY_FILE);
  return source.file ?? (existsSync(legacy) ? legacy : defaultMasterKeyFile(source.dataDir));
}

/** The key as the server would read it, or undefined where it would generate one (`corpus restore` must not). */
export function existingMasterKey(source: MasterKeySource): Buffer | undefined {
  if (source.fromEnv) return decodeKey(source.fromEnv, "CORPUS_MASTER_KEY");
  const path = masterKeyPath(source);
  return existsSync(path) ? decodeKey(readFileSync(path, "utf8").trim(), path) : undefined;
}

export function loadMasterKey(source: MasterKeySource): MasterKey {
  if (source.fromEnv) return { key: decodeKey(source.fromEnv, "CORPUS_MASTER_KEY") };
  const path = masterKeyPath(source);
  if (!existsSync(path)) writeFileSync(path, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  const key = decodeKey(readFileSync(path, "utf8").trim(), path);
  const inside = resolve(path).startsWith(`${resolve(source.dataDir)}/`);
  return inside
    ? { key, warning: `the master key ${path} lies inside the data folder: any copy or backup of the folder opens everything in it; move it out and set CORPUS_MASTER_KEY_FILE` }
    : { key };
}

function decodeKey(b64: string, from: string): Buffer {
  const key = Buffer.from(b64, "base64");
  if (key.length !== KEY_BYTES || key.toString("base64") !== b64) {
    throw new Error(`${from}: the master key must be ${KEY_BYTES} bytes in base64`);
  }
  return key;
}
