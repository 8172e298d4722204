// Versioned migrations. Each room owns its tables and contributes its own migrations; the
// store applies them in order, each in its own transaction, and records what it applied.
import type { Database } from "bun:sqlite";

export interface Migration {
  /** Unique and stable, e.g. "store-001-meta"; never renamed once released. */
  id: string;
  up(db: Database): void;
}

export function appliedMigrations(db: Database): string[] {
  return db
    .query<{ id: string }, []>("SELECT id FROM schema_migrations ORDER BY seq")
    .all()
    .map((r) => r.id);
}

export function migrate(db: Database, migrations: Migration[]): string[] {
  const ids = new Set<string>();
  for (const m of migrations) {
    if (ids.has(m.id)) throw new Error(`migration ${m.id} is listed twice`);
    ids.add(m.id);
  }
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    applied_at TEXT NOT NULL
  )`);
  const done = new Set(appliedMigrations(db));
  const applied: string[] = [];
  for (const m of migrations) {
    if (done.has(m.id)) continue;
    db.transaction(() => {
      m.up(db);
      db.query("INSERT INTO schema_migrations (id, applied_at) VALUES (?, ?)").run(m.id, new Date().toISOString());
    })();
    applied.push(m.id);
  }
  return applied;
}

/** The store's own table: facts about this installation. */
export const storeMigrations: Migration[] = [
  {
    id: "store-001-meta",
    up(db) {
      db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
      db.query("INSERT INTO meta (key, value) VALUES ('created_at', ?)").run(new Date().toISOString());
    },
  },
];
