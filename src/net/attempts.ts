// Bounded connection attempts (issue 13 item 7). A server that accepts and then closes made
// the PostgreSQL driver reconnect at once, without end (~600 connections a second, long
// after the request that started it had its answer). Every new connection of a connector
// asks here first: after `free` attempts that have not led to a working connection, the next
// one waits 1 s, then 2 s, 4 s … at most 5 minutes after the last; one asked for sooner is
// refused at once (with the last failure's reason) and makes no connection.

const BASE_MS = 1_000;
const MAX_MS = 5 * 60_000;

/** The next attempt is not allowed yet. */
export class RetryLater extends Error {
  constructor(
    readonly waitMs: number,
    readonly reason: string | undefined,
  ) {
    super(`${reason ?? "the connection failed"}; next attempt in ${Math.ceil(waitMs / 1000)} s`);
  }
}

export class ConnectAttempts {
  /** Connections opened since the last one that worked. */
  private streak = 0;
  private lastAt = 0;
  private reason?: string;

  constructor(
    private readonly now: () => number = Date.now,
    /** Attempts allowed back to back (a pool opening its connections at once). */
    private readonly free = 1,
  ) {}

  /** The wait after `failures` attempts beyond the free ones. */
  static backoff(failures: number): number {
    return Math.min(MAX_MS, BASE_MS * 2 ** Math.max(0, failures - 1));
  }

  /** Before opening a connection: throws RetryLater while the backoff runs. */
  begin(): void {
    if (this.streak >= this.free) {
      const wait = this.lastAt + ConnectAttempts.backoff(this.streak - this.free + 1) - this.now();
      if (wait > 0) throw new RetryLater(wait, this.reason);
    }
    this.streak++;
    this.lastAt = this.now();
  }

  /** A connection worked (a query or a login succeeded): the count starts again. */
  succeeded(): void {
    this.streak = 0;
    this.reason = undefined;
  }

  /** Why the last attempt failed, repeated while the next one must wait. */
  failed(reason: string): void {
    this.reason = reason;
  }

  /** Attempts since the last success (for tests and logs). */
  get failures(): number {
    return this.streak;
  }
}
