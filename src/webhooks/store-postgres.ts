// Webhooks and their outbox in the shared PostgreSQL (D33). Nodes claim due deliveries with
// FOR UPDATE SKIP LOCKED under an expiring lease (claimed_by, claim_expires_at, claim_token): two
// nodes claiming at once take different deliveries, neither waiting on the other; before each
// attempt the claimant holds its claim again for the attempt's time, and records the outcome only
// while the claim's token is still its own. A node that dies with deliveries claimed stops holding
// them: once the lease expired another claims them (with the next token) and sends them, and the
// dead node's token matches nothing any more. A registration's count and insert run under a
// transaction-scoped advisory lock of the user, so adds on several nodes cannot pass the cap together.
// PostgreSQL holds what the embedded store holds at rest (webhooks, webhook_outbox): the user id,
// the URL, the events, the secret sealed with the user's data key; each delivery sealed with the
// outbox key (derived from the master key, which stays on the nodes); attempts, times, the last
// error (a status or a reason, no content); the claimant node's id and its lease.
import type postgres from "postgres";
import type { UserKeys } from "../crypto/user-keys";
import type { PgMigration } from "../store/postgres-migrations";
import { atomically, type SharedQueries } from "../store/shared";
import {
  type ClaimedDelivery,
  type RegisteredWebhook,
  type Webhook,
  type WebhookEvent,
  WebhookSeals,
  type WebhookStore,
  type WebhookTarget,
  webhookOf,
} from "./store";

export const WEBHOOKS_TABLE = "corpus_webhooks";
export const OUTBOX_TABLE = "corpus_webhook_outbox";

export const webhookPgMigrations: PgMigration[] = [
  {
    id: "webhooks-pg-001-tables",
    up: async (tx) => {
      await tx.unsafe(`CREATE TABLE ${WEBHOOKS_TABLE} (
        id text PRIMARY KEY,
        user_id text NOT NULL,
        url text NOT NULL,
        events text NOT NULL,
        secret bytea NOT NULL,
        created_at text NOT NULL
      )`);
      await tx.unsafe(`CREATE INDEX ${WEBHOOKS_TABLE}_user ON ${WEBHOOKS_TABLE} (user_id)`);
      await tx.unsafe(`CREATE TABLE ${OUTBOX_TABLE} (
        id bigserial PRIMARY KEY,
        delivery bytea NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at bigint NOT NULL,
        created_at bigint NOT NULL,
        state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'failed')),
        last_error text,
        claimed_by text NOT NULL DEFAULT '',
        claim_expires_at bigint NOT NULL DEFAULT 0,
        claim_token bigint NOT NULL DEFAULT 0
      )`);
      await tx.unsafe(`CREATE INDEX ${OUTBOX_TABLE}_due ON ${OUTBOX_TABLE} (state, next_attempt_at)`);
    },
  },
];

/** The advisory lock of one user's registrations (a namespace, then the user's hash: see add). */
const REGISTRATIONS_LOCK = 0x7768;

interface OutboxRow {
  id: string;
  attempts: number;
  created_at: string;
  delivery: Uint8Array;
  claim_token: string;
}

export class PostgresWebhookStore implements WebhookStore {
  private readonly seals: WebhookSeals;

  constructor(
    private readonly sql: SharedQueries,
    private readonly keys: UserKeys,
    private readonly masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.seals = new WebhookSeals(keys, masterKey, now);
  }

  /** The same store inside `tx` (a deletion's: users/deletion.ts): what it reads, erases and queues commits or rolls back with the rest. */
  within(tx: postgres.TransactionSql): PostgresWebhookStore {
    return new PostgresWebhookStore(tx, this.keys, this.masterKey, this.now);
  }

