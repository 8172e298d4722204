// `bun run build`: the single executable dist/corpus (D2). The model, tokenizer, vec0.so,
// libonnxruntime.so.1, the onnxruntime binding and the API docs' assets are embedded
// (src/native/assets.ts), with the sha256 of each native library, and so are the prototypes' vectors
// of what is asked (scripts/asked-vectors.ts, computed first when stale); the result runs from any
// folder with nothing beside it. The embedding worker (src/embedding/worker.ts), the reading
// worker (src/connectors/reading/worker.ts, D31), the search worker
// (src/connectors/local-index/search-worker.ts) and the SQLite reader (src/connectors/sql/sqlite-worker.ts) are compiled in as further entrypoints, and the
// executable told their names there. The notices of everything bundled are gathered from the
// bundle's inputs, compiled in (`corpus licenses`) and written beside it (D35, scripts/notices/).

import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { $, type BuildConfig, type BunPlugin } from "bun";
import { NOTICES_FILE, renderNotices } from "../src/licenses/notices";
import { checkNotices, noticesFor, noticesPlugin } from "./notices/gather";

const root = join(import.meta.dir, "..");
const outfile = join(root, "dist", "corpus");
const main = join(root, "src/cli.ts");
const embeddingWorker = join(root, "src/embedding/worker.ts");
const readingWorker = join(root, "src/connectors/reading/worker.ts");
const searchWorker = join(root, "src/connectors/local-index/search-worker.ts");
const hnswBuildWorker = join(root, "src/vectors/hnsw-build-worker.ts");
const sqliteWorker = join(root, "src/connectors/sql/sqlite-worker.ts");
/** What the executable is bundled from: the CLI and the workers. */
export const ENTRYPOINTS = [main, embeddingWorker, readingWorker, searchWorker, hnswBuildWorker, sqliteWorker];

export async function buildExecutable(target = outfile): Promise<string> {
  await $`${process.execPath} ${join(root, "scripts/build-model.ts")}`.quiet();
  // The prototypes' vectors of what is asked (D32), computed again if the prototypes or the model changed.
  await $`${process.execPath} ${join(root, "scripts/asked-vectors.ts")}`.quiet();
  const defines = { ...(await nativeDigests()), ...(await workerName()) };
  mkdirSync(join(target, ".."), { recursive: true });
  const options: BuildConfig = {
    entrypoints: ENTRYPOINTS,
    // Not minified: Elysia decides whether a hook is asynchronous (and so awaited on every
    // request) by reading its source text, and minified text (`=>{f(`) reads as asynchronous.
    // Measured: GET / costs ~25% more CPU in a minified build, whitespace-only included.
    minify: false,
    format: "esm",
    sourcemap: "none",
    target: "bun",
    define: defines,
  };
  const notices = await noticesFor(options);
  const result = await Bun.build({
    ...options,
    compile: { outfile: target, autoloadDotenv: false, autoloadBunfig: false },
    bytecode: true,
    metafile: true,
    plugins: [noticesPlugin(notices), withoutBuildPaths],
  } as BuildConfig);
  if (!result.success) {
    for (const log of result.logs) console.error(log);
    throw new Error("build failed");
  }
  checkNotices(result, notices);
  writeFileSync(join(target, "..", NOTICES_FILE), renderNotices(notices));
  return target;
}

// A CommonJS module's `__dirname` and `__filename` are written into the bundle as the absolute
// path of the file on the building machine (Bun 1.4: pino's transport and thread-stream, which
// imapflow brings), so two builds of one commit in two folders differed, and the executable told
// where it was built. They are replaced here by the path from the project's folder: nothing in
// the executable reads those files (no pino transport is used), and the bytes are the same
// wherever it is built.
const FILE_NAME_VARIABLES = /(?<![\w$.])__(dirname|filename)(?![\w$])/g;
const SCRIPT_LOADERS = { ".js": "js", ".cjs": "js", ".mjs": "js" } as const;

const withoutBuildPaths: BunPlugin = {
  name: "corpus-without-build-paths",
  setup(build) {
    build.onLoad({ filter: /\/node_modules\/.*\.[cm]?js$/ }, async ({ path }) => {
      const text = await Bun.file(path).text();
      FILE_NAME_VARIABLES.lastIndex = 0;
      if (!FILE_NAME_VARIABLES.test(text)) return undefined;
      const file = relative(root, path);
      const names = { dirname: JSON.stringify(relative(root, join(path, ".."))), filename: JSON.stringify(file) };
      const loader = SCRIPT_LOADERS[path.slice(path.lastIndexOf(".")) as keyof typeof SCRIPT_LOADERS];
      return { contents: text.replace(FILE_NAME_VARIABLES, (_, which: "dirname" | "filename") => names[which]), loader };
    });
  },
};

/** The sha256 of each embedded native library and of the model, which the executable checks its copies against (src/native/materialize.ts). */
async function nativeDigests(): Promise<Record<string, string>> {
  // Imported late: assets.ts names the model, which build-model.ts has only now written.
  const { nativeLibraries } = await import("../src/native/assets");
  const { modelCopy } = await import("../src/embedding/embedder");
  const { NATIVE_SHA256_DEFINE, sha256 } = await import("../src/native/materialize");
  // The model too: onnxruntime loads it from its checked copy (a path), not from bytes read out of the executable.
  const digests = Object.fromEntries([...Object.values(nativeLibraries), modelCopy].map((l) => [l.name, sha256(readFileSync(l.source))]));
  return { [NATIVE_SHA256_DEFINE]: JSON.stringify(digests) };
}

/**
 * The workers' names inside the executable: each one's path from the entrypoints' common folder
 * (src/), as `./embedding/worker.ts` (src/embedding/worker-client.ts and
 * src/connectors/reading/reader.ts, src/connectors/local-index/searcher.ts start them by those names).
 */
async function workerName(): Promise<Record<string, string>> {
  const { EMBED_WORKER_DEFINE } = await import("../src/embedding/worker-client");
  const { READ_WORKER_DEFINE } = await import("../src/connectors/reading/reader");
  const { SEARCH_WORKER_DEFINE } = await import("../src/connectors/local-index/searcher");
  const { HNSW_BUILD_WORKER_DEFINE } = await import("../src/vectors/partition-index");
  const { SQLITE_WORKER_DEFINE } = await import("../src/connectors/sql/sqlite-reader");
  const name = (worker: string) => JSON.stringify(`./${relative(join(main, ".."), worker)}`);
  return {
    [EMBED_WORKER_DEFINE]: name(embeddingWorker),
    [READ_WORKER_DEFINE]: name(readingWorker),
    [SEARCH_WORKER_DEFINE]: name(searchWorker),
    [HNSW_BUILD_WORKER_DEFINE]: name(hnswBuildWorker),
    [SQLITE_WORKER_DEFINE]: name(sqliteWorker),
  };
}

if (import.meta.main) {
  const path = await buildExecutable();
  console.log(`built ${path} (${(statSync(path).size / 1e6).toFixed(1)} MB)`);
}
