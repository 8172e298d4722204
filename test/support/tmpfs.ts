// A real small file system for full-disk tests (D29): a tmpfs mounted for the test (needs root,
// as CI runs), filled with a file of zeros until the kernel refuses, unmounted after.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, statfsSync, writeSync } from "node:fs";

export const isRoot = process.getuid?.() === 0;

/** Why a full-disk test is skipped, once, in the test output. */
export function skipNotice(file: string): void {
  if (!isRoot) console.warn(`${file} skipped: mounting a tmpfs needs root (CI runs as root)`);
}

export function mountTmpfs(dir: string, bytes: number): { unmount(): void } {
  mkdirSync(dir, { recursive: true });
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes}`, "tmpfs", dir]);
  return { unmount: () => execFileSync("umount", ["-l", dir]) };
}

export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return Number(s.bavail) * Number(s.bsize);
}

/** Writes zeros into `path` until the file system refuses: 1 MiB at a time, then smaller. */
export function fillDisk(path: string): number {
  const fd = openSync(path, "a");
  let written = 0;
  try {
    for (let chunk = 1 << 20; chunk >= 512; chunk >>= 1) {
      const zeros = new Uint8Array(chunk);
      for (;;) {
        try {
          written += writeSync(fd, zeros);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return written;
}
