// Idempotency-Key (D11; first document rule 2-3 of POST /query). Per user, endpoint and key
// for 24 hours: the body's hash is kept with the response; a retry with the same body gets
// the stored response byte for byte; another body, or the same key while the first request
// is still running, is a conflict. Claiming is one INSERT, so of concurrent duplicates
// exactly one runs. Stored responses hold the user's data: they are sealed with the user's
// data key; the key and the body's hash are kept as keyed hashes under a key of the user's
// (D25), so a copy of the database cannot confirm a guessed question or password. A claim left
// by a crash expires after the request timeout. The records are kept behind one interface
// (IdempotencyRecords) by the embedded database (below) or the shared PostgreSQL
// (idempotency-postgres.ts, D33), whose claim is one upsert too: of duplicates on several nodes,
// exactly one runs.
import type { Database } from "bun:sqlite";
import { createHmac } from "node:crypto";
import type postgres from "postgres";
import type { UserKeys } from "../crypto/user-keys";
import type { BackgroundGuard } from "../jobs/guard";
import type { Migration } from "../store/migrations";
import { type Awaitable, andThen, inTransaction } from "../store/shared";

export const idempotencyMigrations: Migration[] = [
  {
    id: "limits-002-idempotency",
    up(db) {
      db.exec(`CREATE TABLE idempotency_records (
        user_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        idem_key TEXT NOT NULL,
        body_hash TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('running', 'done')),
        status INTEGER,
        response BLOB,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (user_id, endpoint, idem_key)
      )`);
      db.exec("CREATE INDEX idempotency_created ON idempotency_records (created_at)");
    },
  },
];

export const IDEMPOTENCY_TTL_MS = 24 * 3600 * 1000;
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;
const PURPOSE = "idempotency";

export type IdempotencyOutcome =
  | { kind: "claimed" }
  | { kind: "replay"; status: number; body: string }
  | { kind: "conflict"; reason: string; retryAfterSeconds?: number };

export interface Claim {
  user: string;
  endpoint: string;
  key: string;
}

/** A record as stored: the key and the body's hash keyed, the response sealed; times in ms. */
export interface StoredRecord {
  body_hash: string;
  state: "running" | "done";
  status: number | null;
  response: Uint8Array | null;
  created_at: number;
}

/** When a record no longer stands: made before `expiredBefore`, or still running since before `abandonedBefore`. */
export interface Staleness {
  expiredBefore: number;
  abandonedBefore: number;
}

/** Where the records are kept (D33): every answer at once from the embedded database, later from PostgreSQL. */
export interface IdempotencyRecords {
  /** Claims the key (a claim as stored) for a request of body `hash` made at `t`, in one step: a new row, or a stale one replaced (undefined); else the row that stands. */
  claim(c: Claim, hash: string, t: number, stale: Staleness): Awaitable<StoredRecord | undefined>;
  /** The claimed request's response, sealed: replayed from now on. */
  complete(c: Claim, status: number, response: Uint8Array): Awaitable<void>;
  /** A claim given up (its request failed): a retry runs again. */
  release(c: Claim): Awaitable<void>;
  /** Removes the records made before `t`; how many. */
  purgeBefore(t: number): Awaitable<number>;
  rowsOf(user: string): Awaitable<number>;
  forget(user: string): Awaitable<number>;
}

/** The embedded store: a table of the data folder's SQLite database. */
export class SqliteIdempotencyRecords implements IdempotencyRecords {
  constructor(private readonly db: Database) {}

  claim(c: Claim, hash: string, t: number, stale: Staleness): StoredRecord | undefined {
    return this.db.transaction((): StoredRecord | undefined => {
      const row = this.db
        .query<StoredRecord, [string, string, string]>(
          "SELECT body_hash, state, status, response, created_at FROM idempotency_records WHERE user_id = ? AND endpoint = ? AND idem_key = ?",
        )
        .get(c.user, c.endpoint, c.key);
      const expired = row && (row.created_at < stale.expiredBefore || (row.state === "running" && row.created_at < stale.abandonedBefore));
      if (row && !expired) return row;
      this.db
        .query(
          `INSERT INTO idempotency_records (user_id, endpoint, idem_key, body_hash, state, created_at) VALUES (?, ?, ?, ?, 'running', ?)
           ON CONFLICT (user_id, endpoint, idem_key) DO UPDATE SET body_hash = excluded.body_hash, state = 'running', status = NULL, response = NULL, created_at = excluded.created_at`,
        )
        .run(c.user, c.endpoint, c.key, hash, t);
      return undefined;
    })();
  }

