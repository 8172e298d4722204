// The local index the folder connectors (files, maildir) write to, on a fresh database, and the
// retrieval requests their tests ask it.
import { randomBytes } from "node:crypto";
import { EmbeddedIndex, type IndexKeys, indexKeysFor, indexMigrations, type LocalIndex } from "../../src/connectors/local-index";
import { SharedIndexes } from "../../src/connectors/local-index/shared-index";
import { PostgresIndexRows } from "../../src/connectors/local-index/store-postgres";
import type { SourceRecord } from "../../src/connectors/types";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { migratedDatabase } from "./migrated";
import { sharedDatabase } from "./shared-database";

/** A database with the key and index tables; `indexFor(owner)` is the index of connector `owner` of alice's, `keysFor(owner)` its keys. */
export function localIndexes() {
  const db = migratedDatabase([...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  const keysFor = (owner: string) => indexKeysFor(keys, "alice", owner, true);
  return { db, keysFor, indexFor: (owner: string) => new EmbeddedIndex(db, owner, keysFor(owner)) };
}

/** A retrieval request for `terms` (ten records unless told). */
export const ask = (terms: string[], extra: Partial<{ dateFrom: Date; dateTo: Date; limit: number; phrases: string[] }> = {}) => ({
  terms,
  phrases: [] as string[],
  limit: 10,
  ...extra,
});

/** A mail record of a local index's tests. */
export const mailRecord = (id: string, date: string, content: string, metadata: SourceRecord["metadata"] = {}): SourceRecord => ({
  id,
  title: id,
  content,
  source_url: "",
  date,
  type: "email",
  path: id,
  metadata,
});

/** A file record of `lines` lines ("<id> part <i>"), each a chunk for an index that cuts at new lines. */
export const linesRecord = (id: string, lines: number): SourceRecord => ({
  id,
  title: id,
  content: Array.from({ length: lines }, (_, i) => `${id} part ${i}`).join("\n"),
  source_url: "",
  date: null,
  type: "file",
  path: id,
  metadata: {},
});

/** Index keys that count the records they open (decrypt and parse). */
export function countingOpens(base: IndexKeys): { keys: IndexKeys; opened: () => number } {
  let opened = 0;
  const keys: IndexKeys = {
    ...base,
    open: (sealed, row) => {
      opened++;
      return base.open(sealed, row);
    },
  };
  return { keys, opened: () => opened };
}

/** The folder connectors' indexes of one store (D33): `indexFor(key)` the index of connector `key` ("<owner>/<id>"). */
export interface FolderIndexes {
  indexFor(key: string): LocalIndex;
  close(): Promise<void>;
}

/**
 * The two stores a folder connector's index can live in (D33), for storeSuite: the embedded
 * database, and the shared PostgreSQL (a fresh database of the test PostgreSQL), the keys alike.
 */
export function folderIndexStores(): Array<[string, () => Promise<FolderIndexes>]> {
  return [
    [
      "embedded",
      async () => {
        const { indexFor } = localIndexes();
        return { indexFor, close: async () => {} };
      },
    ],
    [
      "PostgreSQL",
      async () => {
        const db = await sharedDatabase();
        const { keysFor } = localIndexes();
        const room = new SharedIndexes(new PostgresIndexRows(db.sql));
        return { indexFor: (key) => room.open(key, keysFor(key)), close: () => db.drop() };
      },
    ],
  ];
}
