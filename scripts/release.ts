// `npm run release` (D35): the executable built (scripts/build.ts), then the two artefacts an
// operator installs from, in dist/:
//   corpus-<version>-linux-x64.tar.gz  the executable, LICENSE, NOTICE, the third-party notices,
//                                      the systemd unit, its settings file, a short operator
//                                      README and SHA256SUMS of them all, in one folder
//   corpus_<version>_amd64.deb         /usr/bin/corpus, the unit, /etc/corpus/corpus.env (a
//                                      conffile), maintainer scripts that make the corpus user,
//                                      its data folder and its master key (packaging/debian/)
// and dist/SHA256SUMS of both. The unit and the settings file are one file each, in packaging/,
// shipped as they are by both.

import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { $ } from "bun";
import { NOTICES_FILE } from "../src/licenses/notices";
import { SERVICE_VERSION } from "../src/version";

const root = join(import.meta.dir, "..");
const packaging = join(root, "packaging");

/** The files of packaging/ both artefacts ship. */
export const UNIT_FILE = join(packaging, "corpus.service");
export const SETTINGS_FILE = join(packaging, "corpus.env");
export const OPERATOR_README = join(packaging, "README.md");
const MAINTAINER_SCRIPTS = ["postinst", "prerm", "postrm"] as const;

/** Where the .deb puts each file (absolute paths on the installed system). */
export const DEB_PATHS = {
  executable: "/usr/bin/corpus",
  unit: "/usr/lib/systemd/system/corpus.service",
  settings: "/etc/corpus/corpus.env",
  docs: "/usr/share/doc/corpus",
} as const;

/**
 * What the .deb needs of the system: glibc (2.34 for usearch's prebuilt module, the HNSW index of
 * big partitions; onnxruntime's library, embedded and loaded at run time, needs GLIBC_2.28 and
 * GLIBCXX_3.4.22), the C++ runtime and libgcc; useradd for the system user.
 * Nothing else: the executable carries the rest. test/scripts/release.test.ts checks the glibc
 * floor against the symbol versions the executable's bytes name.
 */
export const DEB_DEPENDS = [
  { name: "libc6", version: "2.34" },
  { name: "libgcc-s1", version: "3.0" },
  { name: "libstdc++6", version: "6" },
  { name: "passwd" },
] as const;

export const tarballName = (version: string) => `corpus-${version}-linux-x64.tar.gz`;
export const debName = (version: string) => `corpus_${version}_amd64.deb`;
/** The folder the tarball unpacks to. */
export const tarballFolder = (version: string) => `corpus-${version}-linux-x64`;

export interface Release {
  version: string;
  tarball: string;
  deb: string;
}

const sha256 = (file: string) => new Bun.CryptoHasher("sha256").update(readFileSync(file)).digest("hex");

/** `sha256sum` format: one "<hex>  <name>" line per file, so that `sha256sum -c SHA256SUMS` checks them. */
const sums = (folder: string, names: string[]) => names.map((n) => `${sha256(join(folder, n))}  ${n}\n`).join("");

/** The version of package.json, which must be the one the executable reports. */
export function releaseVersion(): string {
  const { version } = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version: string };
  if (version !== SERVICE_VERSION)
    throw new Error(`package.json says version ${version}, src/version.ts ${SERVICE_VERSION}: make them one before a release`);
  return version;
}

/** The time written into the archives: the last commit's (reproducible), or now outside git. */
async function sourceDateEpoch(): Promise<number> {
  const fromEnv = Number(process.env.SOURCE_DATE_EPOCH);
  if (Number.isInteger(fromEnv) && fromEnv > 0) return fromEnv;
  const git = await $`git -C ${root} log -1 --format=%ct`.quiet().nothrow();
  const t = Number(git.stdout.toString().trim());
  return git.exitCode === 0 && Number.isInteger(t) && t > 0 ? t : Math.floor(Date.now() / 1000);
}

function place(from: string, to: string, mode: number): void {
  mkdirSync(join(to, ".."), { recursive: true });
  copyFileSync(from, to);
  chmodSync(to, mode);
}

/**
 * Writes both artefacts into `out` from an executable already built (`executable`, with the
 * build's THIRD-PARTY-NOTICES.txt beside it).
 */
