// A new data folder whose database is already migrated. Migrating costs 20-25 ms of CPU a
// database (each migration a transaction, the schema read again after each) and file syncs
// beside: the unit suite made about 200, 4 s of its CPU. Each list of migrations is applied once
// per test process, to a template, and its file copied into each new folder: the same file a
// first start makes (the migrations insert no random value), each test's its own.
import type { Database } from "bun:sqlite";
import { copyFileSync, existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MIGRATIONS } from "../../src/migrations";
import { DATABASE_FILE, openDatabase } from "../../src/store/database";
import type { Migration } from "../../src/store/migrations";

/** The template folder of each list of migrations (their ids, in order). */
const templates = new Map<string, string>();

/** A new folder (under the run's temporary folder) holding a database that `migrations` built. */
export function migratedDataDir(migrations: readonly Migration[] = MIGRATIONS, prefix = "corpus-test-"): string {
  const key = migrations.map((m) => m.id).join(" ");
  let template = templates.get(key);
  // Made again if a test took the run's temporary files from under it.
  if (!template || !existsSync(join(template, DATABASE_FILE))) {
    template = mkdtempSync(join(tmpdir(), "corpus-migrated-"));
    openDatabase(template, [...migrations]).close();
    templates.set(key, template);
  }
  const dir = mkdtempSync(join(tmpdir(), prefix));
  copyFileSync(join(template, DATABASE_FILE), join(dir, DATABASE_FILE));
  return dir;
}

/** `openDatabase` on a new folder, as a first start opens it. */
export const migratedDatabase = (migrations: Migration[]): Database => openDatabase(migratedDataDir(migrations), migrations);
