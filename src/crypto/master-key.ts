// The master key (D3): CORPUS_MASTER_KEY, or DATA_DIR/master.key generated on first start
// with mode 0600. It wraps the per-user data keys and is never logged.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const MASTER_KEY_FILE = "master.key";
export const KEY_BYTES = 32;

export function loadMasterKey(dataDir: string, fromEnv?: string): Buffer {
  if (fromEnv) return decodeKey(fromEnv, "CORPUS_MASTER_KEY");
  const path = join(dataDir, MASTER_KEY_FILE);
  if (!existsSync(path)) {
    writeFileSync(path, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600);
  return decodeKey(readFileSync(path, "utf8").trim(), path);
}

function decodeKey(b64: string, from: string): Buffer {
  const key = Buffer.from(b64, "base64");
  if (key.length !== KEY_BYTES || key.toString("base64") !== b64) {
    throw new Error(`${from}: the master key must be ${KEY_BYTES} bytes in base64`);
  }
  return key;
}
