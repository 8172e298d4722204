// The client address for per-IP limits: the socket's, unless the socket is a trusted proxy
// (CORPUS_TRUSTED_PROXIES), in which case X-Forwarded-For is walked from the right past
// every trusted hop. Addresses are compared with CIDR ranges, IPv4 and IPv6.
import { isIP } from "node:net";
import { formatIp, parseIp, unwrapMapped } from "../net/addresses";

type Range = { bytes: Uint8Array; bits: number };

function toBytes(ip: string): Uint8Array | undefined {
  const v4mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (v4mapped) ip = v4mapped[1]!;
  const kind = isIP(ip);
  if (kind === 4) return Uint8Array.from(ip.split(".").map(Number));
  if (kind !== 6) return undefined;
  const [head, tail = ""] = ip.split("::") as [string, string?];
  const h = head ? head.split(":") : [];
  const tl = ip.includes("::") ? (tail ? tail.split(":") : []) : [];
  const groups = [...h, ...Array(8 - h.length - tl.length).fill("0"), ...tl];
  const out = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = parseInt(g, 16);
    out[2 * i] = n >> 8;
    out[2 * i + 1] = n & 0xff;
  });
  return out;
}

export function parseRanges(csv: string): Range[] {
  return csv
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((entry) => {
      const [addr, bitsText] = entry.split("/") as [string, string?];
      const bytes = toBytes(addr);
      if (!bytes) throw new Error(`not an IP address or CIDR range: ${entry}`);
      const bits = bitsText === undefined ? bytes.length * 8 : Number(bitsText);
      if (!Number.isInteger(bits) || bits < 0 || bits > bytes.length * 8) throw new Error(`bad prefix length in ${entry}`);
      return { bytes, bits };
    });
}

export function inRanges(ip: string, ranges: Range[]): boolean {
  const bytes = toBytes(ip);
  if (!bytes) return false;
  return ranges.some((r) => {
    if (r.bytes.length !== bytes.length) return false;
    for (let bit = 0; bit < r.bits; bit++) {
      const mask = 0x80 >> bit % 8;
      if ((r.bytes[bit >> 3]! & mask) !== (bytes[bit >> 3]! & mask)) return false;
    }
    return true;
  });
}

export function clientAddress(socketIp: string, forwardedFor: string | null, trusted: Range[]): string {
  if (trusted.length === 0 || !forwardedFor || !inRanges(socketIp, trusted)) return socketIp;
  const hops = forwardedFor.split(",").map((s) => s.trim()).filter(Boolean);
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i]!;
    if (!toBytes(hop)) return socketIp;
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
