// Preloaded by every test run (bunfig.toml): the run's temporary files (data folders, keys,
// mail folders, logs) go under one folder of its own, removed when the run ends. Tests make
// thousands of them; those a test did not remove, or a run killed midway, stayed in /tmp for
// good (3 GB seen on the CI machine). scripts/test.ts (`npm test`) makes that folder for its
// parallel test processes and removes it; a `bun test` of a few files makes its own here.
import { afterAll } from "bun:test";
import { makeRunRoot, removeRunRoot } from "./run-root";

// A worker of `bun test --parallel` started without scripts/test.ts: a preloaded afterAll runs
// after each of its files, and would take the folder from the next one.
if (process.env.BUN_TEST_WORKER_ID && !process.env.CORPUS_TEST_RUN_ROOT)
  throw new Error("bun test --parallel: run it through scripts/test.ts (npm test), which makes and removes the run's folder");
if (!process.env.CORPUS_TEST_RUN_ROOT) {
  const root = makeRunRoot();
  // os.tmpdir() reads TMPDIR on each call, and child processes (servers under test) inherit it.
  process.env.TMPDIR = root;
  // A hook in a preloaded file runs once, after every file of a serial run.
  afterAll(() => removeRunRoot(root));
}
