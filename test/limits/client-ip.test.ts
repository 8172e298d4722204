import { describe, expect, test } from "bun:test";
import { clientAddress, inRanges, limitKey, parseRanges } from "../../src/limits/client-ip";

describe("client address behind trusted proxies (CORPUS_TRUSTED_PROXIES)", () => {
  const trusted = parseRanges("10.0.0.0/8, 192.168.1.5, ::1, fd00::/8");

  test("CIDR matching for IPv4, IPv6 and v4-mapped addresses", () => {
    expect(inRanges("10.200.3.4", trusted)).toBe(true);
    expect(inRanges("11.0.0.1", trusted)).toBe(false);
    expect(inRanges("192.168.1.5", trusted)).toBe(true);
    expect(inRanges("192.168.1.6", trusted)).toBe(false);
    expect(inRanges("::1", trusted)).toBe(true);
    expect(inRanges("fd12:3456::1", trusted)).toBe(true);
    expect(inRanges("2001:db8::1", trusted)).toBe(false);
    expect(inRanges("::ffff:10.1.1.1", trusted)).toBe(true);
  });

  test("X-Forwarded-For is ignored unless the socket is a trusted proxy", () => {
    expect(clientAddress("203.0.113.9", "1.2.3.4", trusted)).toBe("203.0.113.9");
    expect(clientAddress("10.0.0.2", null, trusted)).toBe("10.0.0.2");
    expect(clientAddress("10.0.0.2", "1.2.3.4", parseRanges(""))).toBe("10.0.0.2");
  });

  test("from a trusted proxy, the rightmost untrusted hop is the client; spoofed left entries do not count", () => {
    expect(clientAddress("10.0.0.2", "1.2.3.4", trusted)).toBe("1.2.3.4");
    expect(clientAddress("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.9.9.9", trusted)).toBe("1.2.3.4");
    expect(clientAddress("10.0.0.2", "garbage", trusted)).toBe("10.0.0.2");
  });

  test("bad ranges are refused", () => {
    expect(() => parseRanges("10.0.0.0/33")).toThrow("bad prefix length");
    expect(() => parseRanges("proxy.local")).toThrow("not an IP address");
  });
});

describe("the bucket an address counts against", () => {
  test("IPv6 by its /64: twenty addresses of one prefix are one client; another prefix is another", () => {
    const keys = new Set(Array.from({ length: 20 }, (_, i) => limitKey(`2001:db8:1:2:${i.toString(16)}:0:0:${(i * 7).toString(16)}`)));
    expect([...keys]).toEqual(["2001:db8:1:2::/64"]);
    expect(limitKey("2001:db8:1:3::1")).toBe("2001:db8:1:3::/64");
  });
  test("IPv4 as itself, an IPv4-mapped IPv6 as its IPv4, anything unreadable as it is", () => {
    expect(limitKey("203.0.113.9")).toBe("203.0.113.9");
    expect(limitKey("::ffff:203.0.113.9")).toBe("203.0.113.9");
    expect(limitKey("unknown")).toBe("unknown");
  });
});
