// Per-user, per-endpoint fixed windows per minute and per UTC day (D16, first document part
// 8); rejected requests are not counted, nor are those refused as the caller's mistake once
// counted (D31: 400, 401, 413, 415 are given back). One interface (RateLimits), two stores (D33):
// the embedded one below keeps counts in memory for the hot path and writes them behind to
// SQLite every second (and on stop), so a restart keeps the day's count; the shared one
// (rate-limit-postgres.ts) counts in PostgreSQL, one statement per request, so that the limits
// hold across nodes.
import type { Database } from "bun:sqlite";
import type { Config } from "../config";
import type { BackgroundGuard } from "../jobs/guard";
import type { Migration } from "../store/migrations";
import type { Awaitable } from "../store/shared";

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

export type LimitedEndpoint = "query" | "deep_search" | "delete" | "connectors" | "webhooks";

/**
 * The routes limited per user, and the window each counts in: the one place that says which
 * routes carry the six X-RateLimit-* headers (D16). Adding a connector or a webhook is limited
 * too (issue 13): each validates a body and may reach out to a host.
 */
export const LIMITED_ROUTES: Readonly<Partial<Record<string, LimitedEndpoint>>> = {
  "POST /v1/query": "query",
  "POST /v1/deep_search": "deep_search",
  "DELETE /v1/delete_my_data": "delete",
  "POST /v1/connectors": "connectors",
  "PATCH /v1/connectors/:id": "connectors",
  "POST /v1/connectors/:id/oauth": "connectors",
  "POST /v1/webhooks": "webhooks",
};

export function limitsFrom(config: Config): Record<LimitedEndpoint, { minute: number; day: number }> {
  return {
    query: { minute: config.CORPUS_LIMIT_QUERY_PER_MINUTE, day: config.CORPUS_LIMIT_QUERY_PER_DAY },
    deep_search: { minute: config.CORPUS_LIMIT_DEEP_SEARCH_PER_MINUTE, day: config.CORPUS_LIMIT_DEEP_SEARCH_PER_DAY },
    delete: { minute: config.CORPUS_LIMIT_DELETE_PER_MINUTE, day: config.CORPUS_LIMIT_DELETE_PER_DAY },
    connectors: { minute: config.CORPUS_LIMIT_CONNECTORS_PER_MINUTE, day: config.CORPUS_LIMIT_CONNECTORS_PER_DAY },
    webhooks: { minute: config.CORPUS_LIMIT_WEBHOOKS_PER_MINUTE, day: config.CORPUS_LIMIT_WEBHOOKS_PER_DAY },
  };
}

export type Limits = Record<LimitedEndpoint, { minute: number; day: number }>;

type WindowName = "minute" | "day";
const WINDOW_MS: Record<WindowName, number> = { minute: 60_000, day: 86_400_000 };
const WINDOWS: WindowName[] = ["minute", "day"];

export interface Counter {
  start: number;
  /** When the window ends: a request before it counts here, with no division per request. */
  end: number;
  count: number;
}

/** One user's two windows on one endpoint. */
interface Windows {
  user: string;
  endpoint: LimitedEndpoint;
  minute: Counter;
  day: Counter;
  /** Changed since the last write-behind (a flag: cheaper than a Set insertion per request). */
  dirty: boolean;
}

export interface RateDecision {
  allowed: boolean;
  /**
   * The four X-RateLimit-* headers that stay the same for the whole minute window (limits and
   * reset times): the same object for every decision in it, so that it can be prepared once.
   */
  fixed: Readonly<Record<string, string>>;
  /** The two X-RateLimit-Remaining-* headers. */
  remaining: Record<string, string>;
  /** Seconds until the exhausted window resets (when not allowed). */
  retryAfter: number;
  /** The windows the request was counted in (by their starts), when it was: what `refund` gives back. */
  counted?: CountedIn;
}

/** Where one request was counted: the starts of its minute and day windows. */
export interface CountedIn {
  minute: number;
  day: number;
}

/**
 * Refused requests that do not count against a user's limits (D31): the caller's mistakes (a
 * bad body, a revoked token, too large, the wrong type), answered without the work a limit
 * protects. What the server could not do (409, 5xx) still counts.
 */
export const REFUNDED_STATUSES: ReadonlySet<number> = new Set([400, 401, 413, 415]);

/** The window `name` that holds time `t` (ms), with no count. */
export const windowOf = (name: WindowName, t: number): Counter => {
  const start = t - (t % WINDOW_MS[name]);
  return { start, end: start + WINDOW_MS[name], count: 0 };
};

