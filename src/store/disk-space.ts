// Free space of the data folder (D29). Below CORPUS_MIN_FREE_BYTES the service warns, starts no
// new indexing and reports its connectors unhealthy. It also holds a reserve: a file of zeros in
// the data folder that is removed when a deletion (or its checkpoint) finds the disk full. In WAL
// mode even a DELETE must append to the log, so without room set aside a full disk could not be
// emptied through the service (measured: /work/shared/notes/full-disk.md). The reserve is made
// again once there is room for it above the floor.
import { closeSync, existsSync, openSync, statfsSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Logger } from "../log";
import { isStorageError } from "./storage-errors";

export const RESERVE_FILE = "storage-reserve";
/** The reserve is this fraction of the floor (64 MiB of the default 256 MiB). */
const RESERVE_SHARE = 4;
const WRITE_CHUNK = 1 << 20;

export type FreeBytes = (dir: string) => number;
export const statfsFree: FreeBytes = (dir) => {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
};

export class DiskSpace {
  readonly reserveBytes: number;
  private wasLow = false;

  constructor(
    private readonly dataDir: string,
    readonly minFreeBytes: number,
    private readonly log: Logger,
    private readonly freeOf: FreeBytes = statfsFree,
  ) {
    this.reserveBytes = Math.floor(minFreeBytes / RESERVE_SHARE);
  }

  get reservePath(): string {
    return join(this.dataDir, RESERVE_FILE);
  }

  /** Bytes free for this process in the data folder (unknown: taken as plenty). */
  free(): number {
    try {
      return this.freeOf(this.dataDir);
    } catch {
      return Number.POSITIVE_INFINITY;
    }
  }

  /** Whether free space is below CORPUS_MIN_FREE_BYTES. */
  low(): boolean {
    return this.free() < this.minFreeBytes;
  }

  hasReserve(): boolean {
    try {
      return statSync(this.reservePath).size >= this.reserveBytes;
    } catch {
      return false;
    }
  }

  /** Writes the reserve if it is missing and there is room for it above the floor; whether it is there now. */
  ensureReserve(): boolean {
    if (this.reserveBytes === 0) return true;
    if (this.hasReserve()) return true;
    if (this.free() < this.minFreeBytes + this.reserveBytes) return false;
    const zeros = new Uint8Array(Math.min(WRITE_CHUNK, this.reserveBytes));
    let fd: number | undefined;
    try {
      fd = openSync(this.reservePath, "w", 0o600);
      for (let done = 0; done < this.reserveBytes; ) done += writeSync(fd, zeros, 0, Math.min(zeros.length, this.reserveBytes - done));
      closeSync(fd);
      this.log.info("storage reserve in place", { bytes: this.reserveBytes });
      return true;
    } catch (error) {
      if (fd !== undefined) closeSync(fd);
      // A partial reserve holds space and protects nothing.
      this.removeReserveFile();
      if (!isStorageError(error)) throw error;
      return false;
    }
  }

  private removeReserveFile(): boolean {
    if (!existsSync(this.reservePath)) return false;
    unlinkSync(this.reservePath);
    return true;
  }

  /** Frees the reserve for a write that must succeed on a full disk; whether anything was freed. */
  releaseReserve(): boolean {
    const freed = this.removeReserveFile();
    if (freed)
      this.log.warning("storage reserve released to let a deletion through; made again once space is back", { bytes: this.reserveBytes });
    return freed;
  }

  /**
   * One look at free space: warns when it falls below the floor, and rebuilds the reserve once it
   * is back. Whether space has just come back (the caller forgets the storage failures of jobs
   * that ran while it was short: one that still cannot write says so again on its next pass).
   */
  check(): boolean {
    const free = this.free();
    const low = free < this.minFreeBytes;
    const back = !low && this.wasLow;
    if (low && !this.wasLow) {
      this.log.warning("free space below CORPUS_MIN_FREE_BYTES: no new indexing until space is freed", {
        free_bytes: free,
        min_free_bytes: this.minFreeBytes,
      });
    } else if (back) {
      this.log.info("free space back above CORPUS_MIN_FREE_BYTES", { free_bytes: free });
    }
    this.wasLow = low;
    if (!low) this.ensureReserve();
    return back;
  }

  /** The words the health route and connector statuses give while space is short. */
  lowReason(): string | undefined {
    if (!this.low()) return undefined;
    return "the server's storage is nearly full (free space below CORPUS_MIN_FREE_BYTES): indexing is paused until space is freed, and writes may fail";
  }

  /**
   * Runs `write`, and once more after freeing the reserve if the disk refused it: for what must
   * succeed on a full disk (a deletion, the checkpoint that follows it).
   */
  withReserve<T>(write: () => T): T {
    try {
      return write();
    } catch (error) {
      if (!isStorageError(error) || !this.releaseReserve()) throw error;
      return write();
    }
  }
}
