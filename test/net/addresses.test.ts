// Every spelling of an address is read as resolvers and URL parsers read it, and every
// special-purpose range is named (issue 13 items 5 and 6).
import { describe, expect, test } from "bun:test";
import { formatIp, parseIp, parseRange, specialRange } from "../../src/net/addresses";
import { allowList, HostInvalid, HostRefused, normalizeHost, PUBLIC_ONLY, pinHost } from "../../src/net/pin";

const canonical = (text: string) => {
  const ip = parseIp(text);
  return ip && formatIp(ip);
};
const range = (text: string) => specialRange(parseIp(text)!);

/** `read` gives each input its expected value (the input stands in the assertion, naming a failing case). */
function expectReads<T>(read: (text: string) => T, cases: ReadonlyArray<readonly [string, T]>) {
  for (const [text, expected] of cases) expect([text, read(text)]).toEqual([text, expected]);
}

/** `read` gives none of the inputs a value. */
const expectNone = (read: (text: string) => unknown, texts: string[]) =>
  expectReads(
    read,
    texts.map((text) => [text, undefined]),
  );

describe("parseIp", () => {
  test("IPv4 in every form inet_aton and the URL standard accept", () => {
    expectReads(canonical, [
      ["127.0.0.1", "127.0.0.1"],
      ["127.1", "127.0.0.1"],
      ["127.0.1", "127.0.0.1"],
      ["2130706433", "127.0.0.1"],
      ["0x7f000001", "127.0.0.1"],
      ["0x7f.1", "127.0.0.1"],
      ["0177.0.0.1", "127.0.0.1"],
      ["017700000001", "127.0.0.1"],
      ["0", "0.0.0.0"],
      ["0.0.0.0", "0.0.0.0"],
      ["10.1.2.3.", "10.1.2.3"],
      ["0xA9.0xFE.0xA9.0xFE", "169.254.169.254"],
    ]);
  });

  test("names and out-of-range numbers are not addresses", () => {
    expectNone(parseIp, ["localhost", "example.com", "256.0.0.1", "1.2.3.4.5", "4294967296", "08.1.1.1", "1..2", "", "1.2.3.256", "a.1"]);
    expect(canonical("0x")).toBe("0.0.0.0"); // as inet_aton reads a bare 0x
  });

  test("IPv6, bracketed, with an embedded IPv4, compressed on output", () => {
    expect(canonical("[::1]")).toBe("::1");
    expect(canonical("::ffff:127.0.0.1")).toBe("::ffff:7f00:1");
    expect(canonical("[::ffff:7f00:1]")).toBe("::ffff:7f00:1");
    expect(canonical("0:0:0:0:0:0:0:0")).toBe("::");
    expect(canonical("2001:DB8:0:0:1:0:0:1")).toBe("2001:db8::1:0:0:1");
    expect(canonical("fe80::1%eth0")).toBeUndefined();
    expect(canonical("1::2::3")).toBeUndefined();
    expect(canonical("1:2:3:4:5:6:7:8:9")).toBeUndefined();
    expect(canonical("::ffff:127.1")).toBeUndefined();
    expect(canonical("12345::1")).toBeUndefined();
  });

  test("ranges: CIDR or single address; IPv4-mapped ranges are the IPv4 range", () => {
    expect(parseRange("10.0.0.0/8")).toMatchObject({ family: 4, bits: 8 });
    expect(parseRange("::1")).toMatchObject({ family: 6, bits: 128 });
    expect(parseRange("::ffff:10.0.0.0/104")).toMatchObject({ family: 4, bits: 8 });
    expectNone(parseRange, ["10.0.0.0/33", "10.0.0.0/x", "a/8", "1/2/3", "::/129"]);
  });
});

