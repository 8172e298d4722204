// The sign-in throttle's counters (D27, OWASP on lockout): one address's failures for an
// account refuse that account from that address only; the account-wide limit, much higher,
// bounds guessing spread over many addresses; a refusal because the hashes were busy is the
// address's, not the account's. Counted without hashing: LoginThrottle alone, on a fake clock.
import { describe, expect, test } from "bun:test";
import { ACCOUNT_ADDRESS_FAILURES, ACCOUNT_FAILURES, ADDRESS_FAILURES, LoginThrottle, WINDOW_MS } from "../../src/oauth/throttle";

/** `n` wrong passwords for `account` from `address` (each counted, none taken back). */
function fail(throttle: LoginThrottle, account: string | undefined, address: string, n: number) {
  for (let i = 0; i < n; i++) expect("attempt" in throttle.attempt(account, address)).toBe(true);
}

describe("sign-in throttle", () => {
  test("a stranger's failures for bob refuse bob from the stranger's address only", () => {
    const throttle = new LoginThrottle(() => 1_000_000);
    fail(throttle, "bob", "198.51.100.66", ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "198.51.100.66")).toBeGreaterThan(0);
    const fromHome = throttle.attempt("bob", "192.0.2.10");
    expect("attempt" in fromHome).toBe(true);
    // The stranger's address may still try other accounts (its own limit is not reached).
    expect(throttle.blockedFor("carol", "198.51.100.66")).toBe(0);
  });

  test("guessing spread over many addresses stops at the account-wide limit, for that account only", () => {
    let now = 1_000_000;
    const throttle = new LoginThrottle(() => now);
    const addresses = ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES;
    for (let a = 0; a < addresses; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    const fresh = throttle.attempt("bob", "192.0.2.10");
    expect("wait" in fresh && fresh.wait).toBeGreaterThan(0);
    expect(throttle.blockedFor("carol", "192.0.2.10")).toBe(0);
    now += WINDOW_MS;
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
  });

  test("the right password forgets its address's failures for the account, not the account-wide count", () => {
    const throttle = new LoginThrottle(() => 1_000_000);
    fail(throttle, "bob", "192.0.2.10", ACCOUNT_ADDRESS_FAILURES - 1);
    const right = throttle.attempt("bob", "192.0.2.10");
    if (!("attempt" in right)) throw new Error("refused");
    right.attempt.succeeded();
    fail(throttle, "bob", "192.0.2.10", ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBeGreaterThan(0);
    // 4 + 5 failures from elsewhere, then 91 more reach the account-wide limit (the right one was taken back).
    for (let a = 0; a < 19; a++) fail(throttle, "bob", `203.0.113.${a}`, a === 18 ? 1 : ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "192.0.2.99")).toBeGreaterThan(0);
  });

  test("a refusal because the hashes were busy counts against the address, never the account", () => {
    const throttle = new LoginThrottle(() => 1_000_000);
    for (let i = 0; i < ADDRESS_FAILURES; i++) {
      const counted = throttle.attempt("bob", "198.51.100.66");
      if (!("attempt" in counted)) throw new Error(`refused at ${i}`);
      counted.attempt.busy();
    }
    expect(throttle.blockedFor("carol", "198.51.100.66")).toBeGreaterThan(0);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
  });

  test("a name no account can have is counted against the address only, never a counter every such name shares", () => {
    const throttle = new LoginThrottle(() => 1_000_000);
    for (let a = 0; a < ACCOUNT_ADDRESS_FAILURES * 2; a++) fail(throttle, undefined, `203.0.113.${a}`, 1);
    expect(throttle.blockedFor(undefined, "192.0.2.10")).toBe(0);
  });
});
