// `bun run build`: the single executable dist/corpus (D2). The model, tokenizer, vec0.so,
// libonnxruntime.so.1, the onnxruntime binding and the API docs' assets are embedded
// (src/native/assets.ts), with the sha256 of each native library; the result runs from any
// folder with nothing beside it.
import { $ } from "bun";
import { mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "corpus");

export async function buildExecutable(target = outfile): Promise<string> {
  await $`${process.execPath} ${join(root, "scripts/build-model.ts")}`.quiet();
  const native = await nativeDigests();
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
    define: native,
  } as Parameters<typeof Bun.build>[0]);
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("build failed");
  }
  return target;
}

/** The sha256 of each embedded native library, which the executable checks its copies against (src/native/materialize.ts). */
async function nativeDigests(): Promise<Record<string, string>> {
  // Imported late: assets.ts names the model, which build-model.ts has only now written.
  const { nativeLibraries } = await import("../src/native/assets");
  const { NATIVE_SHA256_DEFINE, sha256 } = await import("../src/native/materialize");
  const digests = Object.fromEntries(Object.values(nativeLibraries).map((l) => [l.name, sha256(readFileSync(l.source))]));
  return { [NATIVE_SHA256_DEFINE]: JSON.stringify(digests) };
}

if (import.meta.main) {
  const path = await buildExecutable();
  console.log(`built ${path} (${(statSync(path).size / 1e6).toFixed(1)} MB)`);
}
