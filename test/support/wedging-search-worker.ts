// The search worker (src/connectors/local-index/search-worker.ts) wedged on demand, for the stuck
// timeout's test: while a file WEDGED lies beside the database, a search never answers (its thread
// spins, as one stuck in a statement would); while a file SLOW lies there, each search first takes
// as many milliseconds as it holds (a worker busy on a loaded machine); without them, searches are
// the real worker's.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import "../../src/connectors/local-index/search-worker";
import type { ToSearcher } from "../../src/connectors/local-index/search-protocol";

declare const self: Worker;

export const WEDGED = "WEDGED";
export const SLOW = "SLOW";

const search = self.onmessage!;
self.onmessage = (event: MessageEvent<ToSearcher>) => {
  const wedge = join(event.data.dataDir, WEDGED);
  while (existsSync(wedge)) Bun.sleepSync(5);
  const slow = join(event.data.dataDir, SLOW);
  if (existsSync(slow)) Bun.sleepSync(Number(readFileSync(slow, "utf8")));
  return search.call(self, event);
};