/** The per-user windows, wherever they are counted (D33): each answer comes at once from the embedded store, later from PostgreSQL. */
export interface RateLimits {
  /** Counts one request if it is within both windows. */
  hit(user: string, endpoint: LimitedEndpoint): Awaitable<RateDecision>;
  /** The current state, counting nothing (for replayed idempotent responses). */
  peek(user: string, endpoint: LimitedEndpoint): Awaitable<RateDecision>;
  /**
   * Gives back the request `decision` counted (refused as the caller's mistake, D31), in the
   * windows it was counted in only; answers at once the windows as they then stand (a shared
   * store: as the request saw them with its count given back, the write going on behind).
   */
  refund(user: string, endpoint: LimitedEndpoint, decision: RateDecision): RateDecision;
  /** The headers for a caller not known (refused before authentication): whole windows; nothing stored. */
  unknownCaller(endpoint: LimitedEndpoint): RateDecision;
  /** The windows of `user` (a deletion asks every room, after it erased, that nothing is left). */
  rowsOf(user: string): Awaitable<number>;
  /** Removes every window of `user` (D13); how many rows were removed. */
  forget(user: string): Awaitable<number>;
  /** Writes what is held behind (the embedded store's counts, the shared store's refunds under way). */
  flush(): Awaitable<void>;
  /** Writes what is held behind, at stop. */
  stop(): Awaitable<void>;
}

/**
 * A decision's headers from the windows as they stand: the four fixed ones (limits, resets)
 * prepared once per endpoint and window, so that every decision in a minute gives the same object.
 */
export class RateHeaders {
  private readonly fixedHeaders = new Map<LimitedEndpoint, { minuteStart: number; dayStart: number; headers: Record<string, string> }>();

  constructor(readonly limits: Limits) {}

  private fixed(endpoint: LimitedEndpoint, minute: Counter, day: Counter): Record<string, string> {
    const cached = this.fixedHeaders.get(endpoint);
    if (cached && cached.minuteStart === minute.start && cached.dayStart === day.start) return cached.headers;
    const limit = this.limits[endpoint];
    const headers = Object.freeze({
      "x-ratelimit-limit-minute": String(limit.minute),
      "x-ratelimit-reset-minute": String(minute.end / 1000),
      "x-ratelimit-limit-day": String(limit.day),
      "x-ratelimit-reset-day": String(day.end / 1000),
    });
    this.fixedHeaders.set(endpoint, { minuteStart: minute.start, dayStart: day.start, headers });
    return headers;
  }

  /** The decision at time `t` on windows counted to `minute` and `day`; `counted`: this request was. */
  decision(endpoint: LimitedEndpoint, t: number, minute: Counter, day: Counter, allowed: boolean, counted: boolean): RateDecision {
    const limit = this.limits[endpoint];
    let retryAfter = 0;
    if (!allowed) {
      const until = day.count >= limit.day ? day.end : minute.end;
      retryAfter = Math.max(1, Math.ceil((until - t) / 1000));
    }
    return {
      allowed,
      retryAfter,
      ...(counted ? { counted: { minute: minute.start, day: day.start } } : {}),
      fixed: this.fixed(endpoint, minute, day),
      remaining: {
        // Never below 0, e.g. after a restart with a lower limit than the stored count.
        "x-ratelimit-remaining-minute": String(Math.max(0, limit.minute - minute.count)),
        "x-ratelimit-remaining-day": String(Math.max(0, limit.day - day.count)),
      },
    };
  }

  /** Whole windows at time `t`. */
  unknownCaller(endpoint: LimitedEndpoint, t: number): RateDecision {
    const limit = this.limits[endpoint];
    return {
      allowed: true,
      retryAfter: 0,
      fixed: this.fixed(endpoint, windowOf("minute", t), windowOf("day", t)),
      remaining: { "x-ratelimit-remaining-minute": String(limit.minute), "x-ratelimit-remaining-day": String(limit.day) },
    };
  }

  /** `decision` with its count given back in both windows (what a shared store answers at once). */
  refunded(endpoint: LimitedEndpoint, decision: RateDecision): RateDecision {
    if (!decision.counted) return decision;
    const limit = this.limits[endpoint];
    const more = (remaining: string | undefined, most: number) => String(Math.min(most, Number(remaining) + 1));
    return {
      allowed: decision.allowed,
      retryAfter: decision.retryAfter,
      fixed: decision.fixed,
      remaining: {
        "x-ratelimit-remaining-minute": more(decision.remaining["x-ratelimit-remaining-minute"], limit.minute),
        "x-ratelimit-remaining-day": more(decision.remaining["x-ratelimit-remaining-day"], limit.day),
      },
    };
  }
}

