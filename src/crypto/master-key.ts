// The master key (D3, D30): CORPUS_MASTER_KEY, or the file CORPUS_MASTER_KEY_FILE, generated on
// first start with mode 0600. Its default lies beside the data folder, not in it, so a copy or
// backup of the folder does not carry the key that opens it. Installs that already keep
// DATA_DIR/master.key go on using it, with a warning. It wraps the per-user data keys and is
// never logged.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { code, exists, octal, ownUid, unsafeFoldersAbove } from "../store/data-dir";

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

/** A key file that another user chose, could read or could swap: start-up stops. */
export class MasterKeyRefused extends Error {}

/** The file the key is read from when CORPUS_MASTER_KEY is unset. */
export function masterKeyPath(source: MasterKeySource): string {
  const legacy = join(source.dataDir, LEGACY_MASTER_KEY_FILE);
  return source.file ?? (exists(legacy) ? legacy : defaultMasterKeyFile(source.dataDir));
}

function refused(path: string, why: string, fix: string): MasterKeyRefused {
  return new MasterKeyRefused(`the master key file ${path} is refused: ${why}; ${fix}`);
}

/**
 * The key file's text, or undefined when there is none (issue 13 finding 3). Beside a data
 * folder in /tmp, another user could have put a key of their choosing there, or a link that
 * made us read (and once chmod) a file of theirs. So the file is opened without following a
 * link and must be a regular file of ours that no one else may read or write, in folders no one
 * else can change; nothing about it is ever changed here.
 */
function readKeyFile(path: string): string | undefined {
  const uid = ownUid();
  let fd: number;
  try {
    // O_NOFOLLOW: a link is refused, never followed; O_NONBLOCK: a planted FIFO cannot stall start-up.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (error) {
    if (code(error) === "ENOENT") return undefined;
    if (code(error) === "ELOOP") throw refused(path, "it is a link", "name the key file itself (CORPUS_MASTER_KEY_FILE), not a link to it");
    throw error;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw refused(path, "it is not a regular file", "remove it, or name the key file with CORPUS_MASTER_KEY_FILE");
    if (st.uid !== uid) {
      throw refused(
        path,
        `it is owned by uid ${st.uid}, not by this process (uid ${uid}): a key another user chose would open everything`,
        `if it is yours, chown it to uid ${uid}; if not, remove it and restore your own key`,
      );
    }
    if (st.mode & 0o077)
      throw refused(
        path,
        `others may read or change it (mode ${octal(st.mode)})`,
        `chmod 600 ${path}, and replace the key if others may have read it`,
      );
    const around = unsafeFoldersAbove(dirname(resolve(path)), uid);
    if (around) throw refused(path, around.why, around.fix);
    return readFileSync(fd, "utf8");
  } finally {
    closeSync(fd);
  }
}

/** The key as the server would read it, or undefined where it would generate one (`corpus restore` must not). */
export function existingMasterKey(source: MasterKeySource): Buffer | undefined {
  if (source.fromEnv) return decodeKey(source.fromEnv, "CORPUS_MASTER_KEY");
  const path = masterKeyPath(source);
  const text = readKeyFile(path);
  return text === undefined ? undefined : decodeKey(text.trim(), path);
}

export function loadMasterKey(source: MasterKeySource): MasterKey {
  if (source.fromEnv) return { key: decodeKey(source.fromEnv, "CORPUS_MASTER_KEY") };
  const path = masterKeyPath(source);
  let text = readKeyFile(path);
  if (text === undefined) {
    // O_CREAT | O_EXCL: made here, or refused if anything (a link too) appeared meanwhile.
    try {
      writeFileSync(path, `${randomBytes(KEY_BYTES).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
    } catch (error) {
      if (code(error) !== "EEXIST") throw error;
    }
    text = readKeyFile(path)!;
  }
  const key = decodeKey(text.trim(), path);
  const inside = resolve(path).startsWith(`${resolve(source.dataDir)}/`);
  return inside
    ? {
        key,
        warning: `the master key ${path} lies inside the data folder: any copy or backup of the folder opens everything in it; move it out and set CORPUS_MASTER_KEY_FILE`,
      }
    : { key };
}

function decodeKey(b64: string, from: string): Buffer {
  const key = Buffer.from(b64, "base64");
  if (key.length !== KEY_BYTES || key.toString("base64") !== b64) {
    throw new Error(`${from}: the master key must be ${KEY_BYTES} bytes in base64`);
  }
  return key;
}
