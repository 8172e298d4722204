// An embedding worker that never answers (as `new Worker(new URL(…))` did in the executable).
export {};

declare const self: Worker;
self.onmessage = () => {};
