// The real embedding worker, writing the characters of each run it is sent (its longest text and
// all of them, a line a run) to the file CORPUS_TEST_RUN_SIZES names: the bound's test reads them.
import { appendFileSync } from "node:fs";
import type { ToWorker } from "../../../src/embedding/protocol";
import "../../../src/embedding/worker";

declare const self: Worker;

const run = self.onmessage!;
self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === "run")
    appendFileSync(
      process.env.CORPUS_TEST_RUN_SIZES!,
      `${Math.max(...m.texts.map((t) => t.length))} ${m.texts.reduce((n, t) => n + t.length, 0)}\n`,
    );
  return run.call(self, event);
};
