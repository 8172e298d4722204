// The real embedding worker, which dies when asked to embed the text CRASH (an uncaught error)
// or EXIT (the thread exits).
import "../../../src/embedding/worker";
import type { ToWorker } from "../../../src/embedding/protocol";

declare const self: Worker;
const real = self.onmessage!;
self.onmessage = (event: MessageEvent<ToWorker>) => {
  const m = event.data;
  if (m.type === "run" && m.texts.includes("CRASH")) {
    setTimeout(() => {
      throw new Error("crashed on purpose");
    });
    return;
  }
  if (m.type === "run" && m.texts.includes("EXIT")) process.exit(3);
  real.call(self, event);
};
