// The people who log in to the built-in authorization server (D27): accounts the operator
// manages with `corpus user add/remove/passwd/list`. Passwords are kept as argon2id hashes
// (Bun.password, a memory-hard function); an account's id is the `sub` of its tokens. People
// signed in by an upstream OpenID Connect provider (CORPUS_OIDC_ISSUER) are kept apart, in
// external_accounts: no password, their id made from the provider's issuer and `sub`.
// One interface over the rows, two stores (D33): the embedded database's (SqliteAccountRecords,
// below) answers at once, the shared PostgreSQL's (store-postgres.ts) later; nothing of them is
// cached on a node (an operator's role and an account's existence are asked at each use), so an
// account removed or demoted on one node is refused on every other at once.
import type { Database } from "bun:sqlite";
import type postgres from "postgres";
import { subjectProblem } from "../auth/subjects";
import type { Migration } from "../store/migrations";
import { type Awaitable, andThen, inTransaction } from "../store/shared";
import { type HashGate, passwordHashes } from "./hash-gate";

export const accountMigrations: Migration[] = [
  {
    id: "accounts-001-users",
    up(db) {
      db.exec(`CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        password_changed_at INTEGER NOT NULL
      )`);
    },
  },
  {
    id: "accounts-002-external",
    up(db) {
      db.exec(`CREATE TABLE external_accounts (
        id TEXT PRIMARY KEY,
        issuer TEXT NOT NULL,
        subject TEXT NOT NULL,
        name TEXT,
        created_at INTEGER NOT NULL,
        last_login_at INTEGER NOT NULL,
        UNIQUE (issuer, subject)
      )`);
    },
  },
  {
    // D35: operators are accounts with a role, made with `corpus user add --operator`.
    id: "accounts-003-operator",
    up(db) {
      db.exec("ALTER TABLE accounts ADD COLUMN operator INTEGER NOT NULL DEFAULT 0");
    },
  },
];

export const MIN_PASSWORD_LENGTH = 10;
export const MAX_PASSWORD_LENGTH = 1024;
// OWASP's argon2id floor (19 MiB, 2 passes): about 30 ms a hash on this machine.
const HASH = { algorithm: "argon2id", memoryCost: 19_456, timeCost: 2 } as const;

export class AccountError extends Error {}

export interface AccountInfo {
  id: string;
  createdAt: number;
  /** Absent for a person of the upstream provider (no password here). */
  passwordChangedAt?: number;
  /** An operator (D35): `corpus user add --operator`; only password accounts are. */
  operator?: true;
  /** The upstream provider's issuer and the name it gave, for a person signed in there. */
  upstream?: { issuer: string; subject: string; name: string | null; lastLoginAt: number };
}

/** Who an upstream person is at their provider: its issuer and their `sub`. */
export interface ExternalLink {
  issuer: string;
  subject: string;
}

/** The accounts room (D33): password accounts and upstream links, times in seconds. */
export interface AccountRecords {
  /** Adds a password account; false when `id` is taken (by a password account or an upstream person). */
  insert(id: string, passwordHash: string, at: number, operator: boolean): Awaitable<boolean>;
  passwordHash(id: string): Awaitable<string | undefined>;
  /** False when `id` is no password account. */
  setPasswordHash(id: string, passwordHash: string, at: number): Awaitable<boolean>;
  isOperator(id: string): Awaitable<boolean>;
  /** Removes a password account or an upstream person; false when there was none. */
  remove(id: string): Awaitable<boolean>;
  forgetExternal(id: string): Awaitable<boolean>;
  externalRows(id: string): Awaitable<number>;
  exists(id: string): Awaitable<boolean>;
  isExternal(id: string): Awaitable<boolean>;
  /**
   * Records an upstream sign-in of `id` (made, or its name and time updated); answers what
   * stood in the way instead: a password account of that id, or another issuer's subject.
   */
  link(id: string, link: ExternalLink, name: string | null, at: number): Awaitable<"linked" | "password account" | "another subject">;
  /** Every account, in no given order. */
  list(): Awaitable<AccountInfo[]>;
}

/** An upstream person's row as both stores read it. */
export interface ExternalRow {
  id: string;
  issuer: string;
  subject: string;
  name: string | null;
  created_at: number | string;
  last_login_at: number | string;
}

/** A password account's row as both stores read it (bigint columns come back from PostgreSQL as text). */
export interface LocalRow {
  id: string;
  created_at: number | string;
  password_changed_at: number | string;
  operator: number | boolean;
}

