// The sign-in throttle's counters (D27, OWASP on lockout): one address's failures for an
// account refuse that account from that address only; the account-wide limit, much higher,
// slows guessing spread over many addresses, and never keeps the owner out from an address
// they signed in from; a refusal because the hashes were busy is the address's, not the
// account's. Counted without hashing: LoginThrottle alone, on a fake clock. Its tables' bound, past
// 100,000 sign-ins, is proved in throttle-bound.test.ts (an integration test: size).
import { describe, expect, test } from "bun:test";
import {
  ACCOUNT_ADDRESS_FAILURES,
  ACCOUNT_FAILURES,
  ADDRESS_FAILURES,
  KNOWN_ADDRESS_MS,
  LoginThrottle,
  SPRAYED_ACCOUNT_MS,
  WINDOW_MS,
} from "../../src/oauth/throttle";
import { fail, sprayed } from "../support/throttle";

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
