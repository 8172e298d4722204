// Native loaders (dlopen, SQLite's loadExtension) cannot read files embedded in the
// executable (`/$bunfs/...`). Such a file is copied to DATA_DIR/native/<hash>/<name> and
// checked before every load: the folders ours, 0700 and real (no link), the file ours, not
// writable by others, not a link, and its sha256 the one the build recorded for the
// embedded copy. Anything else found there (planted by another user, a link) is replaced,
// never loaded. A data folder another user could swap is refused (src/store/data-dir.ts, the
// same rule the data folder is created by): a fixed place under $TMPDIR was not safe (another
// user could plant a library there, or block start-up with a folder of theirs).

import { randomBytes } from "node:crypto";
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  type Stats,
  statfsSync,
  statSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { checkedDataDir, DataFolderRefused, ownUid } from "../store/data-dir";
import type { NativeLibrary } from "./assets";

/**
 * sha256 (hex) of each native library by name, written into the executable by
 * scripts/build.ts from the very files it embeds: a check costs one hash of the copy on
 * disk, not a read of the embedded file too. Undefined under `bun run`.
 */
declare const CORPUS_NATIVE_SHA256: Record<string, string> | undefined;
export const NATIVE_SHA256_DEFINE = "CORPUS_NATIVE_SHA256";

export const NATIVE_FOLDER = "native";
/** Hex digits of the sha256 that name a file's folder. */
const DIGEST_LENGTH = 16;
const CHUNK = 1 << 20;

export const isEmbedded = (path: string) => path.startsWith("/$bunfs/") || path.startsWith("B:/~BUN/");

/**
 * A checked copy the data folder's disk has no room for: refused before a byte is written, so that
 * a copy of tens of megabytes never fills the disk the database needs (D29: a state, with the
 * room it needs, not a crash). `code` as the system's, for isStorageError.
 */
export class NoRoomForCopy extends Error {
  readonly code = "ENOSPC";
  constructor(
    readonly file: string,
    readonly neededBytes: number,
    readonly freeBytes: number,
  ) {
    super(
      `no room in the data folder for the checked copy of ${file}: ${file.includes(" and ") ? "they need" : "it needs"} ${megabytes(neededBytes)}, ${megabytes(freeBytes)} free`,
    );
  }
}

export const megabytes = (bytes: number) => `${Math.ceil(bytes / 1e6)} MB`;

/** Bytes free for this process on the disk of `path`. */
const freeBytesAt = (path: string) => {
  const s = statfsSync(path);
  return Number(s.bavail) * Number(s.bsize);
};

/** The checked copy of `library` under `dataDir`, when it must be one (an embedded file whose sha256 the build recorded). */
function copyPathOf(library: NativeLibrary, dataDir: string): string | undefined {
  if (!isEmbedded(library.source)) return undefined;
  const recorded = typeof CORPUS_NATIVE_SHA256 === "undefined" ? undefined : CORPUS_NATIVE_SHA256[library.name];
  return recorded ? join(dataDir, NATIVE_FOLDER, recorded.slice(0, DIGEST_LENGTH), library.name) : undefined;
}

/**
 * The room the checked copies of `libraries` still need in `dataDir` (those not there yet at their
 * size; nothing under `bun run`, which loads the files where they are), and the room there is:
 * what start-up and `corpus check` tell before any copy is tried.
 */
export function roomForCopies(libraries: readonly NativeLibrary[], dataDir: string): { needed_bytes: number; free_bytes: number } {
  let needed = 0;
  for (const library of libraries) {
    const target = copyPathOf(library, dataDir);
    if (!target) continue;
    const size = statSync(library.source).size;
    if (lstatOrUndefined(target)?.size !== size) needed += size;
  }
  return { needed_bytes: needed, free_bytes: freeBytesAt(dataDir) };
}

/**
 * Throws NoRoomForCopy before any of `libraries` is copied when they do not fit together: copied
 * one by one, a first copy of tens of megabytes could fill the disk that the second then fails
 * on, leaving the database no room (D29).
 */
export function assertRoomForCopies(libraries: readonly NativeLibrary[], dataDir: string): void {
  const room = roomForCopies(libraries, dataDir);
  if (room.needed_bytes > room.free_bytes)
    throw new NoRoomForCopy(libraries.map((l) => l.name).join(" and "), room.needed_bytes, room.free_bytes);
}

/** A path a loader can open for `library`: its own when it is a real file (`bun run`), else a checked copy under `dataDir`. */
export function materialize(library: NativeLibrary, dataDir: string): string {
  if (!isEmbedded(library.source)) return library.source;
  const recorded = typeof CORPUS_NATIVE_SHA256 === "undefined" ? undefined : CORPUS_NATIVE_SHA256[library.name];
  return materializeCopy(library, dataDir, recorded);
}

