// The OCI image (D35's packages, for container platforms): `packaging/Containerfile` builds it
// FROM scratch out of a root tree this script writes: the executable, the few system libraries
// it and the native code it carries load (found by `ldd`, not listed by hand), a passwd entry
// for an unprivileged user, and the two folders that user writes: the data and the master key's,
// apart so that a copy of the data volume never carries the key (D30).
//   bun scripts/oci.ts [executable]   writes dist/oci/ (the Containerfile and root/), and, where
//                                     buildah is installed, dist/corpus-<version>-oci.tar
// Building needs no network: nothing is pulled (FROM scratch).
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { $ } from "bun";
import { nativeLibraries } from "../src/native/assets";

const root = join(import.meta.dir, "..");
export const CONTAINERFILE = join(root, "packaging", "Containerfile");
/** The build context's folder holding one empty folder, `corpus` (mode 0700), copied as the user's data and key folders. */
export const OWNED_FOLDER = "owned";

/** The user the image runs as: no name on the host, no privilege. */
export const IMAGE_USER = { name: "corpus", uid: 10001, gid: 10001 } as const;
/** Paths inside the image, which packaging/Containerfile's ENV lines name too (a test checks they agree). */
export const IMAGE_PATHS = {
  executable: "/usr/bin/corpus",
  data: "/var/lib/corpus",
  keyFolder: "/etc/corpus",
} as const;

/**
 * The native code the executable loads besides itself: the libraries it writes out and loads
 * (src/native/assets.ts) and the Node-API modules it embeds, those of the packages it depends on
 * (package.json's dependencies) built for linux-x64.
 */
export function nativeCode(): string[] {
  const { dependencies } = require(join(root, "package.json")) as { dependencies: Record<string, string> };
  const modules = Object.keys(dependencies).flatMap((name) => nodeModulesOf(join(root, "node_modules", name)));
  return [...Object.values(nativeLibraries).map((l) => l.source), ...modules];
}

function nodeModulesOf(folder: string): string[] {
  if (!existsSync(folder)) return [];
  return (readdirSync(folder, { recursive: true }) as string[])
    .filter((f) => f.endsWith(".node") && /linux[-/]x64/.test(f))
    .map((f) => join(folder, f));
}

/** The shared libraries `ldd` says each file needs, as absolute paths (the loader included). */
export async function librariesOf(files: string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const file of files) {
    const out = await $`ldd ${file}`.quiet().text();
    for (const line of out.split("\n")) {
      // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)" or "/lib64/ld-linux-x86-64.so.2 (0x…)"
      const path = line.match(/=>\s+(\/\S+)/)?.[1] ?? line.match(/^\s*(\/\S+)\s+\(/)?.[1];
      // What the executable writes out itself (onnxruntime beside its binding) is not the system's.
      if (path && !path.startsWith(root)) found.add(path);
    }
  }
  return [...found].sort();
}

/**
 * Writes the build context into `context` (emptied first): the Containerfile, root/ (the image's
 * files) and owned/corpus/ (an empty folder, mode 0700, that the Containerfile copies into /var/lib
 * and /etc with --chown: the copies keep its mode, and their parents stay root's).
 * Returns the system libraries placed.
 */
export async function writeImageContext(executable: string, context: string): Promise<string[]> {
  rmSync(context, { recursive: true, force: true });
  const at = (path: string) => join(context, "root", path);
  const place = (from: string, to: string, mode: number) => {
    mkdirSync(join(at(to), ".."), { recursive: true });
    copyFileSync(realpathSync(from), at(to));
    chmodSync(at(to), mode);
  };
  place(CONTAINERFILE, join("..", "Containerfile"), 0o644);
  place(executable, IMAGE_PATHS.executable, 0o755);
  const libraries = await librariesOf([executable, ...nativeCode()]);
  for (const library of libraries) place(library, library, 0o755);
  const { name, uid, gid } = IMAGE_USER;
  mkdirSync(at("/etc"), { recursive: true });
  writeFileSync(at("/etc/passwd"), `root:x:0:0::/:/nonexistent\n${name}:x:${uid}:${gid}::${IMAGE_PATHS.data}:/nonexistent\n`);
  writeFileSync(at("/etc/group"), `root:x:0:\n${name}:x:${gid}:\n`);
  // No /etc/ld.so.cache: the loader searches the multiarch folders ldd named by default.
  mkdirSync(at("/tmp"), { recursive: true });
  chmodSync(at("/tmp"), 0o1777);
  for (const folder of [dirname(IMAGE_PATHS.data), dirname(IMAGE_PATHS.keyFolder)]) mkdirSync(at(folder), { recursive: true });
  mkdirSync(join(context, OWNED_FOLDER, "corpus"), { recursive: true });
  chmodSync(join(context, OWNED_FOLDER, "corpus"), 0o700);
  return libraries;
}

/** Builds the image with buildah into an OCI archive, or says why not. */
export async function buildImage(context: string, archive: string, tag: string): Promise<{ built: boolean; why?: string }> {
  if (!Bun.which("buildah")) return { built: false, why: "buildah is not installed" };
  // Its own storage, outside the build context: the machine's images are never touched.
  const storage = mkdtempSync(join(tmpdir(), "corpus-buildah-"));
  const flags = ["--root", storage, "--runroot", join(storage, "run"), "--storage-driver", "vfs"];
  try {
    await $`buildah ${flags} bud --isolation chroot --timestamp 0 -f ${CONTAINERFILE} -t ${tag} ${context}`.quiet();
    rmSync(archive, { force: true });
    await $`buildah ${flags} push ${tag} oci-archive:${archive}:${tag}`.quiet();
    return { built: true };
  } finally {
    await $`buildah ${flags} rmi --all --force`.quiet().nothrow();
    rmSync(storage, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { releaseVersion } = await import("./release");
  const version = releaseVersion();
  const executable = process.argv[2] ?? (await (await import("./build")).buildExecutable());
  const context = join(root, "dist", "oci");
  const libraries = await writeImageContext(executable, context);
  console.log(`wrote ${context} (the executable and ${libraries.length} libraries: ${libraries.join(", ")})`);
  const archive = join(root, "dist", `corpus-${version}-oci.tar`);
  const image = await buildImage(context, archive, `corpus:${version}`);
  if (image.built) console.log(`wrote ${archive} (${(statSync(archive).size / 1e6).toFixed(1)} MB): podman load -i ${archive}`);
  else console.log(`no image built (${image.why}): build dist/oci/ with buildah, podman or docker`);
}
