// Login attempts (D27): failures counted in a sliding window per account and client address
// together (a small limit) and per address; past either a login is refused before the password
// is checked, so guessing costs the attacker the window, not us an argon2 hash per try. Per
// account from anywhere (a much higher limit) guessing spread over many addresses is slowed,
// never locked (OWASP's advice against lockout as denial of service): past it, addresses the
// account has not signed in from get one attempt between them every SPRAYED_ACCOUNT_MS, and
// an address or a browser (its device cookie) it signed in from within KNOWN_ADDRESS_MS is not
// slowed at all; so strangers spraying an account cannot keep its owner out (issue 35). An attempt is counted as a failure
// before its password is checked, and taken back if it was right: guesses sent at once cannot
// all pass the check while the first hashes run. Bounded: at most MAX_KEYS counters and
// MAX_KEYS accounts' known places, KNOWN_PER_ACCOUNT each, are kept (the oldest goes first), so
// that one account signing in again and again forgets only its own places, never another's.
import type { Awaitable } from "../store/shared";

/** Failures for one account from one address (an IPv6 /64). */
export const ACCOUNT_ADDRESS_FAILURES = 5;
/** Failures for one account from every address together: past it, guessing is slowed (SPRAYED_ACCOUNT_MS). */
export const ACCOUNT_FAILURES = 100;
/**
 * Past ACCOUNT_FAILURES, one attempt from the addresses the account has not signed in from, all
 * together, per this long: at most 60 more guesses in a window, and a person at a new address
 * waits seconds, not the window.
 */
export const SPRAYED_ACCOUNT_MS = 15_000;
/** An address (an IPv6 /64) or a device an account signed in from is known this long: never slowed by strangers' failures. */
export const KNOWN_ADDRESS_MS = 30 * 86_400_000;
/** Failures from one address, whatever the accounts. */
export const ADDRESS_FAILURES = 20;
export const WINDOW_MS = 15 * 60_000;
export const MAX_KEYS = 100_000;
/** Addresses and devices known to one account at most: its oldest is forgotten first. */
export const KNOWN_PER_ACCOUNT = 32;

export interface Counter {
  key: string;
  limit: number;
}

/** The counters a login counts in (with `account` undefined, not a possible account name: the address's only). */
export type LoginCounters = { pair?: Counter; account?: Counter; address: Counter };

/**
 * The counters of a login: with `account` undefined (not a possible account name), the address's
 * only, never a key of its own. Account names hold no space (SAFE_SUBJECT).
 */
export function loginCounters(account: string | undefined, address: string): LoginCounters {
  const counters = { address: { key: `i:${address}`, limit: ADDRESS_FAILURES } };
  if (account === undefined) return counters;
  return {
    ...counters,
    pair: { key: `p:${account} ${address}`, limit: ACCOUNT_ADDRESS_FAILURES },
    account: { key: `a:${account}`, limit: ACCOUNT_FAILURES },
  };
}

/** Where a sign-in comes from: the address, and the device when the browser has one. */
export function loginPlaces(address: string, device: string | undefined): string[] {
  return device === undefined ? [address] : [address, `device:${device}`];
}

/**
 * Seconds until a login counted in `counters` may be tried, or 0, from each counter's failures
 * within the window (`recent`, oldest first) and whether the account knows the place it comes
 * from (`known`, asked only when the account is sprayed): the one rule of both stores.
 */
export function loginWait(counters: LoginCounters, recent: (key: string) => number[], known: () => boolean, now: number): number {
  const waits: number[] = [];
  const { account: sprayed, ...refusing } = counters;
  for (const { key, limit } of Object.values(refusing)) {
    const list = recent(key);
    if (list.length >= limit) waits.push(Math.ceil((list[list.length - limit]! + WINDOW_MS - now) / 1000));
  }
  // Sprayed from many addresses: slowed from those it has not signed in from, never refused for the window.
  const list = sprayed ? recent(sprayed.key) : [];
  if (sprayed && list.length >= sprayed.limit && !known()) {
    const wait = list[list.length - 1]! + SPRAYED_ACCOUNT_MS - now;
    if (wait > 0) waits.push(Math.ceil(wait / 1000));
  }
  return waits.length ? Math.max(1, ...waits) : 0;
}

/** The sign-in throttle, wherever it counts: in this node's memory (LoginThrottle) or in the shared database (throttle-postgres.ts, D33). */
export interface SignInThrottle {
  attempt(account: string | undefined, address: string, device?: string): Awaitable<{ wait: number } | { attempt: LoginAttempt }>;
}