/** The AccountInfo of stored rows: one mapping for both stores. */
export function accountInfos(local: LocalRow[], upstream: ExternalRow[]): AccountInfo[] {
  return [
    ...local.map((r) => ({
      id: r.id,
      createdAt: Number(r.created_at),
      passwordChangedAt: Number(r.password_changed_at),
      ...(r.operator ? { operator: true as const } : {}),
    })),
    ...upstream.map((r) => ({
      id: r.id,
      createdAt: Number(r.created_at),
      upstream: { issuer: r.issuer, subject: r.subject, name: r.name, lastLoginAt: Number(r.last_login_at) },
    })),
  ];
}

/** The embedded store: the data folder's SQLite tables (accountMigrations), as they always were. */
export class SqliteAccountRecords implements AccountRecords {
  constructor(private readonly db: Database) {}

  insert(id: string, passwordHash: string, at: number, operator: boolean): boolean {
    return (
      this.db
        .query(
          `INSERT INTO accounts (id, password_hash, created_at, password_changed_at, operator)
           SELECT ?1, ?2, ?3, ?3, ?4 WHERE NOT EXISTS (SELECT 1 FROM external_accounts WHERE id = ?1)
           ON CONFLICT (id) DO NOTHING`,
        )
        .run(id, passwordHash, at, operator ? 1 : 0).changes > 0
    );
  }

  passwordHash(id: string): string | undefined {
    return this.db.query<{ password_hash: string }, [string]>("SELECT password_hash FROM accounts WHERE id = ?").get(id)?.password_hash;
  }

  setPasswordHash(id: string, passwordHash: string, at: number): boolean {
    return (
      this.db.query("UPDATE accounts SET password_hash = ?, password_changed_at = ? WHERE id = ?").run(passwordHash, at, id).changes > 0
    );
  }

  isOperator(id: string): boolean {
    return this.db.query("SELECT 1 FROM accounts WHERE id = ? AND operator = 1").get(id) !== null;
  }

  remove(id: string): boolean {
    return this.db.transaction(
      () =>
        this.db.query("DELETE FROM accounts WHERE id = ?").run(id).changes +
          this.db.query("DELETE FROM external_accounts WHERE id = ?").run(id).changes >
        0,
    )();
  }

  forgetExternal(id: string): boolean {
    return this.db.query("DELETE FROM external_accounts WHERE id = ?").run(id).changes > 0;
  }

  externalRows(id: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM external_accounts WHERE id = ?").get(id)!.n;
  }

  exists(id: string): boolean {
    return this.db.query("SELECT 1 FROM accounts WHERE id = ? UNION ALL SELECT 1 FROM external_accounts WHERE id = ?").get(id, id) !== null;
  }

  isExternal(id: string): boolean {
    return this.db.query("SELECT 1 FROM external_accounts WHERE id = ?").get(id) !== null;
  }

  link(id: string, { issuer, subject }: ExternalLink, name: string | null, at: number): "linked" | "password account" | "another subject" {
    return this.db.transaction(() => {
      if (this.db.query("SELECT 1 FROM accounts WHERE id = ?").get(id)) return "password account" as const;
      const row = this.db
        .query<{ issuer: string; subject: string }, [string]>("SELECT issuer, subject FROM external_accounts WHERE id = ?")
        .get(id);
      if (row && (row.issuer !== issuer || row.subject !== subject)) return "another subject" as const;
      this.db
        .query(
          `INSERT INTO external_accounts (id, issuer, subject, name, created_at, last_login_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET name = excluded.name, last_login_at = excluded.last_login_at`,
        )
        .run(id, issuer, subject, name, at, at);
      return "linked" as const;
    })();
  }

  list(): AccountInfo[] {
    return accountInfos(
      this.db.query<LocalRow, []>("SELECT id, created_at, password_changed_at, operator FROM accounts").all(),
      this.db.query<ExternalRow, []>("SELECT id, issuer, subject, name, created_at, last_login_at FROM external_accounts").all(),
    );
  }
}

