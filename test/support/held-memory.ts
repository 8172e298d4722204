// What this process holds in memory, for tests of what it gives back.
import { heapStats } from "bun:jsc";
import { readFileSync } from "node:fs";

/** Bytes this thread's JavaScript heap holds after a full collection, strings' and buffers' outside it included. */
export function heldBytes(): number {
  Bun.gc(true);
  const h = heapStats();
  return h.heapSize + h.extraMemorySize;
}

/** Resident kB of this process's mappings of the file at `path`. */
export function residentKb(path: string): number {
  let kb = 0;
  let ours = false;
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) ours = line.endsWith(path);
    else if (ours && line.startsWith("Rss:")) kb += Number(/\d+/.exec(line)![0]);
  }
  return kb;
}
