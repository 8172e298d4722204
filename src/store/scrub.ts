// What a deletion still owes once its transaction committed (D13, D29): the word index rewritten
// without the deleted entries' terms, and the WAL emptied into the database, so old page images of
// what was deleted are gone from the data folder. The debt is written in the deletion's own
// transaction (owe), paid right after it (pay), and paid at the next start when the process died
// in between.
import type { Database } from "bun:sqlite";
import type { Migration } from "./migrations";

export const scrubMigrations: Migration[] = [
  {
    id: "store-002-scrub-owed",
    up(db) {
      db.exec("CREATE TABLE scrub_owed (id INTEGER PRIMARY KEY, owed_at INTEGER NOT NULL)");
    },
  },
];

export class Scrub {
  constructor(
    private readonly db: Database,
    /** What rewrites other rooms' structures without deleted entries (the word index's purge). */
    private readonly steps: Array<() => void>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the debt; called inside the deleting transaction. */
  owe(): void {
    this.db.query("INSERT INTO scrub_owed (owed_at) VALUES (?)").run(this.now());
  }

  /** Deletions whose scrub is not done yet. */
  pending(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM scrub_owed").get()!.n;
  }

  /**
   * Pays every debt recorded so far: the steps, then a truncating checkpoint. The debt is only
   * cleared once the checkpoint emptied the WAL (a reader holding it makes the next try do it).
   * Returns whether it is all paid.
   */
  pay(): boolean {
    const last = this.db.query<{ id: number | null }, []>("SELECT max(id) AS id FROM scrub_owed").get()!.id;
    if (last === null) return true;
    for (const step of this.steps) step();
    const checkpoint = this.db.query<{ busy: number }, []>("PRAGMA wal_checkpoint(TRUNCATE)").get();
    if (checkpoint?.busy) return false;
    this.db.query("DELETE FROM scrub_owed WHERE id <= ?").run(last);
    return true;
  }
}
