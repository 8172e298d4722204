// A worker that holds MB megabytes (its first message) and answers each later message with what
// its thread's memory check did (limits/memory.ts collectIfOverBudget): the process over its
// budget because of another thread's memory, for the serving thread's bound's test.
import { collectIfOverBudget } from "../../src/limits/memory";

declare const self: Worker;

let held: Uint8Array | undefined;
self.onmessage = (event: MessageEvent<number | "check">) => {
  if (typeof event.data === "number") {
    held = new Uint8Array(event.data * 1024 * 1024).fill(1);
    self.postMessage(held.length);
  } else self.postMessage(collectIfOverBudget());
};
