// Bounded connection attempts (issue 13 item 7), on an injected clock.
import { describe, expect, test } from "bun:test";
import { ConnectAttempts, RetryLater } from "../../src/net/attempts";

describe("ConnectAttempts", () => {
  test("free attempts back to back, then 1 s, 2 s, 4 s … apart (at most 5 minutes); a success starts again", () => {
    let clock = 0;
    const a = new ConnectAttempts(() => clock, 2);
    a.begin();
    a.begin();
    a.failed("database x cannot be reached");
    expect(() => a.begin()).toThrow(new RetryLater(1000, "database x cannot be reached"));
    expect(() => a.begin()).toThrow("database x cannot be reached; next attempt in 1 s");
    clock += 1000;
    a.begin();
    clock += 1999;
    expect(() => a.begin()).toThrow(RetryLater);
    clock += 1;
    a.begin();
    expect(a.failures).toBe(4);
    a.succeeded();
    a.begin();
    a.begin();
    expect(a.failures).toBe(2);
    expect(ConnectAttempts.backoff(30)).toBe(5 * 60_000);
  });

  test("over an hour of asking every second, a failing server gets a handful of attempts", () => {
    let clock = 0;
    const a = new ConnectAttempts(() => clock, 1);
    let opened = 0;
    for (; clock < 3600_000; clock += 1000) {
      try {
        a.begin();
        opened++;
      } catch (error) {
        expect(error).toBeInstanceOf(RetryLater);
      }
    }
    // 1 + 1 s, 2 s … 256 s apart, then every 5 minutes.
    expect(opened).toBeGreaterThan(10);
    expect(opened).toBeLessThan(25);
  });
});