/** The embedded store: counts in memory, written behind to SQLite. */
export class RateLimiter implements RateLimits {
  // By user, then endpoint: both keys are strings the caller already holds, whose hashes the
  // engine keeps, where one joined key would be a new string to hash on every request.
  private readonly windows = new Map<string, Map<LimitedEndpoint, Windows>>();
  private readonly dirty: Windows[] = [];
  private readonly headers: RateHeaders;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(
    private readonly db: Database,
    private readonly limits: Limits,
    private readonly now: () => number = Date.now,
    guard?: BackgroundGuard,
  ) {
    this.headers = new RateHeaders(limits);
    for (const row of db
      .query<{ user_id: string; endpoint: LimitedEndpoint; window: WindowName; window_start: number; count: number }, []>(
        "SELECT * FROM limits_windows",
      )
      .all()) {
      this.of(row.user_id, row.endpoint)[row.window] = {
        start: row.window_start,
        end: row.window_start + WINDOW_MS[row.window],
        count: row.count,
      };
    }
    // Written behind on a guarded timer: a full disk keeps the counts in memory until a flush succeeds (D29).
    this.timer = setInterval(guard ? guard.wrap("rate_limit_windows", () => this.flush()) : () => this.flush(), 1000);
    this.timer.unref?.();
  }

  private of(user: string, endpoint: LimitedEndpoint): Windows {
    let byEndpoint = this.windows.get(user);
    if (!byEndpoint) this.windows.set(user, (byEndpoint = new Map()));
    let w = byEndpoint.get(endpoint);
    if (!w) {
      w = { user, endpoint, minute: { start: 0, end: 0, count: 0 }, day: { start: 0, end: 0, count: 0 }, dirty: false };
      byEndpoint.set(endpoint, w);
    }
    return w;
  }

  private decide(user: string, endpoint: LimitedEndpoint, count: boolean): RateDecision {
    const t = this.now();
    const limit = this.limits[endpoint];
    const w = this.of(user, endpoint);
    // A window that has ended (or a clock set back before it) starts afresh.
    if (t >= w.minute.end || t < w.minute.start) w.minute = windowOf("minute", t);
    if (t >= w.day.end || t < w.day.start) w.day = windowOf("day", t);
    const { minute, day } = w;
    const allowed = minute.count < limit.minute && day.count < limit.day;
    if (allowed && count) {
      minute.count++;
      day.count++;
      this.markDirty(w);
    }
    return this.headers.decision(endpoint, t, minute, day, allowed, allowed && count);
  }

  /** Counts one request if it is within both windows. */
  hit(user: string, endpoint: LimitedEndpoint): RateDecision {
    return this.decide(user, endpoint, true);
  }

  /** One that has ended since keeps its count, a new one is not lowered; the windows as they then stand. */
  refund(user: string, endpoint: LimitedEndpoint, decision: RateDecision): RateDecision {
    const counted = decision.counted;
    const w = this.windows.get(user)?.get(endpoint);
    if (w && counted) {
      let changed = false;
      for (const name of WINDOWS) {
        const window = w[name];
        if (window.start !== counted[name] || window.count === 0) continue;
        window.count--;
        changed = true;
      }
      if (changed) this.markDirty(w);
    }
    return this.peek(user, endpoint);
  }

  private markDirty(w: Windows): void {
    if (w.dirty) return;
    w.dirty = true;
    this.dirty.push(w);
  }

  /** The current state, counting nothing (for replayed idempotent responses). */
  peek(user: string, endpoint: LimitedEndpoint): RateDecision {
    return this.decide(user, endpoint, false);
  }

  unknownCaller(endpoint: LimitedEndpoint): RateDecision {
    return this.headers.unknownCaller(endpoint, this.now());
  }

  flush(): void {
    if (this.dirty.length === 0) return;
    const upsert = this.db.query(
      `INSERT INTO limits_windows (user_id, endpoint, window, window_start, count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (user_id, endpoint, window) DO UPDATE SET window_start = excluded.window_start, count = excluded.count`,
    );
    this.db.transaction(() => {
      for (const w of this.dirty) for (const name of WINDOWS) upsert.run(w.user, w.endpoint, name, w[name].start, w[name].count);
    })();
    // Only once written: a failed flush (a full disk) keeps the list as it was, with no entry twice.
    for (const w of this.dirty) w.dirty = false;
    this.dirty.length = 0;
  }

  /** In memory and stored. */
  rowsOf(user: string): number {
    const stored = this.db.query<{ n: number }, [string]>("SELECT count(*) AS n FROM limits_windows WHERE user_id = ?").get(user)!.n;
    return (this.windows.get(user)?.size ?? 0) + stored;
  }

  forget(user: string): number {
    const gone = this.windows.get(user);
    if (gone) {
      for (let i = this.dirty.length - 1; i >= 0; i--) if (gone.get(this.dirty[i]!.endpoint) === this.dirty[i]) this.dirty.splice(i, 1);
    }
    this.windows.delete(user);
    return this.db.query("DELETE FROM limits_windows WHERE user_id = ?").run(user).changes;
  }

  stop(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
