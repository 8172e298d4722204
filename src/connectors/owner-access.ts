// What each owner's connectors may reach: local paths under the user's own
// CORPUS_CONNECTOR_ROOTS ({user}) and never the data folder, kept as their realpath and checked
// again on every scan and read (D23); network hosts that are public or listed in
// CORPUS_CONNECTOR_ALLOW_HOSTS (D26). The operator's connectors may reach any path but the data
// folder, and any address.
import { isAbsolute } from "node:path";
import { OPERATOR_OWNER } from "../auth/subjects";
import type { Config } from "../config";
import { DomainError } from "../errors";
import { type Pin, pinner } from "../net/pin";
import { type Confine, confine, type PathPolicy, PathRefused, recheck, rootsFor } from "./paths";
import { OPERATOR_PIN, userHostPolicy } from "./remote";

export class OwnerAccess {
  /** Users' IMAP and PostgreSQL hosts: public, or listed in CORPUS_CONNECTOR_ALLOW_HOSTS (D26). */
  private readonly userPin: Pin;

  constructor(private readonly config: Config) {
    this.userPin = pinner(userHostPolicy(config.CORPUS_CONNECTOR_ALLOW_HOSTS));
  }

  /** Where `owner` may point local connectors (D23): the operator anywhere but the data folder. */
  private pathPolicy(owner: string): PathPolicy {
    const dataDir = this.config.CORPUS_DATA_DIR;
    return owner === OPERATOR_OWNER ? { dataDir } : { dataDir, ...rootsFor(this.config.connectorRoots, owner) };
  }

  /** How `owner`'s network connectors resolve and check their host: the operator's may reach any address. */
  pin(owner: string): Pin {
    return owner === OPERATOR_OWNER ? OPERATOR_PIN : this.userPin;
  }

  /** The check a connector asks before each scan, read or open. Users' paths are kept as their realpath. */
  checker(owner: string): Confine {
    const policy = this.pathPolicy(owner);
    return owner === OPERATOR_OWNER ? (path) => confine(path, policy) : (path) => recheck(path, policy);
  }

  /** The realpath of a local path `user` adds: it must be absolute, exist and lie under their roots. */
  localPath(user: string, path: string): string {
    if (!isAbsolute(path)) throw new DomainError("invalid", "config: the path must be absolute");
    try {
      return confine(path, this.pathPolicy(user));
    } catch (error) {
      if (error instanceof PathRefused) throw new DomainError(error.status === 403 ? "forbidden" : "invalid", error.message);
      throw error;
    }
  }
}