/**
 * Copies `library.source` (any readable file) to DATA_DIR/native/<hash>/<name>, or checks
 * the copy there; returns its real path. `expected` is the source's sha256 when known.
 */
export function materializeCopy({ source, name }: NativeLibrary, dataDir: string, expected?: string): string {
  if (name !== basename(name) || name.startsWith(".")) throw new Error(`bad native file name ${name}`);
  const digest = expected ?? sha256(readFileSync(source));
  if (!/^[0-9a-f]{64}$/.test(digest)) throw new Error(`${name}: bad sha256 ${digest}`);
  const root = checkedDataDir(dataDir);
  const folder = join(root, NATIVE_FOLDER);
  privateFolder(folder);
  const own = join(folder, digest.slice(0, DIGEST_LENGTH));
  privateFolder(own);
  const target = join(own, name);
  if (isIntact(target, digest)) return target;
  // Written beside the old copy before it is replaced: the whole size is needed.
  const size = statSync(source).size;
  const free = freeBytesAt(own);
  if (free < size) throw new NoRoomForCopy(name, size, free);
  const bytes = readFileSync(source);
  if (sha256(bytes) !== digest) throw new Error(`${name}: the embedded copy does not have the sha256 recorded when it was built`);
  replace(target, bytes);
  pruneOlderCopies(folder, own, name);
  return target;
}

/** Makes `path` a real folder of ours with mode 0700: tightened if ours, else (a link, a file, another's folder) moved aside. */
function privateFolder(path: string): void {
  const uid = ownUid();
  for (let attempt = 0; attempt < 3; attempt++) {
    let st: Stats;
    try {
      st = lstatSync(path);
    } catch (error) {
      if (code(error) !== "ENOENT") throw error;
      try {
        mkdirSync(path, { mode: 0o700 });
      } catch (e) {
        if (code(e) !== "EEXIST") throw e;
      }
      continue;
    }
    if (st.isDirectory() && st.uid === uid) {
      // Closing it is enough: each file in it is checked before use, so nothing planted while
      // it was open is loaded; and its parent is private, so no link can replace it meanwhile.
      if ((st.mode & 0o7777) !== 0o700) chmodSync(path, 0o700);
      return;
    }
    moveAside(path);
  }
  throw new DataFolderRefused(`native libraries: could not make ${path} a private folder`);
}

/** True when `path` is a regular file of ours, writable by no one else, not a link, with `digest`. */
function isIntact(path: string, digest: string): boolean {
  let fd: number;
  try {
    // O_NOFOLLOW: a link is refused, not followed; O_NONBLOCK: a planted FIFO cannot stall start-up.
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.uid !== ownUid() || st.mode & 0o022) return false;
    return sha256Fd(fd) === digest;
  } finally {
    closeSync(fd);
  }
}

/** Writes `bytes` to a fresh name beside `target`, syncs it, and renames it over whatever `target` was. */
function replace(target: string, bytes: Uint8Array): void {
  const existing = lstatOrUndefined(target);
  if (existing?.isDirectory()) moveAside(target);
  const dir = dirname(target);
  const partial = join(dir, `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(partial, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o500);
  try {
    for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done, bytes.length - done);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(partial, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(partial, target);
  syncFolder(dir);
}

/** The folders of earlier versions of `name` (an upgrade leaves them): unused, and tens of megabytes each. */
function pruneOlderCopies(folder: string, current: string, name: string): void {
  for (const entry of readdirSync(folder)) {
    const path = join(folder, entry);
    if (path === current || !/^[0-9a-f]+$/.test(entry)) continue;
    if (lstatOrUndefined(join(path, name))) rmSync(path, { recursive: true, force: true });
  }
}

/** Renames `path` out of the way within its (private) parent, then removes it as far as permissions allow. */
function moveAside(path: string): void {
  const aside = join(dirname(path), `.refused-${basename(path)}-${randomBytes(6).toString("hex")}`);
  try {
    renameSync(path, aside);
  } catch (error) {
    if (code(error) === "ENOENT") return; // another process of ours moved it first
    throw new DataFolderRefused(`native libraries: cannot move ${path} out of the way (${code(error)}); remove it`);
  }
  try {
    rmSync(aside, { recursive: true, force: true });
  } catch {
    // Another user's folder may keep files we cannot delete; it is out of the way all the same.
  }
}

function syncFolder(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (code(error) === "ENOENT") return undefined;
    throw error;
  }
}

export function sha256(bytes: Uint8Array): string {
  return new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
}

function sha256Fd(fd: number): string {
  const hasher = new Bun.CryptoHasher("sha256");
  const buffer = Buffer.allocUnsafe(CHUNK);
  for (let n: number; (n = readSync(fd, buffer, 0, CHUNK, null)) > 0; ) hasher.update(buffer.subarray(0, n));
  return hasher.digest("hex");
}

const code = (error: unknown) => (error as NodeJS.ErrnoException).code;
