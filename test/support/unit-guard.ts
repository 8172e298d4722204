// Preloaded by the unit suite (scripts/test.ts unit): a unit test starts no child process, no
// worker (the embedding model runs in one) and asks for no test server; any of these throws here,
// so a test that needs one fails at once and belongs to the integration suite.
import { mock } from "bun:test";
import { createRequire } from "node:module";

const refuse = (what: string) => () => {
  throw new Error(`${what} in the unit suite: this test belongs to the integration suite (scripts/test.ts)`);
};

process.env.CORPUS_TEST_SUITE = "unit";
Object.assign(Bun, { spawn: refuse("a child process"), spawnSync: refuse("a child process") });
// The module object (not an ESM namespace, which is read-only): named imports see the change.
const childProcess = createRequire(import.meta.url)("node:child_process");
for (const name of ["spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "fork"])
  childProcess[name] = refuse("a child process");
Object.assign(globalThis, {
  Worker: class {
    constructor() {
      refuse("a worker thread (the embedding model)")();
    }
  },
});

// The model in this process (the embedder's own tests load it without a worker).
mock.module("onnxruntime-node", () => refuse("the embedding model")());
