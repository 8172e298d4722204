// Login attempts (D27): failures counted per account and per client address in a sliding
// window; past the limit a login is refused before the password is checked, so guessing
// costs the attacker the window, not us an argon2 hash per try. An attempt is counted as a
// failure before its password is checked, and taken back if it was right (issue 35): guesses
// sent at once cannot all pass the check while the first hashes run. Bounded: at most
// MAX_KEYS counters are kept (the oldest goes first).
export const ACCOUNT_FAILURES = 5;
export const ADDRESS_FAILURES = 20;
export const WINDOW_MS = 15 * 60_000;
const MAX_KEYS = 100_000;

export class LoginThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(private readonly now: () => number = Date.now) {}

  private recent(key: string): number[] {
    const since = this.now() - WINDOW_MS;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  /** Seconds until a login for this account from this address may be tried, or 0. */
  blockedFor(account: string, address: string): number {
    const waits: number[] = [];
    for (const [key, limit] of [
      [`a:${account}`, ACCOUNT_FAILURES],
      [`i:${address}`, ADDRESS_FAILURES],
    ] as const) {
      const list = this.recent(key);
      if (list.length >= limit) waits.push(Math.ceil((list[list.length - limit]! + WINDOW_MS - this.now()) / 1000));
    }
    return waits.length ? Math.max(1, ...waits) : 0;
  }

  /**
   * A sign-in about to check its password: refused with the seconds to wait, or counted now as
   * a failure, to be taken back by the attempt's `succeeded` (the right password) or `refund`
   * (no password was checked).
   */
  attempt(account: string, address: string): { wait: number } | { attempt: LoginAttempt } {
    const wait = this.blockedFor(account, address);
    if (wait > 0) return { wait };
    const at = this.now();
    const keys = [`a:${account}`, `i:${address}`] as const;
    for (const key of keys) {
      const list = this.recent(key);
      list.push(at);
      this.failures.delete(key);
      this.failures.set(key, list.slice(-ADDRESS_FAILURES));
      if (this.failures.size > MAX_KEYS) this.failures.delete(this.failures.keys().next().value!);
    }
    const takeBack = (key: string) => {
      const list = this.failures.get(key);
      const i = list?.lastIndexOf(at) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    };
    return {
      attempt: {
        succeeded: () => {
          this.failures.delete(keys[0]);
          takeBack(keys[1]);
        },
        refund: () => keys.forEach(takeBack),
      },
    };
  }
}

/** A sign-in counted by LoginThrottle.attempt while its password is checked. */
export interface LoginAttempt {
  /** The password was right: the account's failures are forgotten, this one is not the address's. */
  succeeded(): void;
  /** No password was checked (the hashes were busy): the attempt does not count. */
  refund(): void;
}

/** At most `limit` events per key in a sliding window (dynamic registrations per address). */
export class WindowLimit {
  private readonly events = new Map<string, number[]>();

  constructor(
    private readonly limit: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Counts one event; answers 0 when allowed, else the seconds until one is. */
  take(key: string): number {
    const since = this.now() - this.windowMs;
    const list = (this.events.get(key) ?? []).filter((t) => t > since);
    if (list.length >= this.limit) {
      this.events.set(key, list);
      return Math.max(1, Math.ceil((list[0]! + this.windowMs - this.now()) / 1000));
    }
    list.push(this.now());
    this.events.delete(key);
    this.events.set(key, list);
    if (this.events.size > MAX_KEYS) this.events.delete(this.events.keys().next().value!);
    return 0;
  }
}