/** At most a number of events per key in a sliding window, wherever they are counted: answers 0 when allowed, else the seconds until one is. */
export interface Allowance {
  take(key: string): Awaitable<number>;
}

export class LoginThrottle implements SignInThrottle {
  private readonly failures = new Map<string, number[]>();
  /** When each account last signed in from each of its places: an address, or `device:${device}`. */
  private readonly known = new Map<string, Map<string, number>>();

  constructor(private readonly now: () => number = Date.now) {}

  private recent(key: string): number[] {
    const since = this.now() - WINDOW_MS;
    const list = (this.failures.get(key) ?? []).filter((t) => t > since);
    if (list.length === 0) this.failures.delete(key);
    else this.failures.set(key, list);
    return list;
  }

  private isKnown(account: string, address: string, device: string | undefined): boolean {
    const known = this.known.get(account);
    return loginPlaces(address, device).some((place) => {
      const at = known?.get(place);
      if (at !== undefined && at + KNOWN_ADDRESS_MS <= this.now()) known!.delete(place);
      return at !== undefined && at + KNOWN_ADDRESS_MS > this.now();
    });
  }

  /** `account` signed in from `address` (and `device`): known there for KNOWN_ADDRESS_MS. */
  private remember(account: string, address: string, device: string | undefined): void {
    const known = this.known.get(account) ?? new Map<string, number>();
    this.known.delete(account);
    this.known.set(account, known);
    if (this.known.size > MAX_KEYS) this.known.delete(this.known.keys().next().value!);
    for (const place of loginPlaces(address, device)) {
      known.delete(place);
      known.set(place, this.now());
      if (known.size > KNOWN_PER_ACCOUNT) known.delete(known.keys().next().value!);
    }
  }

  /** Seconds until a login for this account from this address (and device, the id its browser sent) may be tried, or 0. */
  blockedFor(account: string | undefined, address: string, device?: string): number {
    return loginWait(
      loginCounters(account, address),
      (key) => this.recent(key),
      () => this.isKnown(account!, address, device),
      this.now(),
    );
  }

  /**
   * A sign-in about to check its password: refused with the seconds to wait, or counted now as
   * a failure, to be taken back by the attempt's `succeeded` (the right password), `busy` (no
   * password was checked: the address still pays) or `refund` (nothing was checked at all).
   */
  attempt(account: string | undefined, address: string, device?: string): { wait: number } | { attempt: LoginAttempt } {
    const wait = this.blockedFor(account, address, device);
    if (wait > 0) return { wait };
    const at = this.now();
    const counters = loginCounters(account, address);
    for (const { key, limit } of Object.values(counters)) {
      const list = this.recent(key);
      list.push(at);
      this.failures.delete(key);
      this.failures.set(key, list.slice(-limit));
      if (this.failures.size > MAX_KEYS) this.failures.delete(this.failures.keys().next().value!);
    }
    const takeBack = (counter: Counter | undefined) => {
      const list = counter && this.failures.get(counter.key);
      const i = list?.lastIndexOf(at) ?? -1;
      if (i >= 0) list!.splice(i, 1);
    };
    return {
      attempt: {
        succeeded: (issued) => {
          if (counters.pair) this.failures.delete(counters.pair.key);
          takeBack(counters.account);
          takeBack(counters.address);
          if (account !== undefined) this.remember(account, address, issued);
        },
        busy: () => {
          takeBack(counters.pair);
          takeBack(counters.account);
        },
        refund: () => Object.values(counters).forEach(takeBack),
      },
    };
  }
}

/** A sign-in counted by LoginThrottle.attempt while its password is checked. */
export interface LoginAttempt {
  /**
   * The password was right: this address's failures for the account are forgotten, this attempt
   * is not a failure (the account-wide count stays: it bounds guessing from everywhere), and the
   * address and `issued`, the device id this sign-in gives the browser, are known to the account
   * (KNOWN_ADDRESS_MS). Never the id the browser sent: a stranger able to put a cookie in it (a
   * sibling site's) would have that id made known, as a fixed session id would be.
   */
  succeeded(issued?: string): Awaitable<void>;
  /**
   * Refused because the hashes were busy: not a failure of the account's, but still one of the
   * address's, so retrying into a full gate costs the one retrying (issue 35).
   */
  busy(): Awaitable<void>;
  /** Nothing was checked for a reason not the client's: the attempt does not count. */
  refund(): Awaitable<void>;
}

/** At most `limit` events per key in a sliding window (dynamic registrations per address). */
export class WindowLimit implements Allowance {
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
