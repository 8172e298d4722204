// An operator's command on the data folder (`corpus token`, `corpus user`): it works on the
// folder the server uses. Only a command that adds something (a token, a person) may make a
// folder that is not there, as a first step before `corpus serve`; what it made (the folder, the
// folders above it, the master key file beside it) is removed if it fails, so an unreachable
// PostgreSQL (CORPUS_DATABASE_URL) or a refused value leaves nothing behind. A command with
// nothing to read in a new folder (revoke, list, passwd, remove) is refused instead of making one.
import { rmSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Config } from "../config";
import { masterKeyPath } from "../crypto/master-key";
import { DataFolderRefused, exists } from "./data-dir";

/** Runs `command` (named `name` in the refusal) on `config`'s data folder; `makes`: it may make a missing one. */
export async function onDataFolder<T>(
  config: Pick<Config, "CORPUS_DATA_DIR" | "CORPUS_MASTER_KEY" | "CORPUS_MASTER_KEY_FILE">,
  name: string,
  makes: boolean,
  command: () => Promise<T>,
): Promise<T> {
  const folder = resolve(config.CORPUS_DATA_DIR);
  if (exists(folder)) return await command();
  if (!makes)
    throw new DataFolderRefused(
      `no data folder at ${folder}: corpus ${name} reads and writes the server's data folder; name that folder with --data-dir or CORPUS_DATA_DIR`,
    );
  let top = folder;
  while (!exists(dirname(top))) top = dirname(top);
  const keyFile = config.CORPUS_MASTER_KEY ? undefined : masterKeyPath({ dataDir: folder, file: config.CORPUS_MASTER_KEY_FILE });
  const keyMade = keyFile !== undefined && !exists(keyFile);
  try {
    return await command();
  } catch (error) {
    rmSync(top, { recursive: true, force: true });
    if (keyMade) rmSync(keyFile, { force: true });
    throw error;
  }
}
