// The sign-in throttle as its tests drive it (test/oauth/throttle*.test.ts): LoginThrottle alone, on a fake clock.
import { expect } from "bun:test";
import { ACCOUNT_ADDRESS_FAILURES, ACCOUNT_FAILURES, LoginThrottle } from "../../src/oauth/throttle";

/** `n` wrong passwords for `account` from `address` (each counted, none taken back). */
export function fail(throttle: LoginThrottle, account: string | undefined, address: string, n: number) {
  for (let i = 0; i < n; i++) expect("attempt" in throttle.attempt(account, address)).toBe(true);
}

/** Bob signed in from home once; then strangers spray his account from 20 addresses (the account-wide limit). */
export function sprayed() {
  const clock = { now: 1_000_000 };
  const throttle = new LoginThrottle(() => clock.now);
  const home = throttle.attempt("bob", "192.0.2.10");
  if (!("attempt" in home)) throw new Error("refused");
  home.attempt.succeeded();
  const addresses = ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES;
  for (let a = 0; a < addresses; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
  return { clock, throttle };
}
