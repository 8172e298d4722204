import type { Database } from "bun:sqlite";
import type { HealthCheck } from "../health/checks";
import type { BackgroundGuard } from "../jobs/guard";
import type { DiskSpace } from "./disk-space";

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

/** D29: unhealthy while free space is below its floor or background work cannot write. */
export const storageCheck =
  (disk: DiskSpace, guard: BackgroundGuard): HealthCheck =>
  () => {
    const low = disk.lowReason();
    if (low) return { healthy: false, reason: low };
    const failing = guard.storageFailing().length;
    if (failing)
      return {
        healthy: false,
        reason: `storage full: ${failing} background job${failing === 1 ? "" : "s"} cannot write; they resume by themselves once space is freed`,
      };
    return { healthy: true };
  };
