// The /mcp limit (second document part 8): a token bucket per client IP, refilled at
// CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE per minute up to that many. State is written behind
// to SQLite every second, so a restart does not hand every client a full bucket. A bucket that
// has refilled carries no state: sweep() drops those, in memory and in SQLite, and at most
// `maxEntries` buckets are kept (the least recently used goes first), so a stream of new
// addresses cannot grow either without end. One interface (IpBuckets), two stores (D33): this
// embedded one, and the shared one in PostgreSQL (token-bucket-postgres.ts), so that the limit
// holds across nodes behind one load balancer.
import type { Database } from "bun:sqlite";
import type { BackgroundGuard } from "../jobs/guard";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

export const bucketMigrations: Migration[] = [
  {
    id: "limits-003-ip-buckets",
    up(db) {
      db.exec("CREATE TABLE limits_ip_buckets (ip TEXT PRIMARY KEY, tokens REAL NOT NULL, updated_at INTEGER NOT NULL)");
    },
  },
];

export interface BucketDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the bucket is full again. */
  reset: number;
  /** Seconds until one request is allowed again (when not allowed). */
  retryAfter: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** The per-address buckets, wherever they are kept: every answer at once from the embedded store, later from PostgreSQL. */
export interface IpBuckets {
  /** Takes a token from `ip`'s bucket if it has one. */
  take(ip: string): Awaitable<BucketDecision>;
  /** Writes what is held behind. */
  flush(): Awaitable<void>;
  /** Drops every bucket that has refilled (and those past the most kept); how many. */
  sweep(): Awaitable<number>;
  stop(): Awaitable<void>;
}

/** A decision on a bucket holding `tokens` at `t` (ms), refilled at `perMs` up to `perMinute`. */
export function bucketDecision(allowed: boolean, tokens: number, t: number, perMinute: number, perMs: number): BucketDecision {
  return {
    allowed,
    limit: perMinute,
    remaining: Math.floor(tokens),
    reset: Math.ceil((t + (perMinute - tokens) / perMs) / 1000),
    retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - tokens) / perMs / 1000)),
  };
}

export const DEFAULT_MAX_BUCKETS = 100_000;

export class TokenBuckets implements IpBuckets {
  /** In order of last use, least recent first: the first entry is the one to evict. */
  private readonly buckets = new Map<string, Bucket>();
  /** Addresses whose row is to be written, or deleted (when their bucket is gone). */
  private readonly dirty = new Set<string>();
  private readonly perMs: number;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Database,
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
    private readonly maxEntries = DEFAULT_MAX_BUCKETS,
    guard?: BackgroundGuard,
  ) {
    this.perMs = perMinute / 60_000;
    this.deleteFullRows();
    const rows = db
      .query<{ ip: string; tokens: number; updated_at: number }, [number]>(
        "SELECT ip, tokens, updated_at FROM (SELECT * FROM limits_ip_buckets ORDER BY updated_at DESC LIMIT ?) ORDER BY updated_at",
      )
      .all(maxEntries);
    for (const row of rows) this.buckets.set(row.ip, { tokens: row.tokens, at: row.updated_at });
    // Rows beyond the cap (a lower cap than before the restart) go.
    if (rows.length === maxEntries) db.query("DELETE FROM limits_ip_buckets WHERE updated_at < ?").run(rows[0]!.updated_at);
    // Written behind on a guarded timer: a full disk keeps the counts in memory until a flush succeeds (D29).
    this.timer = setInterval(guard ? guard.wrap("ip_buckets", () => this.flush()) : () => this.flush(), 1000);
    this.timer.unref?.();
  }

  /** How many buckets are held in memory. */
  get size(): number {
    return this.buckets.size;
  }

  private isFull(b: Bucket, t: number): boolean {
    return b.tokens + (t - b.at) * this.perMs >= this.perMinute;
  }

  take(ip: string): BucketDecision {
    const t = this.now();
    let b = this.buckets.get(ip);
    if (b)
      this.buckets.delete(ip); // set again below: now the most recently used
    else {
      b = { tokens: this.perMinute, at: t };
      this.evictOver(this.maxEntries - 1);
    }
    b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(ip, b);
    this.dirty.add(ip);
    return bucketDecision(allowed, b.tokens, t, this.perMinute, this.perMs);
  }

  /** Evicts the least recently used buckets until at most `keep` are left. */
  private evictOver(keep: number): void {
    for (const ip of this.buckets.keys()) {
      if (this.buckets.size <= keep) return;
      this.buckets.delete(ip);
      this.dirty.add(ip);
    }
  }

  flush(): void {
    if (this.dirty.size === 0) return;
    const upsert = this.db.query(
      "INSERT INTO limits_ip_buckets (ip, tokens, updated_at) VALUES (?, ?, ?) ON CONFLICT (ip) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at",
    );
    const gone = this.db.query("DELETE FROM limits_ip_buckets WHERE ip = ?");
    const t = this.now();
    this.db.transaction(() => {
      for (const ip of this.dirty) {
        const b = this.buckets.get(ip);
        // A bucket that has refilled carries no state worth keeping; an evicted one has none.
        if (b && !this.isFull(b, t)) upsert.run(ip, b.tokens, b.at);
        else {
          this.buckets.delete(ip);
          gone.run(ip);
        }
      }
    })();
    this.dirty.clear();
  }

  /** Drops every bucket that has refilled, in memory and in SQLite; returns how many were in memory. */
  sweep(): number {
    const t = this.now();
    let dropped = 0;
    for (const [ip, b] of this.buckets) {
      if (!this.isFull(b, t)) continue;
      this.buckets.delete(ip);
      this.dirty.delete(ip);
      dropped++;
    }
    this.deleteFullRows();
    return dropped;
  }

  private deleteFullRows(): void {
    this.db.query("DELETE FROM limits_ip_buckets WHERE tokens + (? - updated_at) * ? >= ?").run(this.now(), this.perMs, this.perMinute);
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
