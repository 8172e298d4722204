// The client address for per-IP limits: the socket's, unless the socket is a trusted proxy
// (CORPUS_TRUSTED_PROXIES), in which case X-Forwarded-For is walked from the right past
// every trusted hop. Addresses are compared with CIDR ranges, IPv4 and IPv6 (node:net BlockList).
import { BlockList, isIP } from "node:net";
import { formatIp, parseIp, unwrapMapped } from "../net/addresses";

/** Trusted proxy ranges (node's BlockList: IPv4-mapped IPv6 addresses match IPv4 rules), and how many. */
export interface Ranges {
  readonly list: BlockList;
  readonly size: number;
}

const family = (ip: string) => (isIP(ip) === 6 ? "ipv6" : "ipv4");

/** CORPUS_TRUSTED_PROXIES: addresses and CIDR ranges, comma-separated. */
export function parseRanges(csv: string): Ranges {
  const list = new BlockList();
  const entries = csv
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of entries) {
    const [addr, bitsText] = entry.split("/") as [string, string?];
    if (!isIP(addr)) throw new Error(`not an IP address or CIDR range: ${entry}`);
    const max = isIP(addr) === 6 ? 128 : 32;
    const bits = bitsText === undefined ? max : Number(bitsText);
    if (!/^\d+$/.test(bitsText ?? "0") || !Number.isInteger(bits) || bits < 0 || bits > max)
      throw new Error(`bad prefix length in ${entry}`);
    list.addSubnet(addr, bits, family(addr));
  }
  return { list, size: entries.length };
}

export function inRanges(ip: string, ranges: Ranges): boolean {
  return ranges.size > 0 && isIP(ip) !== 0 && ranges.list.check(ip, family(ip));
}

export function clientAddress(socketIp: string, forwardedFor: string | null, trusted: Ranges): string {
  if (trusted.size === 0 || !forwardedFor || !inRanges(socketIp, trusted)) return socketIp;
  const hops = forwardedFor
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!isIP(hop)) return socketIp;
    if (!inRanges(hop, trusted)) return hop;
  }
  return hops[0] ?? socketIp;
}

/**
 * The bucket an address counts against: an IPv4 address itself, an IPv6 address by its /64 —
 * the least a single site or host is given, so one client cannot rotate through its own
 * prefix for a fresh bucket per request. An IPv4-mapped address counts as its IPv4 address.
 */
export function limitKey(address: string): string {
  const ip = parseIp(address);
  if (!ip) return address;
  const plain = unwrapMapped(ip);
  if (plain.family === 4) return formatIp(plain);
  const prefix = new Uint8Array(16);
  prefix.set(plain.bytes.subarray(0, 8));
  return `${formatIp({ family: 6, bytes: prefix })}/64`;
}
