// The sign-in throttle's counters (D27, OWASP on lockout): one address's failures for an
// account refuse that account from that address only; the account-wide limit, much higher,
// slows guessing spread over many addresses, and never keeps the owner out from an address
// they signed in from; a refusal because the hashes were busy is the address's, not the
// account's. Counted without hashing: LoginThrottle alone, on a fake clock.
import { describe, expect, test } from "bun:test";
import {
  ACCOUNT_ADDRESS_FAILURES,
  ACCOUNT_FAILURES,
  ADDRESS_FAILURES,
  KNOWN_ADDRESS_MS,
  KNOWN_PER_ACCOUNT,
  LoginThrottle,
  SPRAYED_ACCOUNT_MS,
  WINDOW_MS,
} from "../../src/oauth/throttle";

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

  /** Bob signed in from home once; then strangers spray his account from 20 addresses (the account-wide limit). */
  function sprayed() {
    const clock = { now: 1_000_000 };
    const throttle = new LoginThrottle(() => clock.now);
    const home = throttle.attempt("bob", "192.0.2.10");
    if (!("attempt" in home)) throw new Error("refused");
    home.attempt.succeeded();
    const addresses = ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES;
    for (let a = 0; a < addresses; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    return { clock, throttle };
  }

  test("guessing spread over many addresses is slowed past the account-wide limit, for that account only", () => {
    const { clock, throttle } = sprayed();
    // Another stranger (or bob at a new address) waits, but seconds, not the window.
    const fresh = throttle.attempt("bob", "198.51.100.7");
    expect("wait" in fresh && fresh.wait).toBeGreaterThan(0);
    expect("wait" in fresh && fresh.wait).toBeLessThanOrEqual(SPRAYED_ACCOUNT_MS / 1000);
    expect(throttle.blockedFor("carol", "198.51.100.7")).toBe(0);
    clock.now += SPRAYED_ACCOUNT_MS;
    expect("attempt" in throttle.attempt("bob", "198.51.100.7")).toBe(true);
    // One attempt between all of them per SPRAYED_ACCOUNT_MS: the next address waits again.
    expect(throttle.blockedFor("bob", "198.51.100.8")).toBeGreaterThan(0);
    clock.now += WINDOW_MS;
    expect(throttle.blockedFor("bob", "198.51.100.8")).toBe(0);
  });

  test("attack: strangers spraying bob's account from 20 addresses do not keep bob out from the address he signed in from", () => {
    const { throttle } = sprayed();
    // Before: refused for the window (15 minutes), from everywhere, the right password included.
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
    const right = throttle.attempt("bob", "192.0.2.10");
    if (!("attempt" in right)) throw new Error("refused");
    right.attempt.succeeded();
    // His own wrong passwords from home still count against home (5), as anyone's.
    fail(throttle, "bob", "192.0.2.10", ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBeGreaterThan(0);
  });

  test("the browser bob signed in with (its device cookie) is not slowed at a new address; another browser is", () => {
    const clock = { now: 1_000_000 };
    const throttle = new LoginThrottle(() => clock.now);
    const first = throttle.attempt("bob", "192.0.2.10");
    if (!("attempt" in first)) throw new Error("refused");
    first.attempt.succeeded("bobs-phone");
    for (let a = 0; a < ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "198.51.100.7", "bobs-phone")).toBe(0);
    expect(throttle.blockedFor("bob", "198.51.100.7")).toBeGreaterThan(0);
    expect(throttle.blockedFor("bob", "198.51.100.7", "strangers-browser")).toBeGreaterThan(0);
  });

  test("an address known to bob is not known to carol: her account sprayed, it is slowed there", () => {
    const { throttle } = sprayed();
    for (let a = 0; a < ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES; a++)
      fail(throttle, "carol", `198.18.0.${a}`, ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("carol", "192.0.2.10")).toBeGreaterThan(0);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
  });

  test("attack: another account signing in again and again, each time as a new browser, does not make bob's home unknown", () => {
    const { throttle } = sprayed();
    // Mallory's own account, her right password, no device cookie sent: a new device each time.
    for (let i = 0; i < 100_000; i++) {
      const own = throttle.attempt("mallory", "198.51.100.66");
      if (!("attempt" in own)) throw new Error(`refused at ${i}`);
      own.attempt.succeeded(`device-${i}`);
    }
    // Before: 200,000 places past the table's bound pushed bob's out, and bob waited at home.
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
    // Mallory's newest places are known, her oldest forgotten (KNOWN_PER_ACCOUNT of them kept).
    for (let a = 0; a < ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES; a++)
      fail(throttle, "mallory", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("mallory", "192.0.2.99", "device-99999")).toBe(0);
    expect(throttle.blockedFor("mallory", "192.0.2.99", `device-${99_999 - KNOWN_PER_ACCOUNT}`)).toBeGreaterThan(0);
  });

  test("a known address is forgotten KNOWN_ADDRESS_MS after its last sign-in", () => {
    const { clock, throttle } = sprayed();
    clock.now += KNOWN_ADDRESS_MS - WINDOW_MS;
    for (let a = 0; a < ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBe(0);
    clock.now += WINDOW_MS;
    for (let a = 0; a < ACCOUNT_FAILURES / ACCOUNT_ADDRESS_FAILURES; a++) fail(throttle, "bob", `203.0.113.${a}`, ACCOUNT_ADDRESS_FAILURES);
    expect(throttle.blockedFor("bob", "192.0.2.10")).toBeGreaterThan(0);
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
