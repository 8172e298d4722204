// Local paths of connectors (D23): where a user may point a connector, checked when it is
// added and again on every scan, read and open, because the file system can change under
// a path after it was checked. Paths are kept as their realpath; links are never followed
// while walking or reading, so a link put in place later leads nowhere.

import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync, realpathSync } from "node:fs";
import { basename, dirname, join, resolve, sep } from "node:path";
import { SAFE_SUBJECT } from "../auth/subjects";
import type { ScanEntry } from "./local-index";
import { ConnectorError, SourceSkipped } from "./types";

/** `{user}` in a CORPUS_CONNECTOR_ROOTS entry stands for the token's subject. */
export const USER_PLACEHOLDER = "{user}";

/** A check of a path before it is read: answers the path to read (its realpath), or throws PathRefused. */
export type Confine = (path: string) => string;

/** No policy: the path as given (connectors built outside the registry, as in tests). */
export const asGiven: Confine = (path) => path;

/** Where a connector may read. */
export interface PathPolicy {
  /** The service's data folder: nobody reads in it or above it. */
  dataDir: string;
  /** Folders the path must lie under; absent for the operator's connectors. */
  roots?: string[];
  /** Why some of the configured roots do not apply to this user, for the message. */
  unusable?: string;
}

/** A path a connector may not read: 403, or 400 when it is allowed but does not exist. */
export class PathRefused extends ConnectorError {
  constructor(
    readonly status: 400 | 403,
    message: string,
  ) {
    super(message);
  }
}

/** A subject that can name a folder: a safe subject (D24) has no separator and starts with a letter or digit, so it is never `.` or `..`. */
export const isSafeSegment = (s: string) => SAFE_SUBJECT.test(s);

/** Roots without `{user}` are one folder for every user: the operator is warned at start. */
export const sharedRoots = (roots: string[]) => roots.filter((r) => !r.includes(USER_PLACEHOLDER));

/** The roots `user` may read under: shared entries as they are, `{user}` ones with the subject put in. */
export function rootsFor(roots: string[], user: string): Pick<PathPolicy, "roots" | "unusable"> {
  const personal = roots.filter((r) => r.includes(USER_PLACEHOLDER));
  if (personal.length && !isSafeSegment(user)) {
    return {
      roots: sharedRoots(roots),
      unusable: `your user name ${JSON.stringify(user)} cannot name a folder (letters, digits and ._@+-, starting with a letter or digit), so the per-user folders of CORPUS_CONNECTOR_ROOTS (${USER_PLACEHOLDER}) are not available to you`,
    };
  }
  return { roots: roots.map((r) => r.replaceAll(USER_PLACEHOLDER, user)) };
}

/** `path` is `folder` or below it (both absolute, normalised). */
export function isInside(path: string, folder: string): boolean {
  return path === folder || path.startsWith(folder.endsWith(sep) ? folder : folder + sep);
}

/** Links followed while resolving a path that does not exist, at most (as the kernel's limit). */
const MAX_LINKS = 40;

/**
 * The realpath of `path`; if it does not exist, that of its deepest existing folder with the
 * rest appended. A dangling link on the way is followed to where it points, so that a link to
 * a missing file outside one's folders is refused like one to an existing file (no oracle of
 * which paths exist elsewhere).
 */
export function resolveReal(path: string, links = 0): { real: string; exists: boolean } {
  const missing: string[] = [];
  for (let p = resolve(path); ; p = dirname(p)) {
    try {
      return { real: join(realpathSync(p), ...missing.reverse()), exists: missing.length === 0 };
    } catch {
      if (links < MAX_LINKS && lstatSync(p, { throwIfNoEntry: false })?.isSymbolicLink()) {
        const target = resolveReal(resolve(dirname(p), readlinkSync(p)), links + 1);
        return { real: join(target.real, ...missing.reverse()), exists: false };
      }
      if (p === dirname(p)) return { real: resolve(path), exists: false };
      missing.push(basename(p));
    }
  }
}

