// The per-user windows in the shared PostgreSQL (D33), so that several nodes give one user no
// more than the limit between them. A request is counted, or refused, by one statement: an
// upsert whose condition is the limit, the row locked while it is judged, so two nodes counting
// at once for the same user are serialised by PostgreSQL and never both take the last request.
// A row holds both windows of one user's endpoint: their starts (ms, by the node's clock; nodes
// keep their clocks in step, as for tokens' expiry) and counts. PostgreSQL holds what the
// embedded store holds at rest (limits_windows): the user id, the endpoint, starts and counts.
import type postgres from "postgres";
import type { BackgroundGuard } from "../jobs/guard";
import type { PgMigration } from "../store/postgres-migrations";
import type { SharedQueries } from "../store/shared";
import { type Counter, type LimitedEndpoint, type Limits, type RateDecision, RateHeaders, type RateLimits, windowOf } from "./rate-limit";

export const LIMITS_TABLE = "corpus_limits_windows";

export const rateLimitPgMigrations: PgMigration[] = [
  {
    id: `${LIMITS_TABLE}-001-table`,
    up: (tx) =>
      tx.unsafe(`CREATE TABLE ${LIMITS_TABLE} (
        user_id text NOT NULL,
        endpoint text NOT NULL,
        minute_start bigint NOT NULL,
        minute_count integer NOT NULL,
        day_start bigint NOT NULL,
        day_count integer NOT NULL,
        PRIMARY KEY (user_id, endpoint)
      )`),
  },
];

/** A row as read (bigint comes as text). */
interface WindowRow {
  minute_start: string;
  minute_count: number;
  day_start: string;
  day_count: number;
  counted: boolean;
}

/** The window holding `t` with the count `row` has for it: none when the row's window is another (ended, or the clock set back). */
function counter(current: Counter, start: string | undefined, count: number | undefined): Counter {
  return Number(start) === current.start ? { ...current, count: count ?? 0 } : current;
}

export class PostgresRateLimiter implements RateLimits {
  private readonly headers: RateHeaders;
  /** Refunds being written: awaited at stop. */
  private readonly writing = new Set<Promise<unknown>>();

  constructor(
    private readonly sql: SharedQueries,
    private readonly limits: Limits,
    private readonly now: () => number = Date.now,
    /** Runs the writes that go on behind an answer (a refund), logging a failure once per streak. */
    private readonly guard: BackgroundGuard,
  ) {
    this.headers = new RateHeaders(limits);
  }

  /** The same store inside `tx` (a deletion's: users/deletion.ts): the user's windows erased and counted with the rest. */
  within(tx: postgres.TransactionSql): PostgresRateLimiter {
    return new PostgresRateLimiter(tx, this.limits, this.now, this.guard);
  }

  async hit(user: string, endpoint: LimitedEndpoint): Promise<RateDecision> {
    const t = this.now();
    const limit = this.limits[endpoint];
    const minute = windowOf("minute", t);
    const day = windowOf("day", t);
    // Counted where both windows have room (a window other than the current one counts as
    // empty); else not written, and the row as it stands is read in the same statement.
    const [row] = await this.sql<WindowRow[]>`
      WITH counted AS (
        INSERT INTO ${this.sql(LIMITS_TABLE)} AS w (user_id, endpoint, minute_start, minute_count, day_start, day_count)
        VALUES (${user}, ${endpoint}, ${minute.start}, 1, ${day.start}, 1)
        ON CONFLICT (user_id, endpoint) DO UPDATE SET
          minute_count = CASE WHEN w.minute_start = EXCLUDED.minute_start THEN w.minute_count + 1 ELSE 1 END,
          minute_start = EXCLUDED.minute_start,
          day_count = CASE WHEN w.day_start = EXCLUDED.day_start THEN w.day_count + 1 ELSE 1 END,
          day_start = EXCLUDED.day_start
        WHERE (w.minute_start <> EXCLUDED.minute_start OR w.minute_count < ${limit.minute})
          AND (w.day_start <> EXCLUDED.day_start OR w.day_count < ${limit.day})
        RETURNING minute_start, minute_count, day_start, day_count, true AS counted
      )
      SELECT * FROM counted
      UNION ALL
      SELECT minute_start, minute_count, day_start, day_count, false AS counted FROM ${this.sql(LIMITS_TABLE)}
      WHERE user_id = ${user} AND endpoint = ${endpoint} AND NOT EXISTS (SELECT 1 FROM counted)`;
    const allowed = row?.counted === true;
    return this.headers.decision(
      endpoint,
      t,
      counter(minute, row?.minute_start, row?.minute_count),
      counter(day, row?.day_start, row?.day_count),
      allowed,
      allowed,
    );
  }

  async peek(user: string, endpoint: LimitedEndpoint): Promise<RateDecision> {
    const t = this.now();
    const limit = this.limits[endpoint];
    const [row] = await this.sql<Omit<WindowRow, "counted">[]>`
      SELECT minute_start, minute_count, day_start, day_count FROM ${this.sql(LIMITS_TABLE)}
      WHERE user_id = ${user} AND endpoint = ${endpoint}`;
    const minute = counter(windowOf("minute", t), row?.minute_start, row?.minute_count);
    const day = counter(windowOf("day", t), row?.day_start, row?.day_count);
    return this.headers.decision(endpoint, t, minute, day, minute.count < limit.minute && day.count < limit.day, false);
  }

  refund(user: string, endpoint: LimitedEndpoint, decision: RateDecision): RateDecision {
    const counted = decision.counted;
    if (!counted) return decision;
    // Only in the windows it was counted in: one that has ended since keeps its count.
    const write = () => this.sql`
      UPDATE ${this.sql(LIMITS_TABLE)} SET
        minute_count = CASE WHEN minute_start = ${counted.minute} AND minute_count > 0 THEN minute_count - 1 ELSE minute_count END,
        day_count = CASE WHEN day_start = ${counted.day} AND day_count > 0 THEN day_count - 1 ELSE day_count END
      WHERE user_id = ${user} AND endpoint = ${endpoint}`;
    const written = this.guard.run("rate_limit_windows", write);
    this.writing.add(written);
    void written.then(() => this.writing.delete(written));
    return this.headers.refunded(endpoint, decision);
  }

  unknownCaller(endpoint: LimitedEndpoint): RateDecision {
    return this.headers.unknownCaller(endpoint, this.now());
  }

  async rowsOf(user: string): Promise<number> {
    const [row] = await this.sql<{ n: string }[]>`SELECT count(*) AS n FROM ${this.sql(LIMITS_TABLE)} WHERE user_id = ${user}`;
    return Number(row!.n);
  }

  async forget(user: string): Promise<number> {
    return (await this.sql`DELETE FROM ${this.sql(LIMITS_TABLE)} WHERE user_id = ${user}`).count;
  }

  /** Every count is written as it is made; refunds under way are awaited. */
  async flush(): Promise<void> {
    await Promise.all(this.writing);
  }

  stop(): Promise<void> {
    return this.flush();
  }
}
