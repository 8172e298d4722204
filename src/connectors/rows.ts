// Users' connectors as stored (D20): one row each, the config sealed with the user's data key,
// since it holds passwords and database URLs; and the OAuth grant of a connector that signs in
// with one (issue 38), sealed the same way, gone with its connector. Only this file reads or
// writes the tables.
import type { Database } from "bun:sqlite";
import { OPERATOR_OWNER } from "../auth/subjects";
import type { UserKeys } from "../crypto/user-keys";
import type { Migration } from "../store/migrations";
import type { Definition } from "./definition";
import type { ConnectorKind } from "./kinds";

export const connectorRowMigrations: Migration[] = [
  {
    id: "connectors-002-registry",
    up(db) {
      db.exec(`CREATE TABLE connectors (
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        kind TEXT NOT NULL,
        label TEXT NOT NULL,
        config BLOB NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_id, id)
      )`);
    },
  },
  {
    id: "connectors-003-grants",
    up(db) {
      // Written by the grant's callback, not by the config a user sends: no request can set it.
      db.exec(`CREATE TABLE connector_grants (
        user_id TEXT NOT NULL,
        id TEXT NOT NULL,
        sealed BLOB NOT NULL,
        PRIMARY KEY (user_id, id)
      )`);
    },
  },
];

const sealContext = (id: string) => `connector/${id}`;
const grantContext = (id: string) => `connector-grant/${id}`;

export class ConnectorRows {
  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
  ) {}

  /** `user`'s connectors, oldest first, their configs opened. */
  of(user: string): Definition[] {
    return this.db
      .query<{ id: string; kind: ConnectorKind; label: string; config: Uint8Array; created_at: string }, [string]>(
        "SELECT id, kind, label, config, created_at FROM connectors WHERE user_id = ? ORDER BY created_at, id",
      )
      .all(user)
      .map((r) => ({
        owner: user,
        id: r.id,
        kind: r.kind,
        label: r.label,
        created_at: r.created_at,
        config: JSON.parse(this.keys.openFor(user, r.config, sealContext(r.id)).toString("utf8")),
      }));
  }

  count(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connectors WHERE user_id = ?").get(user)!.n;
  }

  /** `user`'s connector rows and grants (a deletion asks that none is left). */
  stored(user: string): number {
    return (
      this.count(user) + this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_grants WHERE user_id = ?").get(user)!.n
    );
  }

  insert(d: Definition & { created_at: string }): void {
    this.db
      .query("INSERT INTO connectors (user_id, id, kind, label, config, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(d.owner, d.id, d.kind, d.label, this.keys.sealFor(d.owner, JSON.stringify(d.config), sealContext(d.id)), d.created_at);
  }

  /** False when the row is gone (removed meanwhile). */
  update(d: Definition): boolean {
    return (
      this.db
        .query("UPDATE connectors SET label = ?, config = ? WHERE user_id = ? AND id = ?")
        .run(d.label, this.keys.sealFor(d.owner, JSON.stringify(d.config), sealContext(d.id)), d.owner, d.id).changes > 0
    );
  }

  delete(user: string, id: string): void {
    this.db.query("DELETE FROM connectors WHERE user_id = ? AND id = ?").run(user, id);
    this.db.query("DELETE FROM connector_grants WHERE user_id = ? AND id = ?").run(user, id);
  }

  /** The OAuth grant kept for `user`'s connector `id` (its JSON), opened; undefined when there is none. */
  grant(user: string, id: string): unknown {
    const row = this.db
      .query<{ sealed: Uint8Array }, [string, string]>("SELECT sealed FROM connector_grants WHERE user_id = ? AND id = ?")
      .get(user, id);
    return row ? JSON.parse(this.keys.openFor(user, row.sealed, grantContext(id)).toString("utf8")) : undefined;
  }

  /**
   * Keeps `grant` for `user`'s connector `id`, sealed; false when the connector is gone (removed
   * meanwhile). The operator's connectors have no row (their file lists them): theirs is kept
   * under OPERATOR_OWNER, sealed with the operator's key.
   */
  setGrant(user: string, id: string, grant: unknown): boolean {
    return this.db.transaction(() => {
      if (user !== OPERATOR_OWNER && !this.db.query("SELECT 1 FROM connectors WHERE user_id = ? AND id = ?").get(user, id)) return false;
      this.db
        .query(
          "INSERT INTO connector_grants (user_id, id, sealed) VALUES (?, ?, ?) ON CONFLICT (user_id, id) DO UPDATE SET sealed = excluded.sealed",
        )
        .run(user, id, this.keys.sealFor(user, JSON.stringify(grant), grantContext(id)));
      return true;
    })();
  }

  /** Drops `user`'s grants of connectors not in `keep` (the operator's, of connectors gone from their file); how many. */
  dropGrantsExcept(user: string, keep: string[]): number {
    const ids = this.db.query<{ id: string }, [string]>("SELECT id FROM connector_grants WHERE user_id = ?").all(user);
    let dropped = 0;
    for (const { id } of ids)
      if (!keep.includes(id)) dropped += this.db.query("DELETE FROM connector_grants WHERE user_id = ? AND id = ?").run(user, id).changes;
    return dropped;
  }

  /** Owners and ids of every user's connectors of these kinds, without opening their configs. */
  idsOfKinds(kinds: ConnectorKind[]): { user_id: string; id: string }[] {
    return this.db
      .query<{ user_id: string; id: string }, string[]>(
        `SELECT user_id, id FROM connectors WHERE kind IN (${kinds.map(() => "?").join(", ")}) ORDER BY user_id, created_at`,
      )
      .all(...kinds);
  }

  /** Every user's connectors, their kinds only (the operator's metrics: no config is opened). */
  everyOne(): { user_id: string; id: string; kind: ConnectorKind }[] {
    return this.db.query<{ user_id: string; id: string; kind: ConnectorKind }, []>("SELECT user_id, id, kind FROM connectors").all();
  }

  /** The ids of `user`'s connectors (for a deletion, which drops their indexes). */
  idsOf(user: string): string[] {
    return this.db
      .query<{ id: string }, [string]>("SELECT id FROM connectors WHERE user_id = ?")
      .all(user)
      .map((r) => r.id);
  }

  /** Deletes every row of `user`; how many there were. */
  deleteUser(user: string): number {
    this.db.query("DELETE FROM connector_grants WHERE user_id = ?").run(user);
    return this.db.query("DELETE FROM connectors WHERE user_id = ?").run(user).changes;
  }
}
