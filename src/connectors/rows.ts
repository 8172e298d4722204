// Users' connectors as stored (D20): one row each, the config sealed with the user's data key,
// since it holds passwords and database URLs; and the OAuth grant of a connector that signs in
// with one (issue 38), sealed the same way, gone with its connector. The room has two stores
// (D33): the embedded one here (connectors, connector_grants), the shared one in
// rows-postgres.ts; both keep sealed bytes only, ConnectorRows seals and opens them. Only these
// files read or write the tables.
import type { Database } from "bun:sqlite";
import { OPERATOR_OWNER } from "../auth/subjects";
import type { UserKeys } from "../crypto/user-keys";
import type { Migration } from "../store/migrations";
import { type Awaitable, andThen } from "../store/shared";
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

/** One connector row as kept: its config sealed. */
export interface ConnectorRow {
  user_id: string;
  id: string;
  kind: ConnectorKind;
  label: string;
  config: Uint8Array;
  created_at: string;
}

/** What an insert found: the row added, the id taken already, or the owner at `max` (how many they have). */
export type InsertOutcome = { added: true } | { added: false; taken: true } | { added: false; full: number };

/** The connectors' room (D33): rows and grants as sealed bytes; the embedded store answers at once, the shared one later. */
export interface ConnectorRecords {
  /** `user`'s rows, oldest first. */
  of(user: string): Awaitable<ConnectorRow[]>;
  count(user: string): Awaitable<number>;
  /** `user`'s connector rows and grants (a deletion asks that none is left). */
  rowsOf(user: string): Awaitable<number>;
  /** Adds `row` unless its id is taken or its owner has `max` already, decided with the insert (no other add between). */
  insert(row: ConnectorRow, max: number): Awaitable<InsertOutcome>;
  /** False when the row is gone (removed meanwhile). */
  update(user: string, id: string, label: string, config: Uint8Array): Awaitable<boolean>;
  /** The row and its grant. */
  delete(user: string, id: string): Awaitable<void>;
  grant(user: string, id: string): Awaitable<Uint8Array | undefined>;
  /** False when the connector is gone (the operator's have no row: theirs is always kept). */
  setGrant(user: string, id: string, sealed: Uint8Array): Awaitable<boolean>;
  dropGrantsExcept(user: string, keep: string[]): Awaitable<number>;
  idsOfKinds(kinds: ConnectorKind[]): Awaitable<{ user_id: string; id: string }[]>;
  everyOne(): Awaitable<{ user_id: string; id: string; kind: ConnectorKind }[]>;
  idsOf(user: string): Awaitable<string[]>;
  /** Deletes every row and grant of `user`; how many connectors there were. */
  deleteUser(user: string): Awaitable<number>;
}

/** The room in the embedded database: at once, inside the caller's transaction when there is one. */
export class SqliteConnectorRecords implements ConnectorRecords {
  constructor(private readonly db: Database) {}

  of(user: string): ConnectorRow[] {
    return this.db
      .query<ConnectorRow, [string]>(
        "SELECT user_id, id, kind, label, config, created_at FROM connectors WHERE user_id = ? ORDER BY created_at, id",
      )
      .all(user);
  }

  count(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connectors WHERE user_id = ?").get(user)!.n;
  }

  rowsOf(user: string): number {
    return (
      this.count(user) + this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM connector_grants WHERE user_id = ?").get(user)!.n
    );
  }

  insert(r: ConnectorRow, max: number): InsertOutcome {
    return this.db.transaction((): InsertOutcome => {
      if (this.db.query("SELECT 1 FROM connectors WHERE user_id = ? AND id = ?").get(r.user_id, r.id)) return { added: false, taken: true };
      const n = this.count(r.user_id);
      if (n >= max) return { added: false, full: n };
      this.db
        .query("INSERT INTO connectors (user_id, id, kind, label, config, created_at) VALUES (?, ?, ?, ?, ?, ?)")
        .run(r.user_id, r.id, r.kind, r.label, r.config, r.created_at);
      return { added: true };
    })();
  }

  update(user: string, id: string, label: string, config: Uint8Array): boolean {
    return (
      this.db.query("UPDATE connectors SET label = ?, config = ? WHERE user_id = ? AND id = ?").run(label, config, user, id).changes > 0
    );
  }

  delete(user: string, id: string): void {
    this.db.query("DELETE FROM connectors WHERE user_id = ? AND id = ?").run(user, id);
    this.db.query("DELETE FROM connector_grants WHERE user_id = ? AND id = ?").run(user, id);
  }

  grant(user: string, id: string): Uint8Array | undefined {
    return (
      this.db
        .query<{ sealed: Uint8Array }, [string, string]>("SELECT sealed FROM connector_grants WHERE user_id = ? AND id = ?")
        .get(user, id)?.sealed ?? undefined
    );
  }