describe("specialRange", () => {
  test("every special-purpose IPv4 range is named; public addresses are not", () => {
    expectReads(range, [
      ["127.0.0.1", "loopback"],
      ["127.255.255.254", "loopback"],
      ["0.0.0.0", "unspecified (this network)"],
      ["10.9.8.7", "private"],
      ["172.31.255.255", "private"],
      ["192.168.1.1", "private"],
      ["100.64.0.1", "shared (carrier-grade NAT)"],
      ["169.254.169.254", "link-local"],
      ["192.0.0.8", "IETF protocol assignments"],
      ["192.0.2.1", "documentation"],
      ["198.51.100.7", "documentation"],
      ["203.0.113.9", "documentation"],
      ["198.18.0.1", "benchmarking"],
      ["224.0.0.251", "multicast"],
      ["240.0.0.1", "reserved"],
      ["255.255.255.255", "broadcast"],
    ]);
    expectNone(range, ["93.184.215.14", "8.8.8.8", "172.32.0.1", "100.128.0.1", "1.1.1.1"]);
  });

  test("IPv6: loopback, unique-local, link-local, multicast, documentation; embedded IPv4 judged by what it carries", () => {
    expectReads(range, [
      ["::1", "loopback"],
      ["::", "unspecified"],
      ["::ffff:7f00:1", "loopback"],
      ["::ffff:10.0.0.1", "private"],
      ["::127.0.0.1", "IPv4-compatible (deprecated)"],
      ["64:ff9b::7f00:1", "NAT64 of a loopback address"],
      ["64:ff9b::a9fe:a9fe", "NAT64 of a link-local address"],
      ["64:ff9b:1::1", "local-use NAT64"],
      ["2002:7f00:1::1", "6to4 of a loopback address"],
      ["2002:c0a8:101::1", "6to4 of a private address"],
      ["2001:0:4136:e378:8000:63bf:3fff:fdd2", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"],
      ["2001:db8::1", "documentation"],
      ["3fff::1", "documentation"],
      ["fd00::1", "unique-local"],
      ["fc00::1", "unique-local"],
      ["fe80::1", "link-local"],
      ["fec0::1", "site-local (deprecated)"],
      ["ff02::1", "multicast"],
      ["100::1", "discard-only"],
      ["::ffff:0:7f00:1", "reserved"],
      ["4000::1", "reserved"],
    ]);
    expectNone(range, ["2606:2800:220:1:248:1893:25c8:1946", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1"]);
  });
});

describe("pinHost and the policies", () => {
  const answers = (map: Record<string, string[]>) => async (host: string) => {
    if (!map[host]) throw new Error("ENOTFOUND");
    return map[host]!;
  };

  test("every spelling of loopback is refused by PUBLIC_ONLY, before any lookup of an address", async () => {
    const none = async () => {
      throw new Error("no lookup expected");
    };
    for (const host of [
      "127.0.0.1",
      "127.1",
      "2130706433",
      "0x7f.1",
      "0177.0.0.1",
      "[::1]",
      "[::ffff:127.0.0.1]",
      "::ffff:7f00:1",
      "0.0.0.0",
      "0",
      "[::]",
      "169.254.169.254",
      "[fd00::1]",
    ]) {
      const refused = await pinHost(host, PUBLIC_ONLY, none).catch((e) => e);
      expect([host, refused instanceof HostRefused]).toEqual([host, true]);
    }
  });

  test("a name is resolved once and every address it answers must pass", async () => {
    const resolve = answers({
      "mixed.test": ["93.184.215.14", "10.0.0.1"],
      "public.test": ["93.184.215.14", "2606:2800:220:1:248:1893:25c8:1946"],
      "mapped.test": ["::ffff:127.0.0.1"],
    });
    // What a name resolves to is never said (issue 13 finding 8), only that it is not public.
    for (const name of ["mixed.test", "mapped.test"]) {
      const refused = (await pinHost(name, PUBLIC_ONLY, resolve).catch((e) => e)) as HostRefused;
      expect(refused).toBeInstanceOf(HostRefused);
      expect(refused.message).toBe(`${name} is not a public address`);
    }
    await expect(pinHost("10.0.0.1", PUBLIC_ONLY, resolve)).rejects.toThrow("10.0.0.1 is a private address");
    expect(await pinHost("Public.Test.", PUBLIC_ONLY, resolve)).toEqual({ address: "93.184.215.14", family: 4, name: "public.test" });
    await expect(pinHost("missing.test", PUBLIC_ONLY, resolve)).rejects.toThrow("missing.test cannot be resolved");
  });

  test("localhost, through the system's resolver, is loopback", async () => {
    await expect(pinHost("localhost", PUBLIC_ONLY)).rejects.toBeInstanceOf(HostRefused);
  });

  test("an allow list admits listed names (any address), addresses and CIDR ranges, and public addresses", async () => {
    const resolve = answers({ "db.internal": ["10.1.2.3"], "other.internal": ["10.1.2.3"], "mail.internal": ["192.168.7.7"] });
    const policy = allowList(" db.internal , 127.0.0.1, 192.168.0.0/16, [::1] ");
    expect((await pinHost("db.internal", policy, resolve)).address).toBe("10.1.2.3");
    await expect(pinHost("other.internal", policy, resolve)).rejects.toThrow("other.internal is not a public address");
    expect((await pinHost("mail.internal", policy, resolve)).address).toBe("192.168.7.7");
    expect((await pinHost("127.1", policy, resolve)).address).toBe("127.0.0.1");
    expect((await pinHost("[::1]", policy, resolve)).address).toBe("::1");
    await expect(pinHost("127.0.0.2", policy, resolve)).rejects.toThrow("loopback");
    expect((await pinHost("93.184.215.14", policy, resolve)).address).toBe("93.184.215.14");
    expect(() => allowList("10.0.0.0/99")).toThrow(HostInvalid);
    expect(() => allowList("not a host")).toThrow(HostInvalid);
  });

  test("host names are checked for form", () => {
    expect(normalizeHost("Mail.Example.COM.")).toBe("mail.example.com");
    expect(normalizeHost("[::FFFF:127.0.0.1]")).toBe("::ffff:7f00:1");
    for (const bad of ["", "a b", "/var/run/postgresql", "h1,h2", "-x.example", `${"a".repeat(64)}.com`, "fe80::1%lo"]) {
      expect(() => normalizeHost(bad)).toThrow(HostInvalid);
    }
  });
});
