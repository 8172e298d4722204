// Per-user, per-endpoint fixed windows per minute and per UTC day (D16, first document part
// 8). Counts are kept in memory for the hot path and written behind to SQLite every second
// (and on stop), so a restart keeps the day's count; rejected requests are not counted.
import type { Database } from "bun:sqlite";
import type { Config } from "../config";
import type { Migration } from "../store/migrations";

export const limitMigrations: Migration[] = [
  {
    id: "limits-001-windows",
    up(db) {
      db.exec(`CREATE TABLE limits_windows (
        user_id TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        window TEXT NOT NULL,
        window_start INTEGER NOT NULL,
        count INTEGER NOT NULL,
        PRIMARY KEY (user_id, endpoint, window)
      )`);
    },
  },
];

export type LimitedEndpoint = "query" | "deep_search" | "delete";

export function limitsFrom(config: Config): Record<LimitedEndpoint, { minute: number; day: number }> {
  return {
    query: { minute: config.CORPUS_LIMIT_QUERY_PER_MINUTE, day: config.CORPUS_LIMIT_QUERY_PER_DAY },
    deep_search: { minute: config.CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE, day: config.CORPUS_LIMIT_DEEP_SEARCH_PER_DAY },
    delete: { minute: config.CORPUS_LIMIT_DELETE_PER_MINUTE, day: config.CORPUS_LIMIT_DELETE_PER_DAY },
  };
}

type WindowName = "minute" | "day";
const WINDOW_MS: Record<WindowName, number> = { minute: 60_000, day: 86_400_000 };

interface Counter {
  start: number;
  count: number;
}

export interface RateDecision {
  allowed: boolean;
  /** The six X-RateLimit-* headers (first document part 8). */
  headers: Record<string, string>;
  /** Seconds until the exhausted window resets (when not allowed). */
  retryAfter: number;
}

export class RateLimiter {
  private readonly counters = new Map<string, Counter>();
  private readonly dirty = new Set<string>();
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Database,
    private readonly limits: Record<LimitedEndpoint, { minute: number; day: number }>,
    private readonly now: () => number = Date.now,
  ) {
    for (const row of db
      .query<{ user_id: string; endpoint: string; window: WindowName; window_start: number; count: number }, []>("SELECT * FROM limits_windows")
      .all()) {
      this.counters.set(key(row.user_id, row.endpoint, row.window), { start: row.window_start, count: row.count });
    }
    this.timer = setInterval(() => this.flush(), 1000);
    this.timer.unref?.();
  }

  private counter(user: string, endpoint: LimitedEndpoint, window: WindowName, t: number): Counter {
    const k = key(user, endpoint, window);
    const start = t - (t % WINDOW_MS[window]);
    let c = this.counters.get(k);
    if (!c || c.start !== start) {
      c = { start, count: 0 };
      this.counters.set(k, c);
    }
    return c;
  }

  private decide(user: string, endpoint: LimitedEndpoint, count: boolean): RateDecision {
    const t = this.now();
    const limit = this.limits[endpoint];
    const minute = this.counter(user, endpoint, "minute", t);
    const day = this.counter(user, endpoint, "day", t);
    const allowed = minute.count < limit.minute && day.count < limit.day;
    if (allowed && count) {
      minute.count++;
      day.count++;
      this.dirty.add(key(user, endpoint, "minute"));
      this.dirty.add(key(user, endpoint, "day"));
    }
    const minuteReset = (minute.start + WINDOW_MS.minute) / 1000;
    const dayReset = (day.start + WINDOW_MS.day) / 1000;
    let retryAfter = 0;
    if (!allowed) {
      const until = day.count >= limit.day ? dayReset : minuteReset;
      retryAfter = Math.max(1, Math.ceil(until - t / 1000));
    }
    return {
      allowed,
      retryAfter,
      headers: {
        "x-ratelimit-limit-minute": String(limit.minute),
        "x-ratelimit-remaining-minute": String(Math.max(0, limit.minute - minute.count)),
        "x-ratelimit-reset-minute": String(minuteReset),
        "x-ratelimit-limit-day": String(limit.day),
        "x-ratelimit-remaining-day": String(Math.max(0, limit.day - day.count)),
        "x-ratelimit-reset-day": String(dayReset),
      },
    };
  }

  /** Counts one request if it is within both windows. */
  hit(user: string, endpoint: LimitedEndpoint): RateDecision {
    return this.decide(user, endpoint, true);
  }

  /** The current state, counting nothing (for replayed idempotent responses). */
  peek(user: string, endpoint: LimitedEndpoint): RateDecision {
    return this.decide(user, endpoint, false);
  }

  flush(): void {
    if (this.dirty.size === 0) return;
    const upsert = this.db.query(
      `INSERT INTO limits_windows (user_id, endpoint, window, window_start, count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, endpoint, window) DO UPDATE SET window_start = excluded.window_start, count = excluded.count`,
    );
    this.db.transaction(() => {
      for (const k of this.dirty) {
        const c = this.counters.get(k);
        if (!c) continue;
        const [user, endpoint, window] = k.split(SEP) as [string, string, string];
        upsert.run(user, endpoint, window, c.start, c.count);
      }
    })();
    this.dirty.clear();
  }

  /** Removes every window of `user` (D13); returns how many rows were removed. */
  forget(user: string): number {
    const prefix = `${user}${SEP}`;
    for (const k of [...this.counters.keys()]) if (k.startsWith(prefix)) this.counters.delete(k);
    for (const k of [...this.dirty]) if (k.startsWith(prefix)) this.dirty.delete(k);
    return this.db.query("DELETE FROM limits_windows WHERE user_id = ?").run(user).changes;
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}

// User ids never contain a NUL (tokens.USER_ID_PATTERN; the verifier refuses control characters).
const SEP = "\u0000";
const key = (user: string, endpoint: string, window: string) => `${user}${SEP}${endpoint}${SEP}${window}`;