  setGrant(user: string, id: string, sealed: Uint8Array): boolean {
    return this.db.transaction(() => {
      if (user !== OPERATOR_OWNER && !this.db.query("SELECT 1 FROM connectors WHERE user_id = ? AND id = ?").get(user, id)) return false;
      this.db
        .query(
          "INSERT INTO connector_grants (user_id, id, sealed) VALUES (?, ?, ?) ON CONFLICT (user_id, id) DO UPDATE SET sealed = excluded.sealed",
        )
        .run(user, id, sealed);
      return true;
    })();
  }

  dropGrantsExcept(user: string, keep: string[]): number {
    const ids = this.db.query<{ id: string }, [string]>("SELECT id FROM connector_grants WHERE user_id = ?").all(user);
    let dropped = 0;
    for (const { id } of ids)
      if (!keep.includes(id)) dropped += this.db.query("DELETE FROM connector_grants WHERE user_id = ? AND id = ?").run(user, id).changes;
    return dropped;
  }

  idsOfKinds(kinds: ConnectorKind[]): { user_id: string; id: string }[] {
    return this.db
      .query<{ user_id: string; id: string }, string[]>(
        `SELECT user_id, id FROM connectors WHERE kind IN (${kinds.map(() => "?").join(", ")}) ORDER BY user_id, created_at`,
      )
      .all(...kinds);
  }

  everyOne(): { user_id: string; id: string; kind: ConnectorKind }[] {
    return this.db.query<{ user_id: string; id: string; kind: ConnectorKind }, []>("SELECT user_id, id, kind FROM connectors").all();
  }

  idsOf(user: string): string[] {
    return this.db
      .query<{ id: string }, [string]>("SELECT id FROM connectors WHERE user_id = ?")
      .all(user)
      .map((r) => r.id);
  }

  deleteUser(user: string): number {
    this.db.query("DELETE FROM connector_grants WHERE user_id = ?").run(user);
    return this.db.query("DELETE FROM connectors WHERE user_id = ?").run(user).changes;
  }
}

const sealContext = (id: string) => `connector/${id}`;
const grantContext = (id: string) => `connector-grant/${id}`;

/** The room's rows sealed and opened with their owner's data key, over either store. */
export class ConnectorRows {
  constructor(
    readonly records: ConnectorRecords,
    private readonly keys: UserKeys,
  ) {}

  /** `user`'s connectors, oldest first, their configs opened. */
  of(user: string): Awaitable<Definition[]> {
    return andThen(this.records.of(user), (rows) =>
      rows.map((r) => ({
        owner: user,
        id: r.id,
        kind: r.kind,
        label: r.label,
        created_at: r.created_at,
        config: JSON.parse(this.keys.openFor(user, r.config, sealContext(r.id)).toString("utf8")),
      })),
    );
  }

  count(user: string): Awaitable<number> {
    return this.records.count(user);
  }

  /** Adds `d`, its config sealed, unless its id is taken or its owner has `max` connectors. */
  insert(d: Definition & { created_at: string }, max: number): Awaitable<InsertOutcome> {
    const config = this.keys.sealFor(d.owner, JSON.stringify(d.config), sealContext(d.id));
    return this.records.insert({ user_id: d.owner, id: d.id, kind: d.kind, label: d.label, config, created_at: d.created_at }, max);
  }

  /** False when the row is gone (removed meanwhile). */
  update(d: Definition): Awaitable<boolean> {
    return this.records.update(d.owner, d.id, d.label, this.keys.sealFor(d.owner, JSON.stringify(d.config), sealContext(d.id)));
  }

  delete(user: string, id: string): Awaitable<void> {
    return this.records.delete(user, id);
  }

  /** The OAuth grant kept for `user`'s connector `id` (its JSON), opened; undefined when there is none. */
  grant(user: string, id: string): Awaitable<unknown> {
    return andThen(this.records.grant(user, id), (sealed) =>
      sealed ? JSON.parse(this.keys.openFor(user, sealed, grantContext(id)).toString("utf8")) : undefined,
    );
  }

  /**
   * Keeps `grant` for `user`'s connector `id`, sealed; false when the connector is gone (removed
   * meanwhile). The operator's connectors have no row (their file lists them): theirs is kept
   * under OPERATOR_OWNER, sealed with the operator's key.
   */
  setGrant(user: string, id: string, grant: unknown): Awaitable<boolean> {
    return this.records.setGrant(user, id, this.keys.sealFor(user, JSON.stringify(grant), grantContext(id)));
  }

  /** Drops `user`'s grants of connectors not in `keep` (the operator's, of connectors gone from their file); how many. */
  dropGrantsExcept(user: string, keep: string[]): Awaitable<number> {
    return this.records.dropGrantsExcept(user, keep);
  }

  /** Owners and ids of every user's connectors of these kinds, without opening their configs. */
  idsOfKinds(kinds: ConnectorKind[]): Awaitable<{ user_id: string; id: string }[]> {
    return this.records.idsOfKinds(kinds);
  }

  /** Every user's connectors, their kinds only (the operator's metrics: no config is opened). */
  everyOne(): Awaitable<{ user_id: string; id: string; kind: ConnectorKind }[]> {
    return this.records.everyOne();
  }
}
