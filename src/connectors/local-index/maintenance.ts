// Work on every index at once or on a whole one: what is owed, dropping an index, forgetting
// vectors of another model, purging removed terms.
import type { Database } from "bun:sqlite";
import { connectorVectors } from "../../vectors/embedded";
import { splitPartition } from "../../vectors/sqlite";
import { removeDocs } from "./documents";

/**
 * Whether the index `owner` (e.g. "alice/mail") still owes work (D29): chunks without a vector,
 * or no record at all (a first scan that never got far, or an empty folder, cheap to scan again).
 */
export function indexOwesWork(db: Database, owner: string): boolean {
  const q = (sql: string) => db.query<{ n: number }, [string]>(sql).get(owner) !== null;
  return (
    q("SELECT 1 AS n FROM connector_chunks WHERE owner = ? AND embedded = 0 LIMIT 1") ||
    !q("SELECT 1 AS n FROM connector_docs WHERE owner = ? LIMIT 1")
  );
}

/** Chunks of every index still waiting for their vector (a scan of those only: the partial index). */
export function owedChunks(db: Database): number {
  return db
    .query<{ n: number }, []>("SELECT count(*) AS n FROM connector_chunks INDEXED BY connector_chunks_owed WHERE embedded = 0")
    .get()!.n;
}

/** Drops what removed records left in the word index's segments (bounded work; see purgeTerms). */
const MERGE_PAGES = 500;

/** Removes a whole connector's index (its owner key, e.g. "alice/mail"), its skipped sources and unfinished puts too; needs no key. */
export function dropIndex(db: Database, owner: string): number {
  const docs = db.query<{ doc: number }, [string]>("SELECT doc FROM connector_docs WHERE owner = ?").all(owner);
  removeDocs(
    db,
    docs.map((d) => d.doc),
  );
  // And the index of its vectors, if it had one (a file beside the database).
  const { owner: user, connector } = splitPartition(owner);
  connectorVectors(db).dropConnector(user, connector);
  db.query("DELETE FROM connector_skipped WHERE owner = ?").run(owner);
  db.query("DELETE FROM connector_hidden WHERE owner = ?").run(owner);
  return docs.length;
}

/**
 * Forgets every chunk vector (another embedding model made them: src/embedding/service.ts
 * adoptModel); the chunks stay, pending, and are embedded again as any pending chunk is.
 */
export function forgetChunkVectors(db: Database): number {
  connectorVectors(db).dropAll();
  return db.query("UPDATE connector_chunks SET embedded = 0 WHERE embedded = 1").run().changes;
}

/**
 * Purges the terms of removed records from the word index for good: `full` rewrites it whole
 * (a connector or a user removed), otherwise a bounded merge after a rescan removed records.
 */
export function purgeTerms(db: Database, full: boolean): void {
  if (full) db.exec("INSERT INTO connector_terms (connector_terms) VALUES ('optimize')");
  else db.exec(`INSERT INTO connector_terms (connector_terms, rank) VALUES ('merge', -${MERGE_PAGES})`);
}
