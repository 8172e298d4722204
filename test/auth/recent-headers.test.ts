// The cache of principals by Authorization header: keyed by the header's tail, confirmed by the
// whole text, so that a forged header sharing a real token's signature is never a hit.
import { describe, expect, test } from "bun:test";
import { RecentHeaders } from "../../src/auth/recent-headers";

const SIGNATURE = "wX9hLEXEfGT6d8UriksT3aLpiu14FMIdPISyTxhLafci_YLVUydTFgRVdhvwvMQcS5NmOtvLNz1NrChEo9aVAQ";
const header = (payload: string) => `Bearer eyJhbGciOiJFZERTQSJ9.${payload}.${SIGNATURE}`;

describe("RecentHeaders", () => {
  test("a header is found by equal text, not by identity", () => {
    const cache = new RecentHeaders<string>(10);
    cache.set(header("eyJzdWIiOiJhbGljZSJ9"), "alice");
    // Built anew, as every request's header is.
    expect(cache.get(Buffer.from(header("eyJzdWIiOiJhbGljZSJ9")).toString())).toBe("alice");
    expect(cache.get(header("eyJzdWIiOiJhbGljZSJ9"))).toBe("alice");
  });

  test("another payload with the same signature (a forgery) is a miss, and does not displace the real entry for long", () => {
    const cache = new RecentHeaders<string>(10);
    cache.set(header("eyJzdWIiOiJhbGljZSJ9"), "alice");
    expect(cache.get(header("eyJzdWIiOiJtYWxsb3J5In0"))).toBeUndefined();
    expect(cache.get(header("eyJzdWIiOiJhbGljZSJ8"))).toBeUndefined(); // same length, one character differs
    expect(cache.get(header("eyJzdWIiOiJhbGljZSJ9"))).toBe("alice");
  });

  test("two headers sharing a tail share a slot: the later wins, the other is a miss (verified again)", () => {
    const cache = new RecentHeaders<string>(10);
    const a = header("eyJzdWIiOiJhbGljZSJ9");
    const b = header("eyJzdWIiOiJib2JieSJ9"); // same length, same last characters
    cache.set(a, "alice");
    cache.set(b, "bobby");
    expect(cache.get(b)).toBe("bobby");
    expect(cache.get(a)).toBeUndefined();
    expect(cache.size).toBe(1);
  });

  test("delete removes only an entry with exactly that text; the oldest entry leaves when full", () => {
    const cache = new RecentHeaders<number>(3);
    const headers = ["Bearer one-token-aaaa", "Bearer two-token-bbbb", "Bearer three-token-cc", "Bearer four-token-ddd"];
    headers.slice(0, 3).forEach((h, i) => cache.set(h, i));
    cache.delete("Bearer one-token-aaab");
    expect(cache.get(headers[0]!)).toBe(0);
    cache.set(headers[3]!, 3);
    expect(cache.size).toBe(3);
    expect(cache.get(headers[0]!)).toBeUndefined();
    expect(cache.get(headers[3]!)).toBe(3);
    cache.delete(headers[3]!);
    expect(cache.get(headers[3]!)).toBeUndefined();
  });

  test("short headers (shorter than the tail) work too", () => {
    const cache = new RecentHeaders<string>(2);
    cache.set("Bearer x", "x");
    expect(cache.get("Bearer x")).toBe("x");
    expect(cache.get("Bearer y")).toBeUndefined();
    expect(cache.get("")).toBeUndefined();
  });
});
