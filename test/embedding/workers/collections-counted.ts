// The real embedding worker, appending a line to the file CORPUS_TEST_COLLECTIONS names for each
// full collection of its heap (Bun.gc(true): limits/memory.ts collectMemory): the test of
// questions' runs under a process over its memory budget counts them.
import { appendFileSync } from "node:fs";
import "../../../src/embedding/worker";

const collect = Bun.gc;
Bun.gc = (full?: boolean) => {
  if (full) appendFileSync(process.env.CORPUS_TEST_COLLECTIONS!, "collected\n");
  return collect(full);
};
