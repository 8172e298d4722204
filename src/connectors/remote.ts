// Hosts of the connectors that reach over the network, IMAP and database servers (D26; issue 13
// item 6). A user's may be public addresses only, unless the operator lists a private or
// loopback host (name, address or CIDR range) in CORPUS_CONNECTOR_ALLOW_HOSTS; the operator's
// own connectors (CORPUS_CONNECTORS_FILE) may reach any address. Either way the host is
// resolved once per connection and the connection goes to the address checked.
import { DomainError } from "../errors";
import {
  type AddressPolicy,
  ANY_ADDRESS,
  allowList,
  HostInvalid,
  HostRefused,
  normalizeHost,
  type Pin,
  PUBLIC_ONLY,
  pinner,
} from "../net/pin";
import { ServerUrlError } from "./sql/server-url";

export const ALLOW_HOSTS_VARIABLE = "CORPUS_CONNECTOR_ALLOW_HOSTS";

/**
 * Connecting, and the server's first words (greeting, login exchange), within 5 s: under the
 * registry's 8 s health timeout, so that a filtered or silent port gets the same answer as a
 * closed one ("cannot be reached"), not one of its own.
 */
export const CONNECT_TIMEOUT_MS = 5_000;

/** What a connector that connects over the network is given. */
export interface RemoteOptions {
  /** Resolves and checks the host, once per connection; public addresses only by default. */
  pin?: Pin;
  /** The clock of the bounded reconnects (src/net/attempts.ts). */
  now?: () => number;
  /** CONNECT_TIMEOUT_MS unless a test shortens it. */
  connectTimeoutMs?: number;
}

export const PUBLIC_PIN: Pin = pinner(PUBLIC_ONLY);
export const OPERATOR_PIN: Pin = pinner(ANY_ADDRESS);

/** The policy for users' hosts; throws with the entry at fault when the list is malformed. */
export function userHostPolicy(csv: string): AddressPolicy {
  return allowList(csv);
}

/** Why a host was refused, in the words the user sees (the field, the range, the way out). */
export function refusedMessage(field: string, error: HostRefused): string {
  return `${field}: ${error.message}; connectors may not reach private, loopback, link-local or other special-purpose addresses unless the operator lists the host in ${ALLOW_HOSTS_VARIABLE}`;
}

/** The host a connector connects to, and the config field that names it. */
export interface RemoteTarget {
  host: string;
  field: string;
}

/**
 * The host a config connects to (found by its kind's record), its form checked as it is read at
 * connect time: one host name or IP address, nothing else. 400 naming the field when it is not allowed.
 */
export function remoteTarget(find: () => RemoteTarget | undefined): RemoteTarget | undefined {
  try {
    const remote = find();
    if (remote) normalizeHost(remote.host);
    return remote;
  } catch (error) {
    if (error instanceof ServerUrlError) throw new DomainError("invalid", error.message);
    if (error instanceof HostInvalid) throw new DomainError("invalid", `config.host: ${error.message}`);
    throw error;
  }
}

/**
 * Before a user's connector is saved: its host must be allowed (403 before any connection is
 * made). A name that does not resolve is not refused here: the connector is saved with status
 * error, like one whose server does not answer.
 */
export async function checkRemoteHost(remote: RemoteTarget | undefined, pin: Pin): Promise<void> {
  if (!remote) return;
  try {
    await pin(remote.host);
  } catch (error) {
    if (error instanceof HostRefused) throw new DomainError("forbidden", refusedMessage(remote.field, error));
    if (error instanceof HostInvalid) throw new DomainError("invalid", `${remote.field}: ${error.message}`);
  }
}