/** Why `real` may not be read under `policy` (`shown` is the path as the user gave it), or undefined. */
export function refusal(real: string, shown: string, policy: PathPolicy): string | undefined {
  const dataDir = resolveReal(policy.dataDir).real;
  if (isInside(real, dataDir) || isInside(dataDir, real)) return `${shown} is inside or above the service's data folder`;
  if (!policy.roots || policy.roots.some((r) => isInside(real, resolveReal(r).real))) return undefined;
  if (!policy.roots.length)
    return (
      policy.unusable ?? "local connectors are not enabled: the operator lists the folders users may connect in CORPUS_CONNECTOR_ROOTS"
    );
  const outside = `${shown} is outside the folders connectors may read (${policy.roots.join(", ")})`;
  return policy.unusable ? `${outside}; ${policy.unusable}` : outside;
}

/**
 * The realpath of `path` if `policy` allows it. A refusal comes before "does not exist", so
 * that nobody learns which paths exist outside their own folders.
 */
export function confine(path: string, policy: PathPolicy): string {
  const { real, exists } = resolveReal(path);
  const why = refusal(real, real === resolve(path) ? path : `${path} (through a link)`, policy);
  if (why) throw new PathRefused(403, why);
  if (!exists) throw new PathRefused(400, `${path} does not exist`);
  return real;
}

/** `confine` for a path kept as its realpath: any difference means a link was put on the way since. */
export function recheck(stored: string, policy: PathPolicy): string {
  const real = confine(stored, policy);
  if (real !== stored)
    throw new PathRefused(
      403,
      `${stored} no longer leads to the folder or file that was added (a link was put on the way); remove the connector and add it again`,
    );
  return real;
}

/** The scan entry of a regular file, from lstat: a link (or anything else) is no entry. */
export function fileEntry(path: string, source: string): ScanEntry | undefined {
  const st = lstatSync(path, { throwIfNoEntry: false });
  return st?.isFile() ? { source, size: st.size, mtime: Math.floor(st.mtimeMs) } : undefined;
}

/** What an open file descriptor names, where the system tells (Linux /proc), else undefined. */
function openedPath(fd: number): string | undefined {
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return undefined;
  }
}

/** A SQLite database and the files SQLite opens beside it: each a plain file with one name. */
export function checkDatabaseFiles(real: string): void {
  for (const suffix of ["", "-wal", "-shm", "-journal"]) {
    let st: ReturnType<typeof lstatSync>;
    try {
      st = lstatSync(real + suffix);
    } catch {
      if (suffix === "") throw new PathRefused(400, `${real} does not exist`);
      continue;
    }
    if (!st.isFile()) throw new PathRefused(403, `${real}${suffix} is not a regular file`);
    if (st.nlink > 1) throw new PathRefused(403, `${real}${suffix} has other hard links`);
  }
}

/**
 * The bytes of a regular file, opened without following a link in its last component and
 * without blocking (a FIFO put in its place must not stall the server). With `within`, the
 * file opened must lie there, which closes the window between a check and the open; a file
 * over `maxBytes` is skipped (SourceSkipped) before any byte is read.
 */
export function readNoFollow(file: string, within?: string, maxBytes = Number.POSITIVE_INFINITY): Buffer {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new PathRefused(403, `${file} is not a regular file`);
    // A hard link names another file under a name of one's own (another user's, the server's):
    // names cannot tell, so a file with more than one is not read.
    if (st.nlink > 1) throw new PathRefused(403, `${file} has other hard links`);
    if (within) {
      const opened = openedPath(fd);
      if (opened && !isInside(opened, within)) throw new PathRefused(403, `${file} leads outside ${within}`);
    }
    // Checked on the file opened, not only at the scan: one that grew since is not read whole.
    if (st.size > maxBytes) throw new SourceSkipped(`is larger than ${Math.round(maxBytes / 1024 / 1024)} MB`);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads `relative` (from a scan) below `folder`: the folder is checked again with `check`, and
 * the file's own folder must still resolve inside it, so one swapped for a link since the
 * scan is refused.
 */
export function readBelow(folder: string, relative: string, check: Confine, maxBytes?: number): Buffer {
  const base = realpathSync(check(folder));
  const file = join(base, relative);
  if (!isInside(realpathSync(dirname(file)), base)) throw new PathRefused(403, `${relative} leads outside ${folder}`);
  return readNoFollow(file, base, maxBytes);
}