export async function writeRelease(executable: string, out: string): Promise<Release> {
  const version = releaseVersion();
  const notices = join(executable, "..", NOTICES_FILE);
  const epoch = await sourceDateEpoch();
  mkdirSync(out, { recursive: true });
  const work = mkdtempSync(join(out, ".release-"));
  try {
    // The tarball: one folder, SHA256SUMS last, of every other file in it.
    const folder = join(work, tarballFolder(version));
    const files: Array<[string, string, number]> = [
      [executable, "corpus", 0o755],
      [join(root, "LICENSE"), "LICENSE", 0o644],
      [join(root, "NOTICE"), "NOTICE", 0o644],
      [notices, NOTICES_FILE, 0o644],
      [UNIT_FILE, "corpus.service", 0o644],
      [SETTINGS_FILE, "corpus.env", 0o644],
      [OPERATOR_README, "README.md", 0o644],
    ];
    for (const [from, name, mode] of files) place(from, join(folder, name), mode);
    writeFileSync(join(folder, "SHA256SUMS"), sums(folder, files.map(([, name]) => name).sort()));
    const tarball = join(out, tarballName(version));
    // Compressed beside the .deb's tree being made and packed (two single-threaded gzips at once).
    const packingTarball =
      $`tar -C ${work} --sort=name --owner=0 --group=0 --numeric-owner --mtime=@${epoch} -czf ${tarball} ${basename(folder)}`.quiet();

    // The .deb: its tree, owned by root (--root-owner-group), then its control files.
    const tree = join(work, "deb");
    const at = (path: string) => join(tree, path);
    place(executable, at(DEB_PATHS.executable), 0o755);
    place(UNIT_FILE, at(DEB_PATHS.unit), 0o644);
    // It may hold secrets (an OIDC client secret): root's alone; systemd reads it before dropping to corpus.
    place(SETTINGS_FILE, at(DEB_PATHS.settings), 0o600);
    place(OPERATOR_README, at(join(DEB_PATHS.docs, "README.md")), 0o644);
    place(join(root, "LICENSE"), at(join(DEB_PATHS.docs, "copyright")), 0o644);
    place(join(root, "NOTICE"), at(join(DEB_PATHS.docs, "NOTICE")), 0o644);
    place(notices, at(join(DEB_PATHS.docs, NOTICES_FILE)), 0o644);
    const payload = (await $`find . -type f -printf '%P\n'`.cwd(tree).quiet().text()).split("\n").filter(Boolean).sort();
    const installedKiB = Math.ceil(payload.reduce((n, f) => n + statSync(join(tree, f)).size, 0) / 1024);
    const control = join(tree, "DEBIAN");
    mkdirSync(control, { recursive: true });
    writeFileSync(
      join(control, "control"),
      [
        "Package: corpus",
        `Version: ${version}`,
        "Architecture: amd64",
        "Maintainer: The corpus authors <corpus@localhost>",
        `Installed-Size: ${installedKiB}`,
        `Depends: ${DEB_DEPENDS.map((d) => ("version" in d ? `${d.name} (>= ${d.version})` : d.name)).join(", ")}`,
        "Section: net",
        "Priority: optional",
        "Description: self-hosted retrieval service for business tools",
        " corpus indexes mail, documents, shop and accounting data and answers questions",
        " about them with ranked, cited results, over REST and MCP. One executable with its",
        " embedding model; a sandboxed systemd unit; data in /var/lib/corpus.",
        "",
      ].join("\n"),
    );
    writeFileSync(join(control, "conffiles"), `${DEB_PATHS.settings}\n`);
    writeFileSync(
      join(control, "md5sums"),
      payload.map((f) => `${new Bun.CryptoHasher("md5").update(readFileSync(join(tree, f))).digest("hex")}  ${f}\n`).join(""),
    );
    for (const script of MAINTAINER_SCRIPTS) place(join(packaging, "debian", script), join(control, script), 0o755);
    const deb = join(out, debName(version));
    await Promise.all([
      packingTarball,
      $`dpkg-deb --root-owner-group -Zgzip --build ${tree} ${deb}`.env({ ...process.env, SOURCE_DATE_EPOCH: String(epoch) }).quiet(),
    ]);

    writeFileSync(join(out, "SHA256SUMS"), sums(out, [basename(tarball), basename(deb)]));
    return { version, tarball, deb };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  const { buildExecutable } = await import("./build");
  const executable = await buildExecutable();
  const release = await writeRelease(executable, join(root, "dist"));
  for (const file of [release.tarball, release.deb]) console.log(`wrote ${file} (${(statSync(file).size / 1e6).toFixed(1)} MB)`);
}