  async add(user: string, url: string, events: string[], max: number): Promise<RegisteredWebhook | { atCap: number }> {
    const table = this.sql(WEBHOOKS_TABLE);
    return atomically(this.sql, async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(${REGISTRATIONS_LOCK}, hashtext(${user}))`;
      const [row] = await tx<{ n: string }[]>`SELECT count(*) AS n FROM ${table} WHERE user_id = ${user}`;
      const n = Number(row!.n);
      if (n >= max) return { atCap: n };
      const { webhook, sealed } = this.seals.registration(user, url, events);
      await tx`INSERT INTO ${table} (id, user_id, url, events, secret, created_at)
        VALUES (${webhook.id}, ${user}, ${url}, ${JSON.stringify(events)}, ${sealed}, ${webhook.created_at})`;
      return webhook;
    });
  }

  async list(user: string): Promise<Webhook[]> {
    const rows = await this.sql<{ id: string; url: string; events: string; created_at: string }[]>`
      SELECT id, url, events, created_at FROM ${this.sql(WEBHOOKS_TABLE)} WHERE user_id = ${user} ORDER BY created_at, id`;
    return rows.map(webhookOf);
  }

  count(user: string): Promise<number> {
    return this.rowsOf(user);
  }

  async remove(user: string, id: string): Promise<boolean> {
    return (await this.sql`DELETE FROM ${this.sql(WEBHOOKS_TABLE)} WHERE user_id = ${user} AND id = ${id}`).count > 0;
  }

  async targets(user: string, event: WebhookEvent): Promise<WebhookTarget[]> {
    const q = this.sql;
    const rows = await q<{ id: string; url: string; events: string; secret: Uint8Array }[]>`
      SELECT id, url, events, secret FROM ${q(WEBHOOKS_TABLE)} WHERE user_id = ${user}`;
    return this.seals.targets(user, event, rows);
  }

  async rowsOf(user: string): Promise<number> {
    const q = this.sql;
    const [row] = await q<{ n: string }[]>`SELECT count(*) AS n FROM ${q(WEBHOOKS_TABLE)} WHERE user_id = ${user}`;
    return Number(row!.n);
  }

  async deleteUser(user: string): Promise<number> {
    const q = this.sql;
    return (await q`DELETE FROM ${q(WEBHOOKS_TABLE)} WHERE user_id = ${user}`).count;
  }

  async enqueue(type: WebhookEvent, data: Record<string, unknown>, targets: WebhookTarget[]): Promise<{ id: string; body: string }> {
    const { id, body, sealed } = this.seals.event(type, data, targets);
    if (sealed.length) {
      const q = this.sql;
      const t = this.now();
      const rows = sealed.map((delivery) => ({ delivery, next_attempt_at: t, created_at: t }));
      await q`INSERT INTO ${q(OUTBOX_TABLE)} ${q(rows, "delivery", "next_attempt_at", "created_at")}`;
    }
    return { id, body };
  }

  async claimDue(limit: number, holder: string, leaseMs: number): Promise<ClaimedDelivery[]> {
    const t = this.now();
    const table = this.sql(OUTBOX_TABLE);
    const rows = await this.sql<(OutboxRow & { next_attempt_at: string })[]>`
      WITH due AS (
        SELECT id FROM ${table}
        WHERE state = 'pending' AND next_attempt_at <= ${t} AND claim_expires_at <= ${t}
        ORDER BY next_attempt_at, id
        LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      UPDATE ${table} AS o SET claimed_by = ${holder}, claim_expires_at = ${t + leaseMs}, claim_token = o.claim_token + 1
      FROM due WHERE o.id = due.id
      RETURNING o.id, o.attempts, o.created_at, o.delivery, o.claim_token, o.next_attempt_at`;
    return rows
      .sort((a, b) => Number(a.next_attempt_at) - Number(b.next_attempt_at) || Number(a.id) - Number(b.id))
      .map((r) => ({
        id: Number(r.id),
        attempts: r.attempts,
        created_at: Number(r.created_at),
        delivery: this.seals.delivery(r.delivery),
        token: Number(r.claim_token),
      }));
  }

  async hold(claim: ClaimedDelivery, leaseMs: number): Promise<boolean> {
    const changed = await this.sql`UPDATE ${this.sql(OUTBOX_TABLE)} SET claim_expires_at = ${this.now() + leaseMs}
      WHERE id = ${claim.id} AND claim_token = ${claim.token} AND state = 'pending'`;
    return changed.count > 0;
  }

  async delivered(claim: ClaimedDelivery): Promise<boolean> {
    return (await this.sql`DELETE FROM ${this.sql(OUTBOX_TABLE)} WHERE id = ${claim.id} AND claim_token = ${claim.token}`).count > 0;
  }

  async retryAt(claim: ClaimedDelivery, attempts: number, at: number, error: string): Promise<boolean> {
    const changed = await this.sql`UPDATE ${this.sql(OUTBOX_TABLE)}
      SET attempts = ${attempts}, next_attempt_at = ${at}, last_error = ${error}, claimed_by = '', claim_expires_at = 0
      WHERE id = ${claim.id} AND claim_token = ${claim.token}`;
    return changed.count > 0;
  }

  async giveUp(claim: ClaimedDelivery, attempts: number, error: string): Promise<boolean> {
    const changed = await this.sql`UPDATE ${this.sql(OUTBOX_TABLE)}
      SET state = 'failed', attempts = ${attempts}, last_error = ${error}, claimed_by = '', claim_expires_at = 0
      WHERE id = ${claim.id} AND claim_token = ${claim.token}`;
    return changed.count > 0;
  }

  async pending(): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(OUTBOX_TABLE)} WHERE state = 'pending'`;
    return Number(row!.n);
  }
}
