// Webhook targets (D14): http(s) only, no credentials in the URL. The host is resolved once
// and every address it answers is checked: loopback, private, link-local and every other
// special-purpose address (src/net/addresses.ts) is refused unless
// CORPUS_WEBHOOK_ALLOW_PRIVATE=true, so a webhook cannot probe the internal network. Checked at
// registration and again before every delivery, which then goes to the address checked.
import { DomainError } from "../errors";
import {
  ANY_ADDRESS,
  HostInvalid,
  HostRefused,
  HostUnresolved,
  type Pinned,
  PUBLIC_ONLY,
  pinHost,
  type Resolver,
  systemResolver,
} from "../net/pin";

/** A webhook URL refused (scheme, address): the caller gave it. */
export class TargetError extends DomainError {
  constructor(message: string) {
    super("invalid", message);
  }
}

export interface Target {
  url: URL;
  /** Where the delivery connects: the address that was checked. */
  pinned: Pinned;
}

export async function checkTarget(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<Target> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetError("url: must be an absolute http:// or https:// URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new TargetError("url: must use http or https");
  if (url.username || url.password) throw new TargetError("url: must not carry credentials");
  try {
    return { url, pinned: await pinHost(url.hostname, allowPrivate ? ANY_ADDRESS : PUBLIC_ONLY, resolve) };
  } catch (error) {
    if (error instanceof HostRefused) {
      throw new TargetError(
        `url: ${error.message}; private, loopback, link-local and other special-purpose addresses are refused (the operator allows them with CORPUS_WEBHOOK_ALLOW_PRIVATE=true)`,
      );
    }
    if (error instanceof HostInvalid || error instanceof HostUnresolved) throw new TargetError(`url: ${error.message}`);
    throw error;
  }
}
