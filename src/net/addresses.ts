// What an IP address is, in one place (D14, D26; issue 13 items 5 and 6). Every spelling a
// resolver or a URL parser accepts is read here the way they read it — IPv4 as dotted, short
// (127.1), one number (2130706433), octal (0177.0.0.1) or hex (0x7f.1); IPv6 with an embedded
// IPv4 (::ffff:127.0.0.1 is ::ffff:7f00:1) — so that the address checked is the address used.
// `specialRange` names the special-purpose range (RFC 6890 and successors) an address lies in;
// an address in none of them is a public one.

export interface IpAddress {
  family: 4 | 6;
  bytes: Uint8Array;
}

interface Range {
  family: 4 | 6;
  bytes: Uint8Array;
  bits: number;
}

/** A part of a loose IPv4 address: hex (0x…), octal (leading 0) or decimal. */
const V4_PART = /^(?:0x[0-9a-f]*|0[0-7]*|[1-9][0-9]*)$/i;

function partValue(part: string): number {
  if (/^0x/i.test(part)) return part.length === 2 ? 0 : parseInt(part.slice(2), 16);
  if (part.length > 1 && part.startsWith("0")) return parseInt(part, 8);
  return Number(part);
}

/** IPv4 as inet_aton and the URL standard read it: 1 to 4 parts, the last filling the rest. */
function parseIPv4(text: string): IpAddress | undefined {
  const parts = (text.endsWith(".") ? text.slice(0, -1) : text).split(".");
  if (parts.length > 4 || !parts.every((p) => V4_PART.test(p))) return undefined;
  const numbers = parts.map(partValue);
  const last = numbers.pop()!;
  if (numbers.some((n) => n > 255) || last >= 256 ** (4 - numbers.length)) return undefined;
  let value = last;
  for (const [i, n] of numbers.entries()) value += n * 256 ** (3 - i);
  return {
    family: 4,
    bytes: Uint8Array.of(Math.floor(value / 2 ** 24) % 256, Math.floor(value / 2 ** 16) % 256, Math.floor(value / 256) % 256, value % 256),
  };
}

/** The strict dotted quad allowed at the end of an IPv6 address. */
function parseDottedQuad(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^(0|[1-9][0-9]{0,2})$/.test(p) && Number(p) <= 255)) return undefined;
  return parts.map(Number);
}

function parseIPv6(text: string): IpAddress | undefined {
  // Scoped addresses (fe80::1%eth0) name an interface of this machine: never a target.
  if (text.includes("%")) return undefined;
  let groups = text;
  const lastColon = text.lastIndexOf(":");
  if (text.slice(lastColon + 1).includes(".")) {
    const quad = parseDottedQuad(text.slice(lastColon + 1));
    if (!quad) return undefined;
    groups = `${text.slice(0, lastColon + 1)}${((quad[0]! << 8) | quad[1]!).toString(16)}:${((quad[2]! << 8) | quad[3]!).toString(16)}`;
  }
  const halves = groups.split("::");
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(":") : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  if (![...head, ...tail].every((g) => /^[0-9a-f]{1,4}$/i.test(g))) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  const bytes = new Uint8Array(16);
  all.forEach((g, i) => {
    const n = parseInt(g, 16);
    bytes[2 * i] = n >> 8;
    bytes[2 * i + 1] = n & 0xff;
  });
  return { family: 6, bytes };
}

/** Reads an IP address in any spelling (brackets around IPv6 allowed); undefined for a name. */
export function parseIp(text: string): IpAddress | undefined {
  const s = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  return s.includes(":") ? parseIPv6(s) : parseIPv4(s);
}

