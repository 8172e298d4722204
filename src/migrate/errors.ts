// What `corpus migrate` says when it refuses or fails (D33): one place for the words, which the
// tests and the README quote. A refusal writes nothing to the target.
import { SERVICE_VERSION } from "../version";

/** A refusal the operator can act on: one line, exit 1. */
export class MigrateError extends Error {}

export const MIGRATE_MESSAGES = {
  noDatabase: (dir: string) => `no database in ${dir}: nothing to copy (give the folder with --data-dir or CORPUS_DATA_DIR)`,
  serviceRunning: (dir: string, pids: number[]) =>
    `corpus is running on ${dir} (process ${pids.join(", ")}): stop it first, so that the copy is the folder's last state`,
  noKey: (dir: string) =>
    `no master key for ${dir}: set CORPUS_MASTER_KEY_FILE (or CORPUS_MASTER_KEY) to the key the folder's server used, the one the nodes will use`,
  wrongKey: (dir: string) =>
    `the master key given does not open the data keys of ${dir}: give the key its server used (nothing was copied)`,
  unclosedWal: (dir: string, file: string) =>
    `the database of ${dir} was not closed by its server (${file}-wal holds writes not yet in ${file}): run corpus check on the folder once (it opens and closes the database, which moves them in), then migrate`,
  newerSchema: (unknown: string[]) =>
    `the folder was written by a newer corpus (its schema has ${unknown.join(", ")}, unknown to corpus ${SERVICE_VERSION}): migrate it with that version`,
  olderSchema: (dir: string, pending: string[]) =>
    `the folder's schema is older than this corpus's (${pending.length} migration${pending.length === 1 ? "" : "s"} to apply, first ${pending[0]}): start corpus ${SERVICE_VERSION} on ${dir} once, stop it, then migrate`,
  notEmpty: (tables: string[]) =>
    `the target database already holds corpus rows (${tables.join(", ")}): corpus migrate copies only into an empty database; create a new one (CREATE DATABASE …, CREATE EXTENSION vector) and give its URL`,
  anotherFolder: () =>
    "the target database holds a copy begun from another data folder: finish that one (run corpus migrate on its folder), or copy into a new database",
  busy: () => "another corpus migrate is copying into this database: wait for it to end",
  chunkWithoutText: (doc: number, ord: number) =>
    `record ${doc}'s chunk ${ord} has no text kept and cutting its record again gives none: let the folder's server index it again (remove and add its connector), then migrate`,
} as const;
