// The reading worker (src/connectors/reading/worker.ts) with one more kind of input, for the
// memory bound's test: a text file that starts with HUNGRY makes the worker hold ~1 MB more every
// millisecond, up to 1.5 GB, then wait: as a parser that blows its heap on a crafted record would.
import "../../src/connectors/reading/worker";
import type { ToReader } from "../../src/connectors/reading/protocol";

declare const self: Worker;

export const HUNGRY = "HUNGRY";
const HUNGRY_MAX_MB = 1536;

const read = self.onmessage!;
const held: Uint8Array[] = [];
self.onmessage = async (event: MessageEvent<ToReader>) => {
  const m = event.data;
  if (m.type !== "file" || new TextDecoder().decode(m.bytes.subarray(0, HUNGRY.length)) !== HUNGRY) return read.call(self, event);
  while (held.length < HUNGRY_MAX_MB) {
    held.push(new Uint8Array(1024 * 1024).fill(held.length % 251));
    await Bun.sleep(1);
  }
  await new Promise(() => {});
};
