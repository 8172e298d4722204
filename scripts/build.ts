// `bun run build`: the single executable dist/corpus (D2). The model, tokenizer, vec0.so,
// libonnxruntime.so.1, the onnxruntime binding and the API docs' assets are embedded
// (src/native/assets.ts); the result runs from any folder with nothing beside it.
import { $ } from "bun";
import { mkdirSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "corpus");

export async function buildExecutable(target = outfile): Promise<string> {
  await $`${process.execPath} ${join(root, "scripts/build-model.ts")}`.quiet();
  mkdirSync(join(target, ".."), { recursive: true });
  const result = await Bun.build({
    entrypoints: [join(root, "src/cli.ts")],
    compile: { outfile: target, autoloadDotenv: false, autoloadBunfig: false },
    // Not minified: Elysia decides whether a hook is asynchronous (and so awaited on every
    // request) by reading its source text, and minified text (`=>{f(`) reads as asynchronous.
    // Measured: GET / costs ~25% more CPU in a minified build, whitespace-only included.
    minify: false,
    bytecode: true,
    format: "esm",
    sourcemap: "none",
    target: "bun",
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("build failed");
  }
  return target;
}

if (import.meta.main) {
  const path = await buildExecutable();
  console.log(`built ${path} (${(statSync(path).size / 1e6).toFixed(1)} MB)`);
}
