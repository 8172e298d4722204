// Webhook registrations per user (D14; secrets sealed with the user's data key) and the
// durable outbox of deliveries (sealed with a server key: a user's last event outlives the
// user's key). A delivery stays in the outbox until a receiver answers 2xx or 24 hours pass.
// One interface (WebhookStore), two stores (D33): the embedded one below (the data folder's
// database: one node, whose worker runs one round at a time) and the shared one in PostgreSQL
// (store-postgres.ts), where nodes claim due deliveries under an expiring lease, so that two
// never send one attempt and a dead node's claimed deliveries are taken once its lease expired.
import type { Database } from "bun:sqlite";
import { createHmac, randomBytes } from "node:crypto";
import { open, seal } from "../crypto/aead";
import type { UserKeys } from "../crypto/user-keys";
import { ID_PREFIX, newId } from "../ids";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

export const webhookMigrations: Migration[] = [
  {
    id: "webhooks-001",
    up(db) {
      db.exec(`CREATE TABLE webhooks (
        id TEXT PRIMARY KEY,
        user_id TEXT NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        secret BLOB NOT NULL,
        created_at TEXT NOT NULL
      )`);
      db.exec("CREATE INDEX webhooks_user ON webhooks (user_id)");
      db.exec(`CREATE TABLE webhook_outbox (
        id INTEGER PRIMARY KEY,
        delivery BLOB NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_attempt_at INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'failed')),
        last_error TEXT
      )`);
      db.exec("CREATE INDEX webhook_outbox_due ON webhook_outbox (state, next_attempt_at)");
    },
  },
];

export const WEBHOOK_EVENTS = ["user.deleted"] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

export interface Webhook {
  id: string;
  url: string;
  events: string[];
  created_at: string;
}

/** A registration as made: the only time its secret is shown. */
export interface RegisteredWebhook extends Webhook {
  secret: string;
}

/** Where an event goes, and the secret it is signed with. */
export interface WebhookTarget {
  url: string;
  secret: string;
}

/** One event to one target; `body` is the exact JSON that is signed and sent. */
export interface Delivery {
  url: string;
  secret: string;
  body: string;
  event_id: string;
}

/** A delivery claimed for one attempt, under the claim's token (a claim taken over since has another). */
export interface ClaimedDelivery {
  id: number;
  attempts: number;
  created_at: number;
  delivery: Delivery;
  token: number;
}

export interface WebhookStore {
  /**
   * Registers a webhook unless `user` already has `max` of them (counted and inserted with
   * nothing between, so adds at once, on any node, cannot pass the cap together): the count when refused.
   */
  add(user: string, url: string, events: string[], max: number): Awaitable<RegisteredWebhook | { atCap: number }>;
  list(user: string): Awaitable<Webhook[]>;
  count(user: string): Awaitable<number>;
  remove(user: string, id: string): Awaitable<boolean>;
  /** The user's registrations for `event`, with their secrets (read before a deletion, in its transaction). */
  targets(user: string, event: WebhookEvent): Awaitable<WebhookTarget[]>;
  /** The webhooks `user` registered (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): Awaitable<number>;
  /** Removes the user's registrations (D13); how many. */
  deleteUser(user: string): Awaitable<number>;
  /** Queues an event for each target (inside the caller's transaction); the event. */
  enqueue(type: WebhookEvent, data: Record<string, unknown>, targets: WebhookTarget[]): Awaitable<{ id: string; body: string }>;
  /** Up to `limit` due deliveries no one else holds, each claimed by `holder` for `leaseMs`. */
  claimDue(limit: number, holder: string, leaseMs: number): Awaitable<ClaimedDelivery[]>;
  /** The claim held `leaseMs` from now, right before its attempt; false when another has taken it since (it is not sent). */
  hold(claim: ClaimedDelivery, leaseMs: number): Awaitable<boolean>;
  /** Answered 2xx: out of the outbox. False when the claim was no longer this holder's. */
  delivered(claim: ClaimedDelivery): Awaitable<boolean>;
  /** Failed: tried again at `at`, the claim given up. */
  retryAt(claim: ClaimedDelivery, attempts: number, at: number, error: string): Awaitable<boolean>;
  /** Failed for 24 hours: kept as failed, no longer tried. */
  giveUp(claim: ClaimedDelivery, attempts: number, error: string): Awaitable<boolean>;
  /** Deliveries still to be made (owed work, D29). */
  pending(): Awaitable<number>;
}

/** What both stores make and read alike: secrets and their seals, events, the outbox's sealed deliveries. */
export class WebhookSeals {
  private readonly outboxKey: Buffer;

  constructor(
    private readonly keys: UserKeys,
    masterKey: Buffer,
    readonly now: () => number,
  ) {
    this.outboxKey = createHmac("sha256", masterKey).update("corpus/webhook-outbox").digest();
  }

  /** A new registration of `user`, and its secret sealed with the user's data key. */
  registration(user: string, url: string, events: string[]): { webhook: RegisteredWebhook; sealed: Buffer } {
    const id = newId(ID_PREFIX.webhook);
    const secret = `whsec_${randomBytes(24).toString("base64url")}`;
    const created_at = new Date(this.now()).toISOString();
    return { webhook: { id, url, events, secret, created_at }, sealed: this.keys.sealFor(user, secret, `webhook/${id}`) };
  }

