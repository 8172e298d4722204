// The connectors' room in the shared PostgreSQL (D33), so that a connector added, changed or
// removed on one node is listed and searched so from every other at once: nothing of it is cached
// on a node, every list reads the rows. PostgreSQL holds what the embedded store holds at rest
// (connectors, connector_grants): owner and connector ids, kind, label, creation time, and the
// config and OAuth grant sealed with the owner's data key (bound to the connector's id and owner);
// the key stays with the nodes. An add decides its id and its owner's cap under a lock of the
// owner (two nodes adding at once cannot pass the cap); a grant is kept only while its connector's
// row stands (locked, so a removal on another node waits for it and then removes the grant too).
import type postgres from "postgres";
import { OPERATOR_OWNER } from "../auth/subjects";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically, type SharedQueries } from "../store/shared";
import type { ConnectorKind } from "./kinds";
import type { ConnectorRecords, ConnectorRow, InsertOutcome } from "./rows";

export const CONNECTOR_TABLES = { connectors: "corpus_connectors", grants: "corpus_connector_grants" } as const;
const T = CONNECTOR_TABLES;

export const connectorPgMigrations: PgMigration[] = [
  {
    id: "connectors-pg-001-rows",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${T.connectors} (
        user_id text NOT NULL,
        id text NOT NULL,
        kind text NOT NULL,
        label text NOT NULL,
        config bytea NOT NULL,
        created_at text NOT NULL,
        PRIMARY KEY (user_id, id)
      )`);
      await tx.unsafe(`CREATE INDEX ${T.connectors}_kind ON ${T.connectors} (kind)`);
      await tx.unsafe(`CREATE TABLE ${T.grants} (
        user_id text NOT NULL,
        id text NOT NULL,
        sealed bytea NOT NULL,
        PRIMARY KEY (user_id, id)
      )`);
    },
  },
];

const bytes = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export class PostgresConnectorRecords implements ConnectorRecords {
  constructor(private readonly sql: SharedQueries) {}

  /** The same store inside `tx` (a deletion's: users/deletion.ts): what it erases commits or rolls back with the rest. */
  within(tx: postgres.TransactionSql): PostgresConnectorRecords {
    return new PostgresConnectorRecords(tx);
  }

  async of(user: string): Promise<ConnectorRow[]> {
    const rows = await this.sql<ConnectorRow[]>`
      SELECT user_id, id, kind, label, config, created_at FROM ${this.sql(T.connectors)} WHERE user_id = ${user} ORDER BY created_at, id`;
    return rows.map((r) => ({ ...r, config: new Uint8Array(r.config) }));
  }

  async count(user: string): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`SELECT count(*)::integer AS n FROM ${this.sql(T.connectors)} WHERE user_id = ${user}`;
    return row!.n;
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: number }[]>`SELECT
      (SELECT count(*) FROM ${this.sql(T.connectors)} WHERE user_id = ${user})::integer
      + (SELECT count(*) FROM ${this.sql(T.grants)} WHERE user_id = ${user})::integer AS n`;
    return row!.n;
  }

  insert(r: ConnectorRow, max: number): Promise<InsertOutcome> {
    return atomically(this.sql, async (tx) => {
      // One add of this owner at a time, on every node: the count below holds until the commit.
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${`corpus_connectors/${r.user_id}`}, 0))`;
      const [taken] = await tx`SELECT 1 FROM ${tx(T.connectors)} WHERE user_id = ${r.user_id} AND id = ${r.id}`;
      if (taken) return { added: false, taken: true };
      const [row] = await tx<{ n: number }[]>`SELECT count(*)::integer AS n FROM ${tx(T.connectors)} WHERE user_id = ${r.user_id}`;
      if (row!.n >= max) return { added: false, full: row!.n };
      await tx`INSERT INTO ${tx(T.connectors)} (user_id, id, kind, label, config, created_at)
        VALUES (${r.user_id}, ${r.id}, ${r.kind}, ${r.label}, ${bytes(r.config)}, ${r.created_at})`;
      return { added: true };
    });
  }

  async update(user: string, id: string, label: string, config: Uint8Array): Promise<boolean> {
    const rows = await this.sql`UPDATE ${this.sql(T.connectors)} SET label = ${label}, config = ${bytes(config)}
      WHERE user_id = ${user} AND id = ${id} RETURNING 1`;
    return rows.length > 0;
  }

  async delete(user: string, id: string): Promise<void> {
    // The row first: a grant being kept meanwhile holds its lock, so the grant is deleted after it commits.
    await atomically(this.sql, async (tx) => {
      await tx`DELETE FROM ${tx(T.connectors)} WHERE user_id = ${user} AND id = ${id}`;
      await tx`DELETE FROM ${tx(T.grants)} WHERE user_id = ${user} AND id = ${id}`;
    });
  }

  async grant(user: string, id: string): Promise<Uint8Array | undefined> {
    const [row] = await this.sql<{ sealed: Uint8Array }[]>`SELECT sealed FROM ${this.sql(T.grants)} WHERE user_id = ${user} AND id = ${id}`;
    return row ? new Uint8Array(row.sealed) : undefined;
  }

  setGrant(user: string, id: string, sealed: Uint8Array): Promise<boolean> {
    return atomically(this.sql, async (tx) => {
      if (user !== OPERATOR_OWNER) {
        const [stands] = await tx`SELECT 1 FROM ${tx(T.connectors)} WHERE user_id = ${user} AND id = ${id} FOR SHARE`;
        if (!stands) return false;
      }
      await tx`INSERT INTO ${tx(T.grants)} (user_id, id, sealed) VALUES (${user}, ${id}, ${bytes(sealed)})
        ON CONFLICT (user_id, id) DO UPDATE SET sealed = EXCLUDED.sealed`;
      return true;
    });
  }

  async dropGrantsExcept(user: string, keep: string[]): Promise<number> {
    const rows = await this.sql`DELETE FROM ${this.sql(T.grants)} WHERE user_id = ${user} AND NOT (id = ANY(${keep}::text[])) RETURNING 1`;
    return rows.length;
  }

  async idsOfKinds(kinds: ConnectorKind[]): Promise<{ user_id: string; id: string }[]> {
    return [
      ...(await this.sql<{ user_id: string; id: string }[]>`
        SELECT user_id, id FROM ${this.sql(T.connectors)} WHERE kind = ANY(${kinds}::text[]) ORDER BY user_id, created_at`),
    ];
  }

  async everyOne(): Promise<{ user_id: string; id: string; kind: ConnectorKind }[]> {
    return [
      ...(await this.sql<{ user_id: string; id: string; kind: ConnectorKind }[]>`SELECT user_id, id, kind FROM ${this.sql(T.connectors)}`),
    ];
  }

  async idsOf(user: string): Promise<string[]> {
    return (await this.sql<{ id: string }[]>`SELECT id FROM ${this.sql(T.connectors)} WHERE user_id = ${user}`).map((r) => r.id);
  }

  async deleteUser(user: string): Promise<number> {
    // The rows before the grants (as delete): a grant kept meanwhile is erased with them.
    return atomically(this.sql, async (tx) => {
      const removed = await tx`DELETE FROM ${tx(T.connectors)} WHERE user_id = ${user} RETURNING 1`;
      await tx`DELETE FROM ${tx(T.grants)} WHERE user_id = ${user}`;
      return removed.length;
    });
  }
}
