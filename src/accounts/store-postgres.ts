// The accounts room in the shared PostgreSQL (D33): password accounts and upstream links, so that
// an account added on one node signs in on every other, and one removed, or an operator demoted,
// is refused on every other at its next request: nothing of it is cached on a node (each sign-in,
// session and console request asks here, one primary-key lookup).
// PostgreSQL holds what the embedded store holds at rest (accounts, external_accounts: store.ts):
// account ids, argon2id password hashes (never a password), times and the operator's role; an
// upstream person's id, their provider's issuer and `sub`, and the name it gave.
import type postgres from "postgres";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { type AccountInfo, type AccountRecords, accountInfos, type ExternalLink, type ExternalRow, type LocalRow } from "./store";

export const ACCOUNTS_TABLE = "corpus_accounts";
export const EXTERNAL_ACCOUNTS_TABLE = "corpus_external_accounts";

export const accountPgMigrations: PgMigration[] = [
  {
    id: "accounts-pg-001-accounts",
    async up(tx) {
      await tx.unsafe(`CREATE TABLE ${ACCOUNTS_TABLE} (
        id text PRIMARY KEY,
        password_hash text NOT NULL,
        created_at bigint NOT NULL,
        password_changed_at bigint NOT NULL,
        operator boolean NOT NULL DEFAULT false
      )`);
      await tx.unsafe(`CREATE TABLE ${EXTERNAL_ACCOUNTS_TABLE} (
        id text PRIMARY KEY,
        issuer text NOT NULL,
        subject text NOT NULL,
        name text,
        created_at bigint NOT NULL,
        last_login_at bigint NOT NULL,
        UNIQUE (issuer, subject)
      )`);
    },
  },
];

/** The node's connections, or a transaction of them (a deletion's: users/deletion.ts). */

export class PostgresAccountRecords implements AccountRecords {
  constructor(private readonly sql: SharedQueries) {}

  /** The same store writing inside `tx`: a deletion's erase commits or rolls back with the rest of it. */
  within(tx: postgres.TransactionSql): PostgresAccountRecords {
    return new PostgresAccountRecords(tx);
  }

  private get accounts() {
    return this.sql(ACCOUNTS_TABLE);
  }

  private get external() {
    return this.sql(EXTERNAL_ACCOUNTS_TABLE);
  }

  async insert(id: string, passwordHash: string, at: number, operator: boolean): Promise<boolean> {
    const done = await this.sql`INSERT INTO ${this.accounts} (id, password_hash, created_at, password_changed_at, operator)
      SELECT ${id}, ${passwordHash}, ${at}, ${at}, ${operator} WHERE NOT EXISTS (SELECT 1 FROM ${this.external} WHERE id = ${id})
      ON CONFLICT (id) DO NOTHING`;
    return done.count > 0;
  }

  async passwordHash(id: string): Promise<string | undefined> {
    const [row] = await this.sql<{ password_hash: string }[]>`SELECT password_hash FROM ${this.accounts} WHERE id = ${id}`;
    return row?.password_hash;
  }

  async setPasswordHash(id: string, passwordHash: string, at: number): Promise<boolean> {
    const done = await this.sql`UPDATE ${this.accounts} SET password_hash = ${passwordHash}, password_changed_at = ${at} WHERE id = ${id}`;
    return done.count > 0;
  }

  async isOperator(id: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM ${this.accounts} WHERE id = ${id} AND operator`).length > 0;
  }

  async remove(id: string): Promise<boolean> {
    // Both tables in one statement (a data-modifying WITH runs whether or not it is read).
    const [row] = await this.sql<{ n: string }[]>`
      WITH local AS (DELETE FROM ${this.accounts} WHERE id = ${id} RETURNING 1),
        upstream AS (DELETE FROM ${this.external} WHERE id = ${id} RETURNING 1)
      SELECT (SELECT count(*) FROM local) + (SELECT count(*) FROM upstream) AS n`;
    return Number(row!.n) > 0;
  }

  async forgetExternal(id: string): Promise<boolean> {
    return (await this.sql`DELETE FROM ${this.external} WHERE id = ${id}`).count > 0;
  }

  async externalRows(id: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.external} WHERE id = ${id}`;
    return Number(row!.n);
  }

  async exists(id: string): Promise<boolean> {
    const rows = await this.sql`SELECT 1 FROM ${this.accounts} WHERE id = ${id} UNION ALL SELECT 1 FROM ${this.external} WHERE id = ${id}`;
    return rows.length > 0;
  }

  async isExternal(id: string): Promise<boolean> {
    return (await this.sql`SELECT 1 FROM ${this.external} WHERE id = ${id}`).length > 0;
  }

  async link(
    id: string,
    { issuer, subject }: ExternalLink,
    name: string | null,
    at: number,
  ): Promise<"linked" | "password account" | "another subject"> {
    // One statement: made where no password account has the id, updated only for the same issuer's subject.
    const linked = await this.sql`
      INSERT INTO ${this.external} AS e (id, issuer, subject, name, created_at, last_login_at)
      SELECT ${id}, ${issuer}, ${subject}, ${name}, ${at}, ${at} WHERE NOT EXISTS (SELECT 1 FROM ${this.accounts} WHERE id = ${id})
      ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name, last_login_at = EXCLUDED.last_login_at
        WHERE e.issuer = EXCLUDED.issuer AND e.subject = EXCLUDED.subject
      RETURNING 1`;
    if (linked.length > 0) return "linked";
    return (await this.sql`SELECT 1 FROM ${this.accounts} WHERE id = ${id}`).length > 0 ? "password account" : "another subject";
  }

  async list(): Promise<AccountInfo[]> {
    const [local, upstream] = await Promise.all([
      this.sql<LocalRow[]>`SELECT id, created_at, password_changed_at, operator FROM ${this.accounts}`,
      this.sql<ExternalRow[]>`SELECT id, issuer, subject, name, created_at, last_login_at FROM ${this.external}`,
    ]);
    return accountInfos(local, upstream);
  }
}