const byId = (a: AccountInfo, b: AccountInfo) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export class Accounts {
  // A hash to verify against when the account does not exist: a miss costs what a hit costs.
  private decoy?: Promise<string>;

  constructor(
    private readonly records: AccountRecords,
    private readonly now: () => number = Date.now,
    /** Where every hash waits its turn (one gate for the process: hash-gate.ts). */
    private readonly hashes: HashGate = passwordHashes,
  ) {}

  private static checkPassword(password: string): void {
    if (password.length < MIN_PASSWORD_LENGTH) throw new AccountError(`the password must have at least ${MIN_PASSWORD_LENGTH} characters`);
    if (password.length > MAX_PASSWORD_LENGTH) throw new AccountError(`the password must have at most ${MAX_PASSWORD_LENGTH} characters`);
  }

  private static checkId(id: string): void {
    const problem = subjectProblem(id);
    if (problem) throw new AccountError(`user id ${JSON.stringify(id)}: ${problem.replace("token subject", "it")}`);
  }

  private seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Adds a password account; `operator`: with the operator's role (D35). */
  async add(id: string, password: string, { operator = false }: { operator?: boolean } = {}): Promise<void> {
    Accounts.checkId(id);
    Accounts.checkPassword(password);
    // Asked before the hash (a taken id costs none), and again by the insert (another node may take it meanwhile).
    if (await this.records.exists(id)) throw new AccountError(`user ${id} already exists`);
    const hash = await this.hashes.run(() => Bun.password.hash(password, HASH));
    if (!(await this.records.insert(id, hash, this.seconds(), operator))) throw new AccountError(`user ${id} already exists`);
  }

  /** Whether `id` is an operator's account (D35): asked at each use, so a removed operator is none at once. */
  isOperator(id: string): Awaitable<boolean> {
    return this.records.isOperator(id);
  }

  async setPassword(id: string, password: string): Promise<void> {
    Accounts.checkPassword(password);
    if (await this.records.isExternal(id))
      throw new AccountError(`user ${id} signs in at the upstream identity provider: change the password there`);
    if (!(await this.records.exists(id))) throw new AccountError(`no user ${id}`);
    const hash = await this.hashes.run(() => Bun.password.hash(password, HASH));
    if (!(await this.records.setPasswordHash(id, hash, this.seconds()))) throw new AccountError(`no user ${id}`);
  }

  remove(id: string): Awaitable<boolean> {
    return this.records.remove(id);
  }

  /**
   * DELETE /v1/delete_my_data: the person's link to the upstream provider (their `sub` and the
   * name it gave) goes with the rest of their data, and is made again at their next sign-in. A
   * password account is the operator's list of who may sign in: it stays (`corpus user remove`).
   */
  forgetExternal(id: string): Awaitable<boolean> {
    return this.records.forgetExternal(id);
  }

  /** What a deletion checks is gone (users/deletion.ts userRooms): the upstream link's rows. */
  readonly externalLinks = {
    rowsOf: (id: string): Awaitable<number> => this.records.externalRows(id),
  };

  /** The erase and count of a user's deletion inside its PostgreSQL transaction (D33); refused for the embedded store. */
  within(tx: postgres.TransactionSql): Pick<Accounts, "forgetExternal" | "externalLinks"> {
    const records = inTransaction(this.records, tx, "users and accounts");
    return { forgetExternal: (id) => records.forgetExternal(id), externalLinks: { rowsOf: (id) => records.externalRows(id) } };
  }

  /** Whether `id` is a user: one with a password here, or one the upstream provider signed in. */
  exists(id: string): Awaitable<boolean> {
    return this.records.exists(id);
  }

  isExternal(id: string): Awaitable<boolean> {
    return this.records.isExternal(id);
  }

  /**
   * Records a sign-in by the upstream provider: the person becomes (or stays) user `id`. Refused
   * when `id` is a password account, or already names another issuer's subject.
   */
  linkExternal(id: string, issuer: string, subject: string, name: string | null): Awaitable<void> {
    Accounts.checkId(id);
    return andThen(this.records.link(id, { issuer, subject }, name, this.seconds()), (outcome) => {
      if (outcome === "password account") throw new AccountError(`user ${id} is a password account`);
      if (outcome === "another subject") throw new AccountError(`user ${id} belongs to another identity provider's subject`);
    });
  }

  list(): Awaitable<AccountInfo[]> {
    return andThen(this.records.list(), (all) => all.sort(byId));
  }

  /**
   * Whether `password` is this account's; an unknown account costs one verification too.
   * Throws HashesBusy when the process's gate has no room, or `holder` (the client address
   * signing in) has a hash there already (hash-gate.ts).
   */
  async verify(id: string, password: string, holder?: string): Promise<boolean> {
    if (password.length > MAX_PASSWORD_LENGTH) return false;
    const stored = await this.records.passwordHash(id);
    if (stored === undefined) {
      this.decoy ??= this.hashes.run(() => Bun.password.hash("corpus-decoy-password", HASH), holder);
      const decoy = await this.decoy.catch((error) => {
        this.decoy = undefined; // refused (busy): made at the next miss
        throw error;
      });
      await this.hashes.run(() => Bun.password.verify(password, decoy), holder);
      this.onVerified?.(false);
      return false;
    }
    const right = await this.hashes.run(() => Bun.password.verify(password, stored), holder);
    this.onVerified?.(right);
    return right;
  }

  /** Told of each password checked, right or not (the sign-in metrics, D35). */
  onVerified?: (right: boolean) => void;
}
