import type { Database } from "bun:sqlite";
import type { HealthCheck } from "../health/checks";

/** Healthy while the database answers a read. */
export const databaseCheck =
  (db: Database): HealthCheck =>
  () => {
    try {
      db.query("SELECT 1").get();
      return { healthy: true };
    } catch {
      return { healthy: false, reason: "database unavailable" };
    }
  };
