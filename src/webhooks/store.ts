// Webhook registrations per user (D14; secrets sealed with the user's data key) and the
// durable outbox of deliveries (sealed with a server key: a user's last event outlives the
// user's key). A delivery stays in the outbox until a receiver answers 2xx or 24 hours pass.
import type { Database } from "bun:sqlite";
import { createHmac, randomBytes } from "node:crypto";
import { open, seal } from "../crypto/aead";
import type { UserKeys } from "../crypto/user-keys";
import { ID_PREFIX, newId } from "../ids";
import type { Migration } from "../store/migrations";

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

/** One event to one target; `body` is the exact JSON that is signed and sent. */
export interface Delivery {
  url: string;
  secret: string;
  body: string;
  event_id: string;
}

export class WebhookStore {
  private readonly outboxKey: Buffer;

  constructor(
    private readonly db: Database,
    private readonly keys: UserKeys,
    masterKey: Buffer,
    private readonly now: () => number = Date.now,
  ) {
    this.outboxKey = createHmac("sha256", masterKey).update("corpus/webhook-outbox").digest();
  }

  add(user: string, url: string, events: string[]): Webhook & { secret: string } {
    const id = newId(ID_PREFIX.webhook);
    const secret = `whsec_${randomBytes(24).toString("base64url")}`;
    const created_at = new Date(this.now()).toISOString();
    this.db
      .query("INSERT INTO webhooks (id, user_id, url, events, secret, created_at) VALUES (?, ?, ?, ?, ?, ?)")
      .run(id, user, url, JSON.stringify(events), this.keys.sealFor(user, secret, `webhook/${id}`), created_at);
    return { id, url, events, secret, created_at };
  }

  list(user: string): Webhook[] {
    return this.db
      .query<{ id: string; url: string; events: string; created_at: string }, [string]>(
        "SELECT id, url, events, created_at FROM webhooks WHERE user_id = ? ORDER BY created_at, id",
      )
      .all(user)
      .map((r) => ({ id: r.id, url: r.url, events: JSON.parse(r.events) as string[], created_at: r.created_at }));
  }

  count(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM webhooks WHERE user_id = ?").get(user)!.n;
  }

  remove(user: string, id: string): boolean {
    return this.db.query("DELETE FROM webhooks WHERE user_id = ? AND id = ?").run(user, id).changes > 0;
  }

  /** The user's registrations for `event`, with their secrets (read before a deletion). */
  targets(user: string, event: WebhookEvent): Array<{ url: string; secret: string }> {
    return this.db
      .query<{ id: string; url: string; events: string; secret: Uint8Array }, [string]>(
        "SELECT id, url, events, secret FROM webhooks WHERE user_id = ?",
      )
      .all(user)
      .filter((r) => (JSON.parse(r.events) as string[]).includes(event))
      .map((r) => ({ url: r.url, secret: this.keys.openFor(user, r.secret, `webhook/${r.id}`).toString("utf8") }));
  }

  /** The webhooks `user` registered (a deletion asks every room, after it erased, that nothing is left: users/deletion.ts). */
  rowsOf(user: string): number {
    return this.db.query<{ n: number }, [string]>("SELECT (SELECT count(*) FROM webhooks WHERE user_id = ?1) AS n").get(user)!.n;
  }

  deleteUser(user: string): number {
    return this.db.query("DELETE FROM webhooks WHERE user_id = ?").run(user).changes;
  }

  /** Queues an event for each target (inside the caller's transaction); returns the event. */
  enqueue(
    type: WebhookEvent,
    data: Record<string, unknown>,
    targets: Array<{ url: string; secret: string }>,
  ): { id: string; body: string } {
    const event = { id: newId(ID_PREFIX.event), type, created_at: new Date(this.now()).toISOString(), data };
    const body = JSON.stringify(event);
    const insert = this.db.query("INSERT INTO webhook_outbox (delivery, next_attempt_at, created_at) VALUES (?, ?, ?)");
    for (const t of targets) {
      const delivery: Delivery = { url: t.url, secret: t.secret, body, event_id: event.id };
      insert.run(seal(this.outboxKey, JSON.stringify(delivery), "webhook-outbox"), this.now(), this.now());
    }
    return { id: event.id, body };
  }

  due(limit: number): Array<{ id: number; attempts: number; created_at: number; delivery: Delivery }> {
    return this.db
      .query<{ id: number; attempts: number; created_at: number; delivery: Uint8Array }, [number, number]>(
        "SELECT id, attempts, created_at, delivery FROM webhook_outbox WHERE state = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
      )
      .all(this.now(), limit)
      .map((r) => ({
        id: r.id,
        attempts: r.attempts,
        created_at: r.created_at,
        delivery: JSON.parse(open(this.outboxKey, r.delivery, "webhook-outbox").toString("utf8")) as Delivery,
      }));
  }

  delivered(id: number): void {
    this.db.query("DELETE FROM webhook_outbox WHERE id = ?").run(id);
  }

  retryAt(id: number, attempts: number, at: number, error: string): void {
    this.db.query("UPDATE webhook_outbox SET attempts = ?, next_attempt_at = ?, last_error = ? WHERE id = ?").run(attempts, at, error, id);
  }

  giveUp(id: number, attempts: number, error: string): void {
    this.db.query("UPDATE webhook_outbox SET state = 'failed', attempts = ?, last_error = ? WHERE id = ?").run(attempts, error, id);
  }

  pending(): number {
    return this.db.query<{ n: number }, []>("SELECT count(*) AS n FROM webhook_outbox WHERE state = 'pending'").get()!.n;
  }
}