  complete(c: Claim, status: number, response: Uint8Array): void {
    this.db
      .query(
        "UPDATE idempotency_records SET state = 'done', status = ?, response = ? WHERE user_id = ? AND endpoint = ? AND idem_key = ? AND state = 'running'",
      )
      .run(status, response, c.user, c.endpoint, c.key);
  }

  release(c: Claim): void {
    this.db
      .query("DELETE FROM idempotency_records WHERE user_id = ? AND endpoint = ? AND idem_key = ? AND state = 'running'")
      .run(c.user, c.endpoint, c.key);
  }

  purgeBefore(t: number): number {
    return this.db.query("DELETE FROM idempotency_records WHERE created_at < ?").run(t).changes;
  }

  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM idempotency_records WHERE user_id = ?1) AS n").get(user)!.n;
  }

  forget(user: string): number {
    return this.db.query("DELETE FROM idempotency_records WHERE user_id = ?").run(user).changes;
  }
}

export class IdempotencyStore {
  constructor(
    private readonly records: IdempotencyRecords,
    private readonly keys: UserKeys,
    private readonly runningTimeoutMs: number,
    private readonly now: () => number = Date.now,
    /** Runs a shared store's writes that go on behind an answer (completing, releasing), logging a failure once per streak. */
    private readonly guard?: BackgroundGuard,
  ) {}

  /** The same store inside `tx` (a deletion's, users/deletion.ts); an embedded store's records cannot join it: refused (inTransaction). */
  within(tx: postgres.TransactionSql): IdempotencyStore {
    return new IdempotencyStore(inTransaction(this.records, tx, "idempotency"), this.keys, this.runningTimeoutMs, this.now, this.guard);
  }

  private aad(c: Claim) {
    return `${PURPOSE}/${c.endpoint}/${c.key}`;
  }

  /** A value as stored: a keyed hash under the user's idempotency key. */
  private keyed(user: string, kind: "key" | "body", value: string): string {
    return createHmac("sha256", this.keys.derive(user, PURPOSE)).update(`${kind}\u0000${value}`).digest("hex");
  }

  /** The claim as stored: the Idempotency-Key value hashed. */
  private stored(c: Claim): Claim {
    return { ...c, key: this.keyed(c.user, "key", c.key) };
  }

  /** Looks the key up; when it is new (or expired, or abandoned), claims it for this request. */
  begin(claim: Claim, body: unknown): Awaitable<IdempotencyOutcome> {
    const c = this.stored(claim);
    const hash = this.keyed(claim.user, "body", JSON.stringify(body ?? null));
    const t = this.now();
    const stale = { expiredBefore: t - IDEMPOTENCY_TTL_MS, abandonedBefore: t - this.runningTimeoutMs };
    return andThen(this.records.claim(c, hash, t, stale), (row): IdempotencyOutcome => {
      if (!row) return { kind: "claimed" };
      if (row.body_hash !== hash)
        return {
          kind: "conflict",
          reason: "Idempotency-Key was already used with a different request body; use a new key for a new operation",
        };
      // D11's 409, with when to ask again: the first request may have been answered 503 by the timeout and still run.
      if (row.state === "running")
        return { kind: "conflict", reason: "a request with this Idempotency-Key is still being processed", retryAfterSeconds: 1 };
      return { kind: "replay", status: row.status!, body: this.keys.openFor(c.user, row.response!, this.aad(claim)).toString("utf8") };
    });
  }

  /** A shared store's write goes on behind the answer, through the guard; the embedded one's is done (or throws) here. */
  private behind(job: Awaitable<void>): void {
    if (!(job instanceof Promise)) return;
    if (this.guard) void this.guard.run("idempotency_records", () => job);
    else throw new Error("IdempotencyStore: a shared store needs the background guard");
  }

  /** Stores the response of a claimed request for replay. */
  complete(claim: Claim, status: number, body: string): void {
    const c = this.stored(claim);
    this.behind(this.records.complete(c, status, this.keys.sealFor(c.user, body, this.aad(claim))));
  }

  /** Gives a claim up (the request failed), so that a retry runs again. */
  release(claim: Claim): void {
    this.behind(this.records.release(this.stored(claim)));
  }

  purgeExpired(): Awaitable<number> {
    return this.records.purgeBefore(this.now() - IDEMPOTENCY_TTL_MS);
  }

  /** The idempotency records of `user` (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): Awaitable<number> {
    return this.records.rowsOf(user);
  }

  forget(user: string): Awaitable<number> {
    return this.records.forget(user);
  }
}
