// The sign-in throttle's tables stay bounded without forgetting what they must keep: a size-bound
// proof (more sign-ins than the table holds, 100,000), so it runs with the integration tests.
import { expect, test } from "bun:test";
import { ACCOUNT_ADDRESS_FAILURES, ACCOUNT_FAILURES, KNOWN_PER_ACCOUNT } from "../../src/oauth/throttle";
import { fail, sprayed } from "../support/throttle";

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