/** The canonical text of an address: dotted IPv4, compressed lower-case IPv6. */
export function formatIp(ip: IpAddress): string {
  if (ip.family === 4) return [...ip.bytes].join(".");
  const groups = Array.from({ length: 8 }, (_, i) => (ip.bytes[2 * i]! << 8) | ip.bytes[2 * i + 1]!);
  let best = { at: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.length) best = { at: i, length: j - i };
    i = j > i ? j : i + 1;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.length).join(":")}`;
}

function range(cidr: string): Range {
  const [text, bits] = cidr.split("/") as [string, string];
  const ip = parseIp(text)!;
  return { family: ip.family, bytes: ip.bytes, bits: Number(bits) };
}

/** Whether `ip` lies in `r` (same family only). */
export function inRange(ip: IpAddress, r: Range): boolean {
  if (ip.family !== r.family) return false;
  for (let bit = 0; bit < r.bits; bit++) {
    const mask = 0x80 >> (bit % 8);
    if ((r.bytes[bit >> 3]! & mask) !== (ip.bytes[bit >> 3]! & mask)) return false;
  }
  return true;
}

/** A CIDR range or a single address ("10.0.0.0/8", "::1", "127.0.0.1"); undefined if neither. */
export function parseRange(text: string): Range | undefined {
  const [addr, bits, extra] = text.split("/");
  if (extra !== undefined || !addr) return undefined;
  const ip = parseIp(addr);
  if (!ip) return undefined;
  const max = ip.family === 4 ? 32 : 128;
  const n = bits === undefined ? max : /^\d{1,3}$/.test(bits) ? Number(bits) : NaN;
  if (!(n >= 0 && n <= max)) return undefined;
  // An IPv4-mapped range is the IPv4 range it maps: addresses are compared unwrapped.
  if (ip.family === 6 && n >= 96 && inRange(ip, MAPPED)) return { family: 4, bytes: ip.bytes.slice(12), bits: n - 96 };
  return { family: ip.family, bytes: ip.bytes, bits: n };
}

const MAPPED = range("::ffff:0:0/96");
const NAT64 = range("64:ff9b::/96");
const SIX_TO_FOUR = range("2002::/16");
const GLOBAL_UNICAST = range("2000::/3");

const V4_SPECIAL: Array<[Range, string]> = (
  [
    ["255.255.255.255/32", "broadcast"],
    ["0.0.0.0/8", "unspecified (this network)"],
    ["10.0.0.0/8", "private"],
    ["100.64.0.0/10", "shared (carrier-grade NAT)"],
    ["127.0.0.0/8", "loopback"],
    ["169.254.0.0/16", "link-local"],
    ["172.16.0.0/12", "private"],
    ["192.0.0.0/24", "IETF protocol assignments"],
    ["192.0.2.0/24", "documentation"],
    ["192.88.99.0/24", "6to4 relay anycast"],
    ["192.168.0.0/16", "private"],
    ["198.18.0.0/15", "benchmarking"],
    ["198.51.100.0/24", "documentation"],
    ["203.0.113.0/24", "documentation"],
    ["224.0.0.0/4", "multicast"],
    ["240.0.0.0/4", "reserved"],
  ] as const
).map(([r, name]) => [range(r), name]);

const V6_SPECIAL: Array<[Range, string]> = (
  [
    ["::/128", "unspecified"],
    ["::1/128", "loopback"],
    ["::/96", "IPv4-compatible (deprecated)"],
    ["64:ff9b:1::/48", "local-use NAT64"],
    ["100::/64", "discard-only"],
    ["fc00::/7", "unique-local"],
    ["fe80::/10", "link-local"],
    ["fec0::/10", "site-local (deprecated)"],
    ["ff00::/8", "multicast"],
    ["2001:db8::/32", "documentation"],
    ["2001::/23", "IETF protocol assignments (Teredo, benchmarking, ORCHID)"],
    ["3fff::/20", "documentation"],
  ] as const
).map(([r, name]) => [range(r), name]);

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) is the IPv4 address it maps; others as they are. */
export function unwrapMapped(ip: IpAddress): IpAddress {
  return ip.family === 6 && inRange(ip, MAPPED) ? { family: 4, bytes: ip.bytes.slice(12) } : ip;
}

/**
 * The special-purpose range `ip` lies in ("loopback", "private", …), or undefined for a
 * public address. IPv6 forms that carry an IPv4 address (mapped, NAT64, 6to4) are judged by
 * the IPv4 address they carry; other IPv6 outside global unicast (2000::/3) is reserved.
 */
export function specialRange(ip: IpAddress): string | undefined {
  if (ip.family === 4) return V4_SPECIAL.find(([r]) => inRange(ip, r))?.[1];
  if (inRange(ip, MAPPED)) return specialRange(unwrapMapped(ip));
  if (inRange(ip, NAT64)) {
    const inner = specialRange({ family: 4, bytes: ip.bytes.slice(12) });
    return inner && `NAT64 of a ${inner} address`;
  }
  const named = V6_SPECIAL.find(([r]) => inRange(ip, r))?.[1];
  if (named) return named;
  if (inRange(ip, SIX_TO_FOUR)) {
    const inner = specialRange({ family: 4, bytes: ip.bytes.slice(2, 6) });
    return inner && `6to4 of a ${inner} address`;
  }
  return inRange(ip, GLOBAL_UNICAST) ? undefined : "reserved";
}
