// An embedding worker that fails to load the model as the executable's does on a data folder too
// small for its checked copies (issue 35 item 8): the copy is refused for want of room (ENOSPC).
import type { ToWorker } from "../../../src/embedding/protocol";
import { NoRoomForCopy } from "../../../src/native/materialize";

declare const self: Worker;

self.onmessage = (event: MessageEvent<ToWorker>) => {
  if (event.data.type === "stop") process.exit(0);
  if (event.data.type !== "init") return;
  const error = new NoRoomForCopy("libonnxruntime.so.1", 44_000_000, 39_000_000);
  self.postMessage({ type: "failed", message: error.message, code: error.code });
};
