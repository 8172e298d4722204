// The /mcp limit (second document part 8): a token bucket per client IP, refilled at
// CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE per minute up to that many. State is written behind
// to SQLite every second, so a restart does not hand every client a full bucket.
import type { Database } from "bun:sqlite";
import type { Migration } from "../store/migrations";

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

export class TokenBuckets {
  private readonly buckets = new Map<string, Bucket>();
  private readonly dirty = new Set<string>();
  private readonly perMs: number;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Database,
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {
    this.perMs = perMinute / 60_000;
    for (const row of db.query<{ ip: string; tokens: number; updated_at: number }, []>("SELECT ip, tokens, updated_at FROM limits_ip_buckets").all()) {
      this.buckets.set(row.ip, { tokens: row.tokens, at: row.updated_at });
    }
    this.timer = setInterval(() => this.flush(), 1000);
    this.timer.unref?.();
  }

  take(ip: string): BucketDecision {
    const t = this.now();
    const b = this.buckets.get(ip) ?? { tokens: this.perMinute, at: t };
    b.tokens = Math.min(this.perMinute, b.tokens + (t - b.at) * this.perMs);
    b.at = t;
    const allowed = b.tokens >= 1;
    if (allowed) b.tokens -= 1;
    this.buckets.set(ip, b);
    this.dirty.add(ip);
    return {
      allowed,
      limit: this.perMinute,
      remaining: Math.floor(b.tokens),
      reset: Math.ceil((t + (this.perMinute - b.tokens) / this.perMs) / 1000),
      retryAfter: allowed ? 0 : Math.max(1, Math.ceil((1 - b.tokens) / this.perMs / 1000)),
    };
  }

  flush(): void {
    if (this.dirty.size === 0) return;
    const upsert = this.db.query(
      "INSERT INTO limits_ip_buckets (ip, tokens, updated_at) VALUES (?, ?, ?) ON CONFLICT (ip) DO UPDATE SET tokens = excluded.tokens, updated_at = excluded.updated_at",
    );
    const full = this.db.query("DELETE FROM limits_ip_buckets WHERE ip = ?");
    this.db.transaction(() => {
      for (const ip of this.dirty) {
        const b = this.buckets.get(ip)!;
        // A bucket that has refilled carries no state worth keeping.
        if (b.tokens + (this.now() - b.at) * this.perMs >= this.perMinute) {
          this.buckets.delete(ip);
          full.run(ip);
        } else upsert.run(ip, b.tokens, b.at);
      }
    })();
    this.dirty.clear();
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
