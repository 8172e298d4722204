// The embedded HNSW inside a single executable: usearch's binding is compiled in by
// `bun build --compile` and loaded from there, so the executable copied alone into an empty
// folder, with no node_modules anywhere it could look, builds and searches an index.
import { expect, test } from "bun:test";
import { copyFileSync } from "node:fs";
import { join } from "node:path";
import { tempDir } from "../helpers";

test("a compiled executable, alone in an empty folder, builds and searches an HNSW index", async () => {
  const built = join(tempDir(), "hnsw");
  const result = await Bun.build({
    entrypoints: [join(import.meta.dir, "../support/hnsw-entry.ts")],
    compile: { outfile: built, autoloadDotenv: false, autoloadBunfig: false },
    target: "bun",
  } as Parameters<typeof Bun.build>[0]);
  expect(result.success).toBe(true);
  const alone = join(tempDir(), "hnsw");
  copyFileSync(built, alone);
  const run = Bun.spawnSync([alone], { cwd: join(alone, ".."), env: { PATH: "/usr/bin:/bin", TMPDIR: tempDir() } });
  expect(run.stderr.toString()).toBe("");
  expect(JSON.parse(run.stdout.toString())).toEqual({ size: 500, nearest: { id: 42, similarity: expect.closeTo(1, 5) } });
}, 120_000);
