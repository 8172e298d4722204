// The local index the folder connectors (files, maildir) write to, on a fresh database, and the
// retrieval requests their tests ask it.
import { randomBytes } from "node:crypto";
import { indexKeysFor, indexMigrations, LocalIndex } from "../../src/connectors/local-index";
import { cryptoMigrations, UserKeys } from "../../src/crypto/user-keys";
import { openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";

/** A database with the key and index tables; `indexFor(owner)` is the index of connector `owner` of alice's. */
export function localIndexes() {
  const db = openDatabase(tempDir(), [...cryptoMigrations, ...indexMigrations]);
  const keys = new UserKeys(db, randomBytes(32));
  return { db, indexFor: (owner: string) => new LocalIndex(db, owner, indexKeysFor(keys, "alice", owner, true)) };
}

/** A retrieval request for `terms` (ten records unless told). */
export const ask = (terms: string[], extra: Partial<{ dateFrom: Date; dateTo: Date; limit: number; phrases: string[] }> = {}) => ({
  terms,
  phrases: [] as string[],
  limit: 10,
  ...extra,
});
