// What `corpus backup` and `corpus restore` say when they refuse or fail (D30): one place for the
// words, which the tests and the README quote.
import { defaultMasterKeyFile } from "../crypto/master-key";
import { SERVICE_VERSION } from "../version";

/** A refusal or failure the operator can act on: one line, nothing left behind. */
export class BackupError extends Error {}

export const BACKUP_MESSAGES = {
  noDatabase: (dir: string) => `no database in ${dir}: nothing to back up (give the server's data folder with --data-dir)`,
  outExists: (out: string) => `${out} exists: choose another file, or pass --force to replace it`,
  outIsFolder: (out: string) => `${out} is a folder: --out names the backup file`,
  outFolderMissing: (dir: string) => `${dir} is not a folder: --out must name a file in an existing folder`,
  noBackup: (file: string) => `${file} does not exist or is not a file`,
  noSpace: (where: string) => `no space left on the file system of ${where}: nothing was written; free some space or choose another place`,
  notABackup: (file: string) => `${file} is not a complete corpus backup (truncated, or another kind of file)`,
  damaged: (file: string, what: string) => `${file} is damaged (${what}): it cannot be restored; use another backup`,
  newerSchema: (file: string, unknown: string[]) =>
    `${file} was taken by a newer corpus (its schema has ${unknown.join(", ")}, unknown to corpus ${SERVICE_VERSION}): restore it with that version or a later one`,
  targetNotEmpty: (dir: string) => `${dir} is not empty: corpus restores only into an empty or absent folder`,
  targetNotFolder: (dir: string) => `${dir} exists and is not a folder: corpus restores only into an empty or absent folder`,
  noKey: (dir: string) =>
    `no master key: a backup never holds it; set CORPUS_MASTER_KEY or CORPUS_MASTER_KEY_FILE as the server will, or put the key file at ${defaultMasterKeyFile(dir)}`,
  wrongKey: (file: string) =>
    `the master key given does not open the data of ${file}: restore with the key the server used when the backup was taken (nothing was written)`,
} as const;

/** Whether an error of the file system or of SQLite means the disk (or the quota) is full. */
export function isNoSpace(error: unknown): boolean {
  const e = error as { code?: string; errno?: number } | undefined;
  return e?.code === "ENOSPC" || e?.code === "EDQUOT" || e?.code === "SQLITE_FULL";
}
