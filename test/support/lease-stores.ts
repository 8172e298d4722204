// The two lease stores a suite of work under leases runs over (D33: one suite, two stores): the
// embedded one (claimants of one SQLite) and the shared one (connections to one PostgreSQL), each
// node's leases by a clock the test moves.
import { Database } from "bun:sqlite";
import { type Leases, leaseMigrations, SqliteLeases } from "../../src/jobs/leases";
import { PostgresLeases } from "../../src/jobs/leases-postgres";
import { migrate } from "../../src/store/migrations";
import { sharedDatabase } from "./shared-database";

export interface LeaseStore {
  /** A node's leases on the one database, by `clock`. */
  leases(clock: { t: number }): Leases;
  close(): Promise<void>;
}

/** Each lease store by the name its suite takes, opened when the suite starts. */
export const LEASE_STORES: ReadonlyArray<readonly [string, () => Promise<LeaseStore>]> = [
  [
    "embedded leases (SQLite)",
    async () => {
      const db = new Database(":memory:");
      migrate(db, leaseMigrations);
      return { leases: (clock) => new SqliteLeases(db, () => clock.t), close: async () => db.close() };
    },
  ],
  [
    "shared leases (PostgreSQL)",
    async () => {
      const shared = await sharedDatabase();
      return { leases: (clock) => new PostgresLeases(shared.client(), () => clock.t), close: () => shared.drop() };
    },
  ],
];
