// An operator's command on the data folder (`corpus token`, `corpus user`): it works on the
// folder the server uses. Only a command that adds something (a token, a person) may make a
// folder that is not there, as a first step before `corpus serve`; what it made (the folder, the
// folders above it, what it added to a folder there without a database, the master key file
// beside it) is removed if it fails, so an unreachable PostgreSQL (CORPUS_DATABASE_URL) or a
// refused value leaves nothing behind. A command with nothing to read in a new folder (revoke,
// list, passwd, remove) is refused instead of making one, or a database in an empty one.
import { readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { Config } from "../config";
import { masterKeyPath } from "../crypto/master-key";
import { DataFolderRefused, exists } from "./data-dir";
import { DATABASE_FILE } from "./database";

/** Runs `command` (named `name` in the refusal) on `config`'s data folder; `makes`: it may make a missing one. */
export async function onDataFolder<T>(
  config: Pick<Config, "CORPUS_DATA_DIR" | "CORPUS_MASTER_KEY" | "CORPUS_MASTER_KEY_FILE" | "CORPUS_DATABASE_URL">,
  name: string,
  makes: boolean,
  command: () => Promise<T>,
): Promise<T> {
  const folder = resolve(config.CORPUS_DATA_DIR);
  const made = exists(folder);
  if (made && exists(join(folder, DATABASE_FILE))) return await command();
  // A folder without the database is no data folder yet (the Debian package and a container's
  // volume make it empty before the first `corpus user add`), unless the data read is the shared
  // database's (CORPUS_DATABASE_URL): then the command runs, what it adds removed if it fails.
  if (!makes && !(made && config.CORPUS_DATABASE_URL))
    throw new DataFolderRefused(
      made
        ? `no corpus database in ${folder}: corpus ${name} reads and writes the server's data folder; name that folder with --data-dir or CORPUS_DATA_DIR`
        : `no data folder at ${folder}: corpus ${name} reads and writes the server's data folder; name that folder with --data-dir or CORPUS_DATA_DIR`,
    );
  let top = folder;
  while (!exists(dirname(top))) top = dirname(top);
  // What the folder held before (nothing of corpus's): only what the command adds is removed.
  const before = new Set(made ? readdirSync(folder) : []);
  const keyFile = config.CORPUS_MASTER_KEY ? undefined : masterKeyPath({ dataDir: folder, file: config.CORPUS_MASTER_KEY_FILE });
  const keyMade = keyFile !== undefined && !exists(keyFile);
  try {
    return await command();
  } catch (error) {
    if (!made) rmSync(top, { recursive: true, force: true });
    else for (const entry of readdirSync(folder)) if (!before.has(entry)) rmSync(join(folder, entry), { recursive: true, force: true });
    if (keyMade) rmSync(keyFile, { force: true });
    throw error;
  }
}
