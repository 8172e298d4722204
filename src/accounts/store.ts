// The people who log in to the built-in authorization server (D27): accounts the operator
// manages with `corpus user add/remove/passwd/list`. Passwords are kept as argon2id hashes
// (Bun.password, a memory-hard function); an account's id is the `sub` of its tokens. People
// signed in by an upstream OpenID Connect provider (CORPUS_OIDC_ISSUER) are kept apart, in
// external_accounts: no password, their id made from the provider's issuer and `sub`.
import type { Database } from "bun:sqlite";
import { subjectProblem } from "../auth/subjects";
import type { Migration } from "../store/migrations";
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

export class Accounts {
  // A hash to verify against when the account does not exist: a miss costs what a hit costs.
  private decoy?: Promise<string>;

  constructor(
    private readonly db: Database,
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

  /** Adds a password account; `operator`: with the operator's role (D35). */
  async add(id: string, password: string, { operator = false }: { operator?: boolean } = {}): Promise<void> {
    Accounts.checkId(id);
    Accounts.checkPassword(password);
    if (this.exists(id)) throw new AccountError(`user ${id} already exists`);
    const hash = await this.hashes.run(() => Bun.password.hash(password, HASH));
    const at = Math.floor(this.now() / 1000);
    this.db
      .query("INSERT INTO accounts (id, password_hash, created_at, password_changed_at, operator) VALUES (?, ?, ?, ?, ?)")
      .run(id, hash, at, at, operator ? 1 : 0);
  }

  /** Whether `id` is an operator's account (D35): asked at each use, so a removed operator is none at once. */
  isOperator(id: string): boolean {
    return this.db.query("SELECT 1 FROM accounts WHERE id = ? AND operator = 1").get(id) !== null;
  }

  async setPassword(id: string, password: string): Promise<void> {
    Accounts.checkPassword(password);
    if (this.isExternal(id)) throw new AccountError(`user ${id} signs in at the upstream identity provider: change the password there`);
    if (!this.exists(id)) throw new AccountError(`no user ${id}`);
    const hash = await this.hashes.run(() => Bun.password.hash(password, HASH));
    this.db
      .query("UPDATE accounts SET password_hash = ?, password_changed_at = ? WHERE id = ?")
      .run(hash, Math.floor(this.now() / 1000), id);
  }

  remove(id: string): boolean {
    return this.db.transaction(
      () =>
        this.db.query("DELETE FROM accounts WHERE id = ?").run(id).changes +
          this.db.query("DELETE FROM external_accounts WHERE id = ?").run(id).changes >
        0,
    )();
  }

  /**
   * DELETE /v1/delete_my_data: the person's link to the upstream provider (their `sub` and the
   * name it gave) goes with the rest of their data, and is made again at their next sign-in. A
   * password account is the operator's list of who may sign in: it stays (`corpus user remove`).
   */
  forgetExternal(id: string): boolean {
    return this.db.query("DELETE FROM external_accounts WHERE id = ?").run(id).changes > 0;
  }

  /** What a deletion checks is gone (users/deletion.ts userRooms): the upstream link's rows. */
  readonly externalLinks = {
    rowsOf: (id: string): number =>
      this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM external_accounts WHERE id = ?").get(id)!.n,
  };

  /** Whether `id` is a user: one with a password here, or one the upstream provider signed in. */
  exists(id: string): boolean {
    return this.db.query("SELECT 1 FROM accounts WHERE id = ? UNION ALL SELECT 1 FROM external_accounts WHERE id = ?").get(id, id) !== null;
  }

  isExternal(id: string): boolean {
    return this.db.query("SELECT 1 FROM external_accounts WHERE id = ?").get(id) !== null;
  }

  /**
   * Records a sign-in by the upstream provider: the person becomes (or stays) user `id`. Refused
   * when `id` is a password account, or already names another issuer's subject.
   */
  linkExternal(id: string, issuer: string, subject: string, name: string | null): void {
    Accounts.checkId(id);
    const at = Math.floor(this.now() / 1000);
    this.db.transaction(() => {
      if (this.db.query("SELECT 1 FROM accounts WHERE id = ?").get(id)) throw new AccountError(`user ${id} is a password account`);
      const row = this.db
        .query<{ issuer: string; subject: string }, [string]>("SELECT issuer, subject FROM external_accounts WHERE id = ?")
        .get(id);
      if (row && (row.issuer !== issuer || row.subject !== subject))
        throw new AccountError(`user ${id} belongs to another identity provider's subject`);
      this.db
        .query(
          `INSERT INTO external_accounts (id, issuer, subject, name, created_at, last_login_at) VALUES (?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET name = excluded.name, last_login_at = excluded.last_login_at`,
        )
        .run(id, issuer, subject, name, at, at);
    })();
  }

  list(): AccountInfo[] {
    const local: AccountInfo[] = this.db
      .query<{ id: string; created_at: number; password_changed_at: number; operator: number }, []>(
        "SELECT id, created_at, password_changed_at, operator FROM accounts ORDER BY id",
      )
      .all()
      .map((r) => ({
        id: r.id,
        createdAt: r.created_at,
        passwordChangedAt: r.password_changed_at,
        ...(r.operator ? { operator: true as const } : {}),
      }));
    const upstream: AccountInfo[] = this.db
      .query<{ id: string; issuer: string; subject: string; name: string | null; created_at: number; last_login_at: number }, []>(
        "SELECT id, issuer, subject, name, created_at, last_login_at FROM external_accounts ORDER BY id",
      )
      .all()
      .map((r) => ({
        id: r.id,
        createdAt: r.created_at,
        upstream: { issuer: r.issuer, subject: r.subject, name: r.name, lastLoginAt: r.last_login_at },
      }));
    return [...local, ...upstream].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /**
   * Whether `password` is this account's; an unknown account costs one verification too.
   * Throws HashesBusy when the process's gate has no room, or `holder` (the client address
   * signing in) has a hash there already (hash-gate.ts).
   */
  async verify(id: string, password: string, holder?: string): Promise<boolean> {
    if (password.length > MAX_PASSWORD_LENGTH) return false;
    const row = this.db.query<{ password_hash: string }, [string]>("SELECT password_hash FROM accounts WHERE id = ?").get(id);
    if (!row) {
      this.decoy ??= this.hashes.run(() => Bun.password.hash("corpus-decoy-password", HASH), holder);
      const decoy = await this.decoy.catch((error) => {
        this.decoy = undefined; // refused (busy): made at the next miss
        throw error;
      });
      await this.hashes.run(() => Bun.password.verify(password, decoy), holder);
      this.onVerified?.(false);
      return false;
    }
    const right = await this.hashes.run(() => Bun.password.verify(password, row.password_hash), holder);
    this.onVerified?.(right);
    return right;
  }

  /** Told of each password checked, right or not (the sign-in metrics, D35). */
  onVerified?: (right: boolean) => void;
}