  /** The targets of `event` among the rows of `user`, their secrets opened. */
  targets(
    user: string,
    event: WebhookEvent,
    rows: Array<{ id: string; url: string; events: string; secret: Uint8Array }>,
  ): WebhookTarget[] {
    return rows
      .filter((r) => (JSON.parse(r.events) as string[]).includes(event))
      .map((r) => ({ url: r.url, secret: this.keys.openFor(user, r.secret, `webhook/${r.id}`).toString("utf8") }));
  }

  /** An event, and its delivery to each target sealed for the outbox. */
  event(type: WebhookEvent, data: Record<string, unknown>, targets: WebhookTarget[]): { id: string; body: string; sealed: Buffer[] } {
    const event = { id: newId(ID_PREFIX.event), type, created_at: new Date(this.now()).toISOString(), data };
    const body = JSON.stringify(event);
    const sealed = targets.map((t) => {
      const delivery: Delivery = { url: t.url, secret: t.secret, body, event_id: event.id };
      return seal(this.outboxKey, JSON.stringify(delivery), "webhook-outbox");
    });
    return { id: event.id, body, sealed };
  }

  delivery(sealed: Uint8Array): Delivery {
    return JSON.parse(open(this.outboxKey, sealed, "webhook-outbox").toString("utf8")) as Delivery;
  }
}

export const webhookOf = (r: { id: string; url: string; events: string; created_at: string }): Webhook => ({
  id: r.id,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  created_at: r.created_at,
});

/**
 * The embedded store. One node's worker runs one round at a time, so a claim needs no column of
 * its own: the outbox's tables stay as they were, and every claim is the node's (token 0).
 */
export class SqliteWebhookStore implements WebhookStore {
  private readonly seals: WebhookSeals;

  constructor(
    private readonly db: Database,
    keys: UserKeys,
    masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.seals = new WebhookSeals(keys, masterKey, now);
  }

  add(user: string, url: string, events: string[], max: number): RegisteredWebhook | { atCap: number } {
    const n = this.count(user);
    if (n >= max) return { atCap: n };
    const { webhook, sealed } = this.seals.registration(user, url, events);
    this.db
      .query("INSERT INTO webhooks (id, user_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(webhook.id, user, url, JSON.stringify(events), sealed, webhook.created_at);
    return webhook;
  }

  list(user: string): Webhook[] {
    return this.db
      .query<{ id: string; url: string; events: string; created_at: string }, [string]>(
        "SELECT id, url, events, created_at FROM webhooks WHERE user_id = ? ORDER BY created_at, id",
      )
      .all(user)
      .map(webhookOf);
  }

  count(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM webhooks WHERE user_id = ?").get(user)!.n;
  }

  remove(user: string, id: string): boolean {
    return this.db.query("DELETE FROM webhooks WHERE user_id = ? AND id = ?").run(user, id).changes > 0;
  }

  targets(user: string, event: WebhookEvent): WebhookTarget[] {
    const rows = this.db
      .query<{ id: string; url: string; events: string; secret: Uint8Array }, [string]>(
        "SELECT id, url, events, secret FROM webhooks WHERE user_id = ?",
      )
      .all(user);
    return this.seals.targets(user, event, rows);
  }

  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM webhooks WHERE user_id = ?1) AS n").get(user)!.n;
  }

  deleteUser(user: string): number {
    return this.db.query("DELETE FROM webhooks WHERE user_id = ?").run(user).changes;
  }

  enqueue(type: WebhookEvent, data: Record<string, unknown>, targets: WebhookTarget[]): { id: string; body: string } {
    const { id, body, sealed } = this.seals.event(type, data, targets);
    const insert = this.db.query("INSERT INTO webhook_outbox (delivery, next_attempt_at, created_at) VALUES (?, ?, ?)");
    for (const delivery of sealed) insert.run(delivery, this.now(), this.now());
    return { id, body };
  }

  claimDue(limit: number): ClaimedDelivery[] {
    return this.db
      .query<{ id: number; attempts: number; created_at: number; delivery: Uint8Array }, [number, number]>(
        "SELECT id, attempts, created_at, delivery FROM webhook_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
      )
      .all(this.now(), limit)
      .map((r) => ({ id: r.id, attempts: r.attempts, created_at: r.created_at, delivery: this.seals.delivery(r.delivery), token: 0 }));
  }

  hold(): boolean {
    return true;
  }

  delivered(claim: ClaimedDelivery): boolean {
    return this.db.query("DELETE FROM webhook_outbox WHERE id = ?").run(claim.id).changes > 0;
  }

  retryAt(claim: ClaimedDelivery, attempts: number, at: number, error: string): boolean {
    return (
      this.db
        .query("UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?")
        .run(attempts, at, error, claim.id).changes > 0
    );
  }

  giveUp(claim: ClaimedDelivery, attempts: number, error: string): boolean {
    return (
      this.db.query("UPDATE webhook_outbox SET state = 'failed', attempts = ?, last_error = ? WHERE id = ?").run(attempts, error, claim.id)
        .changes > 0
    );
  }

  pending(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_outbox WHERE state = 'pending'").get()!.n;
  }
}
