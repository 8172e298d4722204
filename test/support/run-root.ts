// A test run's folder for its temporary files (data folders, keys, mail folders, logs, servers):
// made by scripts/test.ts for a parallel run, or by temp-root.ts for a `bun test` of a few files.
import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Makes the folder: passable, not listable, by others (some tests run a process as another user in a folder here). */
export function makeRunRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "corpus-test-run-"));
  chmodSync(root, 0o711);
  return root;
}

export function removeRunRoot(root: string): void {
  try {
    rmSync(root, { recursive: true, force: true, maxRetries: 2 });
  } catch {
    // A folder still in use (a mount a failed test left): the next clean-up of /tmp takes it.
  }
}
