// Resolve once, check every address, connect to the checked one (issue 13 items 5 and 6).
// A host is looked up exactly once per connection; each address it answers must pass the
// policy, and the caller connects to the first of them by its address (the name only goes
// along as TLS server name and Host header). A second DNS answer — a rebinding — is never
// asked for, so it can never be used.
import { lookup } from "node:dns/promises";
import { formatIp, type IpAddress, inRange, parseIp, parseRange, specialRange, unwrapMapped } from "./addresses";

/** Answers the addresses of a host name (the system's resolver unless a test injects one). */
export type Resolver = (host: string) => Promise<string[]>;

export const systemResolver: Resolver = async (host) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);

/** Which addresses a host may be reached at. */
export interface AddressPolicy {
  /** Undefined when allowed; else the name of the range that refused it. */
  refuses(host: string, ip: IpAddress): string | undefined;
}

/** Public addresses only: every special-purpose range is refused. */
export const PUBLIC_ONLY: AddressPolicy = { refuses: (_host, ip) => specialRange(ip) };

/** Any address (the operator's own connectors, CORPUS_WEBHOOK_ALLOW_PRIVATE=true). */
export const ANY_ADDRESS: AddressPolicy = { refuses: () => undefined };

/** A host to connect to, pinned to the address that was checked. */
export interface Pinned {
  /** The address to connect to (IPv4-mapped IPv6 written as IPv4). */
  address: string;
  family: 4 | 6;
  /** The DNS name, for TLS server name and Host header; absent when the host was an address. */
  name?: string;
}

export type Pin = (host: string) => Promise<Pinned>;

/** The host is not a valid host name or address. */
export class HostInvalid extends Error {}
/** The host has no address (or the resolver failed). */
export class HostUnresolved extends Error {}
/**
 * An address of the host lies in a range the policy refuses. Of a name, the message says only
 * that it is not public (issue 13 finding 8): naming the address or its range would let anyone
 * who may add a connector or a webhook map the internal DNS, name by name, without a connection.
 */
export class HostRefused extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly range: string,
  ) {
    super(host === address ? `${host} is a ${range} address` : `${host} is not a public address`);
  }
}

const LABEL = /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/** Lower case, brackets and a trailing dot removed; throws HostInvalid for what is neither a name nor an address. */
export function normalizeHost(raw: string): string {
  const host = raw
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1")
    .replace(/\.$/, "");
  const ip = parseIp(host);
  if (ip) return formatIp(ip);
  if (host.length > 253 || !host.split(".").every((l) => LABEL.test(l)))
    throw new HostInvalid(`${JSON.stringify(raw)} is not a host name or IP address`);
  return host;
}

/** Looks `raw` up once and checks every address it answers; the first is the one to use. */
export async function pinHost(raw: string, policy: AddressPolicy, resolve: Resolver = systemResolver): Promise<Pinned> {
  const host = normalizeHost(raw);
  const literal = parseIp(host);
  let texts: string[];
  if (literal) texts = [host];
  else {
    try {
      texts = await resolve(host);
    } catch {
      throw new HostUnresolved(`${host} cannot be resolved`);
    }
  }
  const addresses = texts
    .map((t) => parseIp(t))
    .filter((a): a is IpAddress => !!a)
    .map(unwrapMapped);
  if (addresses.length === 0) throw new HostUnresolved(`${host} cannot be resolved`);
  for (const ip of addresses) {
    const refused = policy.refuses(host, ip);
    if (refused) throw new HostRefused(host, formatIp(ip), refused);
  }
  const first = addresses[0]!;
  return { address: formatIp(first), family: first.family, ...(literal ? {} : { name: host }) };
}

export function pinner(policy: AddressPolicy, resolve: Resolver = systemResolver): Pin {
  return (host) => pinHost(host, policy, resolve);
}

/**
 * Public addresses, and private ones the operator lists: host names (any address they
 * resolve to), addresses and CIDR ranges, comma-separated. Throws on an entry that is none.
 */
export function allowList(csv: string): AddressPolicy {
  const names = new Set<string>();
  const ranges: NonNullable<ReturnType<typeof parseRange>>[] = [];
  for (const entry of csv
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const r = parseRange(entry.replace(/^\[(.*)\](\/\d+)?$/, "$1$2"));
    if (r) ranges.push(r);
    else if (entry.includes("/")) throw new HostInvalid(`${JSON.stringify(entry)} is not a CIDR range`);
    else names.add(normalizeHost(entry));
  }
  return {
    refuses(host, ip) {
      const special = specialRange(ip);
      if (!special || names.has(host) || ranges.some((r) => inRange(ip, r))) return undefined;
      return special;
    },
  };
}
