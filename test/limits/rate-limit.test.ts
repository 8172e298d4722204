import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { limitMigrations, RateLimiter } from "../../src/limits/rate-limit";
import { migrate } from "../../src/store/migrations";

const LIMITS = {
  query: { minute: 3, day: 5 },
  deep_search: { minute: 10, day: 100 },
  delete: { minute: 1, day: 1 },
  connectors: { minute: 2, day: 9 },
  webhooks: { minute: 2, day: 9 },
};
const T0 = Date.UTC(2026, 10, 22, 10, 0, 30); // 30 s into a minute

function limiter(db = new Database(":memory:"), clock = { t: T0 }) {
  if (!db.query("SELECT name FROM sqlite_master WHERE name = 'limits_windows'").get()) migrate(db, limitMigrations);
  return { db, clock, limiter: new RateLimiter(db, LIMITS, () => clock.t) };
}

describe("per-user windows (D16)", () => {
  test("the fixed headers are one object per window; the remaining counts go down; the 4th in a minute is refused", () => {
    const { limiter: l, clock } = limiter();
    const a = l.hit("alice", "query");
    const b = l.hit("alice", "query");
    expect(b.fixed).toBe(a.fixed);
    expect(a.fixed).toEqual({
      "x-ratelimit-limit-minute": "3",
      "x-ratelimit-reset-minute": String((T0 - 30_000 + 60_000) / 1000),
      "x-ratelimit-limit-day": "5",
      "x-ratelimit-reset-day": String(Date.UTC(2026, 10, 23) / 1000),
    });
    expect([a.remaining["x-ratelimit-remaining-minute"], b.remaining["x-ratelimit-remaining-minute"]]).toEqual(["2", "1"]);
    expect(l.hit("alice", "query").allowed).toBe(true);
    const refused = l.hit("alice", "query");
    expect(refused).toMatchObject({ allowed: false, retryAfter: 30 });
    expect(l.hit("bob", "query").allowed).toBe(true);

    clock.t += 30_000; // the next minute: a new window, new reset, the day count goes on
    const next = l.hit("alice", "query");
    expect(next.fixed).not.toBe(a.fixed);
    expect(next.remaining).toEqual({ "x-ratelimit-remaining-minute": "2", "x-ratelimit-remaining-day": "1" });
    l.stop();
  });

  test("day counts survive a restart on the same database; forget removes a user's windows", () => {
    const first = limiter();
    for (let i = 0; i < 3; i++) first.limiter.hit("alice", "query");
    first.limiter.stop();
    first.clock.t += 120_000;
    const second = limiter(first.db, first.clock);
    expect(second.limiter.peek("alice", "query").remaining).toEqual({
      "x-ratelimit-remaining-minute": "3",
      "x-ratelimit-remaining-day": "2",
    });
    expect(second.limiter.forget("alice")).toBe(2);
    expect(second.limiter.peek("alice", "query").remaining["x-ratelimit-remaining-day"]).toBe("5");
    second.limiter.stop();
  });
  test("a window ends at its end, not before: the last millisecond counts in it, the next starts afresh; a clock set back starts afresh too", () => {
    const { limiter: l, clock } = limiter();
    clock.t = T0 + 29_999; // the last millisecond of the minute
    for (let i = 0; i < 3; i++) expect(l.hit("alice", "query").allowed).toBe(true);
    expect(l.hit("alice", "query").allowed).toBe(false);
    clock.t += 1; // the next minute
    const next = l.hit("alice", "query");
    expect(next.allowed).toBe(true);
    expect(next.fixed["x-ratelimit-reset-minute"]).toBe(String((T0 - 30_000 + 120_000) / 1000));
    expect(next.remaining["x-ratelimit-remaining-minute"]).toBe("2");
    clock.t -= 120_000; // set back by two minutes
    expect(l.peek("alice", "query").remaining["x-ratelimit-remaining-minute"]).toBe("3");
    l.stop();
  });
  test("forgetting a user before the write-behind: nothing of theirs is written, others are", () => {
    const { limiter: l, db } = limiter();
    l.hit("alice", "query");
    l.hit("bob", "query");
    l.hit("alice", "deep_search");
    expect(l.forget("alice")).toBe(0);
    l.flush();
    expect(db.query("SELECT DISTINCT user_id FROM limits_windows").all()).toEqual([{ user_id: "bob" }]);
    l.hit("bob", "query");
    l.stop();
    expect(db.query("SELECT count FROM limits_windows WHERE user_id = 'bob' AND window = 'day'").get()).toEqual({ count: 2 });
  });
});
