import { heapStats } from "bun:jsc";

/** Bytes this thread's JavaScript heap holds after a full collection, strings' and buffers' outside it included. */
export function heldBytes(): number {
  Bun.gc(true);
  const h = heapStats();
  return h.heapSize + h.extraMemorySize;
}
