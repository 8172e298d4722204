// File helpers for backup and restore: ranges read in bounded chunks, hashed as they pass, and
// writes made durable (file and folder fsync) before anything is renamed into place.
import { createHash } from "node:crypto";
import { closeSync, constants, fsyncSync, lstatSync, openSync, readSync, type Stats, writeSync } from "node:fs";

/** Bytes read per step: bounded memory whatever the size of the database. */
const CHUNK = 1 << 20;

/**
 * Reads `bytes` bytes of `fd` from `offset`, hands each chunk to `sink`, and returns their
 * sha256 (hex). A file shorter than the range is an error, never a short hash.
 */
export function readRange(fd: number, offset: number, bytes: number, sink?: (chunk: Uint8Array) => void): string {
  const hash = createHash("sha256");
  const buffer = Buffer.allocUnsafe(Math.min(CHUNK, Math.max(bytes, 1)));
  let done = 0;
  while (done < bytes) {
    const n = readSync(fd, buffer, 0, Math.min(buffer.length, bytes - done), offset + done);
    if (n === 0) throw new RangeError(`the file ends ${bytes - done} bytes early`);
    const chunk = buffer.subarray(0, n);
    hash.update(chunk);
    sink?.(chunk);
    done += n;
  }
  return hash.digest("hex");
}

/** Writes all of `data` at `position` (writeSync may write less than asked). */
export function writeAll(fd: number, data: Uint8Array, position: number): void {
  let done = 0;
  while (done < data.length) done += writeSync(fd, data, done, data.length - done, position + done);
}

/** A rename or a new file survives a power cut only once its folder is synced. */
export function fsyncFolder(dir: string): void {
  const fd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A new file, never an existing one or a link: created 0600 for the owner alone. */
export function createPrivateFile(path: string): number {
  return openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600);
}

export const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest("hex");

/** The entry at `path` itself (a link is not followed), or undefined when there is none. */
export function lstatIfAny(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return undefined;
    throw error;
  }
}
