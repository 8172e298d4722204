// The executable (scripts/build.ts), built once per test run for every test file that needs it
// (test/executable.test.ts, test/scripts/release.test.ts): a build is ~15-60 s of both cores.
// Within one test process the first caller's build is shared; across the run's parallel test
// processes (scripts/test.ts) the first to take the lock folder builds into the run's folder and
// the others wait for its mark.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../../scripts/build";
import { tempDir } from "../helpers";
import { until } from "./wait";

let building: Promise<string> | undefined;

/** The path of a freshly built executable, with its THIRD-PARTY-NOTICES.txt beside it. */
export function builtExecutable(): Promise<string> {
  building ??= buildOnce();
  return building;
}

async function buildOnce(): Promise<string> {
  const runRoot = process.env.CORPUS_TEST_RUN_ROOT;
  if (!runRoot) return buildExecutable(join(tempDir("corpus-build-"), "corpus"));
  const folder = join(runRoot, "built-executable");
  const done = join(folder, "done");
  const failed = join(folder, "failed");
  const executable = join(folder, "corpus");
  try {
    mkdirSync(join(runRoot, "built-executable.lock"));
  } catch {
    // Another test process builds it: its mark says when, or why not.
    await until("the executable built by another test process", () => existsSync(done) || existsSync(failed) || undefined, 600_000);
    if (existsSync(failed)) throw new Error(`the executable's build failed in another test process: ${readFileSync(failed, "utf8")}`);
    return executable;
  }
  mkdirSync(folder, { recursive: true });
  try {
    await buildExecutable(executable);
    writeFileSync(done, "");
    return executable;
  } catch (error) {
    writeFileSync(failed, error instanceof Error ? error.message : String(error));
    throw error;
  }
}
