// Webhook targets (D14): http(s) only; a host that resolves to a private, loopback or
// link-local address is refused unless CORPUS_WEBHOOK_ALLOW_PRIVATE=true, so a webhook cannot
// probe the internal network. Checked at registration and again before every delivery.
import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { inRanges, parseRanges } from "../limits/client-ip";

const PRIVATE = parseRanges(
  "0.0.0.0/8,10.0.0.0/8,100.64.0.0/10,127.0.0.0/8,169.254.0.0/16,172.16.0.0/12,192.0.0.0/24,192.168.0.0/16,198.18.0.0/15,224.0.0.0/4,240.0.0.0/4,::/128,::1/128,fc00::/7,fe80::/10,ff00::/8",
);

export class TargetError extends Error {}

export async function checkTarget(raw: string, allowPrivate: boolean): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetError("url: must be an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetError("url: must use http or https");
  if (url.username || url.password) throw new TargetError("url: must not carry credentials");
  if (allowPrivate) return url;
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let addresses: string[];
  try {
    addresses = isIP(host) ? [host] : (await lookup(host, { all: true, verbatim: true })).map((a) => a.address);
  } catch {
    throw new TargetError(`url: the host ${host} cannot be resolved`);
  }
  if (addresses.length === 0 || addresses.some((a) => inRanges(a, PRIVATE))) {
    throw new TargetError(`url: ${host} is a private, loopback or link-local address (the operator allows those with CORPUS_WEBHOOK_ALLOW_PRIVATE=true)`);
  }
  return url;
}
