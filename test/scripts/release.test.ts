// `npm run release` (D35): the tarball holds what an operator needs and its SHA256SUMS verify;
// the .deb, installed by dpkg into a root of the test's own (dpkg --root, its maintainer scripts
// run without a chroot with DPKG_ROOT set), makes the corpus user, its data folder and key with
// the modes promised; its unit passes systemd-analyze verify; the installed executable, started
// as that user with the unit's environment, answers, using no system call the unit's filter
// would kill it for; dpkg -r keeps the data, dpkg --purge removes it and says so. The machine's
// own users and packages are never touched (checked).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEB_DEPENDS, DEB_PATHS, type Release, SETTINGS_FILE, tarballFolder, UNIT_FILE, writeRelease } from "../../scripts/release";
import { NOTICES_FILE } from "../../src/licenses/notices";
import { SERVICE_VERSION } from "../../src/version";
import { type Corpus, FIXED_ISSUER, startCorpus } from "../backup/support";
import { tempDir } from "../helpers";
import { builtExecutable } from "../support/built-executable";
import { isRoot } from "../support/tmpfs";

setDefaultTimeout(120_000);

let release: Release;
let built: string;

beforeAll(async () => {
  built = await builtExecutable();
  release = await writeRelease(built, tempDir("corpus-release-"));
}, 600_000);

const run = (command: string[], options: { cwd?: string; env?: Record<string, string> } = {}) => {
  const r = Bun.spawnSync(command, { cwd: options.cwd, env: options.env ?? { PATH: process.env.PATH ?? "/usr/bin:/bin" } });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
};

describe("the release tarball", () => {
  let folder: string;
  beforeAll(() => {
    const into = tempDir("corpus-tarball-");
    expect(run(["tar", "-C", into, "-xzf", release.tarball]).code).toBe(0);
    expect(readdirSync(into)).toEqual([tarballFolder(SERVICE_VERSION)]);
    folder = join(into, tarballFolder(SERVICE_VERSION));
  });

  test("holds the executable, LICENSE, NOTICE, the notices, the unit, its settings, a README and SHA256SUMS; the sums verify", () => {
    expect(readdirSync(folder).sort()).toEqual(
      ["LICENSE", "NOTICE", "README.md", "SHA256SUMS", NOTICES_FILE, "corpus", "corpus.env", "corpus.service"].sort(),
    );
    const checked = run(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: folder });
    expect(checked.code).toBe(0);
    // Every other file is summed.
    expect(checked.stdout.trim().split("\n").sort()).toEqual(
      readdirSync(folder)
        .filter((f) => f !== "SHA256SUMS")
        .map((f) => `${f}: OK`)
        .sort(),
    );
    expect(statSync(join(folder, "corpus")).mode & 0o777).toBe(0o755);
    expect(run([join(folder, "corpus"), "version"]).stdout).toBe(`${SERVICE_VERSION}\n`);
    // The notices the executable prints, and the one unit file both artefacts ship.
    expect(readFileSync(join(folder, NOTICES_FILE), "utf8")).toBe(run([join(folder, "corpus"), "licenses"]).stdout);
    expect(readFileSync(join(folder, "corpus.service"), "utf8")).toBe(readFileSync(UNIT_FILE, "utf8"));
    expect(readFileSync(join(folder, "corpus.env"), "utf8")).toBe(readFileSync(SETTINGS_FILE, "utf8"));
  });

  test("a changed file fails the check; dist/SHA256SUMS verifies both artefacts", () => {
    writeFileSync(join(folder, "README.md"), `${readFileSync(join(folder, "README.md"), "utf8")} `);
    const checked = run(["sha256sum", "--check", "--quiet", "SHA256SUMS"], { cwd: folder });
    expect(checked.code).not.toBe(0);
    expect(checked.stdout).toContain("README.md: FAILED");
    const both = run(["sha256sum", "--check", "--strict", "SHA256SUMS"], { cwd: join(release.tarball, "..") });
    expect(both.code).toBe(0);
    expect(both.stdout).toContain(`corpus_${SERVICE_VERSION}_amd64.deb: OK`);
  });
});

/** A root for dpkg: its database knows the package's dependencies (as the machine has them), its /etc the machine's users. */
function dpkgRoot(): string {
  const root = tempDir("corpus-deb-root-");
  chmodSync(root, 0o755);
  const admin = join(root, "var/lib/dpkg");
  for (const d of ["info", "updates"]) mkdirSync(join(admin, d), { recursive: true });
  writeFileSync(join(admin, "available"), "");
  const names = DEB_DEPENDS.map((d) => d.name);
  const deps = run(["dpkg-query", "--status", ...names]);
  expect(deps.code).toBe(0);
  writeFileSync(join(admin, "status"), deps.stdout);
  // Their file lists (empty: this root holds none of their files), so that dpkg does not warn of them.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
  const listed = run(["dpkg-query", "--show", "--showformat=${binary:Package}\\n", ...names])
    .stdout.trim()
    .split("\n");
  for (const name of listed) writeFileSync(join(admin, "info", `${name}.list`), "");
  mkdirSync(join(root, "etc"));
  for (const f of ["passwd", "group", "shadow", "gshadow", "login.defs"]) copyFileSync(join("/etc", f), join(root, "etc", f));
  return root;
}

/** The systemd unit's settings: each key's values, in order. */
function unitSettings(text: string): Map<string, string[]> {
  const settings = new Map<string, string[]>();
  for (const line of text.split("\n")) {
    const m = /^([A-Za-z]+)=(.*)$/.exec(line.trim());
    if (m) settings.set(m[1]!, [...(settings.get(m[1]!) ?? []), m[2]!]);
  }
  return settings;
}

/** Every system call @system-service allows, its nested sets expanded, as systemd-analyze lists them. */
function systemServiceCalls(): Set<string> {
  const sets = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of run(["systemd-analyze", "syscall-filter"]).stdout.split("\n")) {
    if (line.startsWith("@")) sets.set(line.trim(), (current = []));
    else if (current && line.trim() && !line.trim().startsWith("#")) current.push(line.trim());
  }
  const expand = (set: string): string[] => (sets.get(set) ?? []).flatMap((m) => (m.startsWith("@") ? expand(m) : [m]));
  return new Set(expand("@system-service"));
}

const fileSha = (path: string) => new Bun.CryptoHasher("sha256").update(readFileSync(path)).digest("hex");

test("the .deb's glibc floor covers every glibc symbol version the executable (its embedded libraries too) names", () => {
  const bytes = readFileSync(built).toString("latin1");
  const versions = [...new Set([...bytes.matchAll(/GLIBC_(\d+)\.(\d+)\b/g)].map((m) => [Number(m[1]), Number(m[2])] as const))];
  const highest = versions.reduce((a, b) => (b[0] > a[0] || (b[0] === a[0] && b[1] > a[1]) ? b : a));
  const libc = DEB_DEPENDS.find((d) => d.name === "libc6")!;
  expect(`${highest[0]}.${highest[1]}`).toBe("version" in libc ? libc.version : "");
  // onnxruntime's library needs the C++ runtime.
  expect(bytes.includes("GLIBCXX_3.4.22")).toBe(true);
  expect(DEB_DEPENDS.map((d) => d.name)).toContain("libstdc++6");
});

describe.skipIf(!isRoot)("the .deb, installed by dpkg into a root of its own", () => {
  let root: string;
  let ids: { uid: number; gid: number };
  const at = (path: string) => join(root, path);
  const dpkg = (...args: string[]) => run(["dpkg", `--root=${root}`, "--force-script-chrootless", ...args]);
  const machineFiles = ["/etc/passwd", "/etc/group", "/etc/shadow", "/var/lib/dpkg/status"];
  const machineBefore = new Map<string, string>();

  beforeAll(() => {
    for (const f of machineFiles) machineBefore.set(f, fileSha(f));
    root = dpkgRoot();
  });

  afterAll(() => {
    // The machine's users and packages are as they were, and nothing was installed on it.
    for (const f of machineFiles) expect(fileSha(f), f).toBe(machineBefore.get(f)!);
    expect(existsSync("/var/lib/corpus")).toBe(false);
    expect(existsSync("/etc/corpus")).toBe(false);
  });

  test("dpkg -i installs it: the executable, the unit, the settings (a conffile), the corpus user, the data folder 0700 and the key 0600, theirs", () => {
    const installed = dpkg("-i", release.deb);
    expect(installed.stderr).toBe("");
    expect(installed.code).toBe(0);
    expect(installed.stdout).toContain(`made the master key ${at("/etc/corpus/master.key")}`);

    const passwd = readFileSync(at("/etc/passwd"), "utf8")
      .split("\n")
      .find((l) => l.startsWith("corpus:"));
    expect(passwd).toBeDefined();
    const [, , uid, gid, , home, shell] = passwd!.split(":");
    ids = { uid: Number(uid), gid: Number(gid) };
    expect(ids.uid).toBeGreaterThan(0);
    expect(ids.uid).toBeLessThan(1000);
    expect(home).toBe("/var/lib/corpus");
    expect(shell).toBe("/usr/sbin/nologin");
    expect(readFileSync(at("/etc/group"), "utf8")).toContain(`\ncorpus:x:${gid}:`);
    // The machine's own /etc/passwd has no corpus (the root's copy had it added).
    expect(run(["getent", "passwd", "corpus"]).code).not.toBe(0);

    const mode = (path: string) => {
      const st = statSync(at(path));
      return { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
    };
    const rootOwned = { uid: 0, gid: 0 };
    expect(mode(DEB_PATHS.executable)).toEqual({ ...rootOwned, mode: 0o755 });
    expect(readFileSync(at(DEB_PATHS.executable)).equals(readFileSync(built))).toBe(true);
    expect(readFileSync(at(DEB_PATHS.unit), "utf8")).toBe(readFileSync(UNIT_FILE, "utf8"));
    expect(mode(DEB_PATHS.settings)).toEqual({ ...rootOwned, mode: 0o600 });
    expect(mode("/etc/corpus")).toEqual({ ...rootOwned, mode: 0o755 });
    expect(mode("/var/lib/corpus")).toEqual({ ...ids, mode: 0o700 });
    expect(mode("/etc/corpus/master.key")).toEqual({ ...ids, mode: 0o600 });
    expect(Buffer.from(readFileSync(at("/etc/corpus/master.key"), "utf8").trim(), "base64").length).toBe(32);
    for (const doc of ["README.md", "copyright", "NOTICE", NOTICES_FILE]) expect(existsSync(at(join(DEB_PATHS.docs, doc))), doc).toBe(true);

    // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
    const conffiles = run(["dpkg-query", `--root=${root}`, "--show", "--showformat=${Conffiles}", "corpus"]);
    expect(conffiles.stdout.trim().split(" ")[0]).toBe(DEB_PATHS.settings);
    // Its files are as packed (the md5sums it ships).
    expect(dpkg("--verify", "corpus")).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("the unit is sandboxed as promised and systemd-analyze verify finds nothing to say", () => {
    const settings = unitSettings(readFileSync(at(DEB_PATHS.unit), "utf8"));
    const promised: Record<string, string> = {
      User: "corpus",
      ExecStart: `${DEB_PATHS.executable} serve`,
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      NoNewPrivileges: "yes",
      StateDirectory: "corpus",
      StateDirectoryMode: "0700",
      CapabilityBoundingSet: "",
      SystemCallFilter: "@system-service",
      Restart: "on-failure",
    };
    for (const [key, value] of Object.entries(promised)) expect(settings.get(key), key).toEqual([value]);
    // verify loads the units the service names (targets, slices): the machine's, copied into the root.
    const units = "/lib/systemd/system";
    for (const f of readdirSync(units).filter((f) => /\.(target|slice)$/.test(f)))
      copyFileSync(join(units, f), at(join("/usr/lib/systemd/system", f)));
    expect(run(["systemd-analyze", "verify", `--root=${root}`, "--man=no", DEB_PATHS.unit])).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("the installed executable, as the corpus user with the unit's environment, answers GET / and a question, within @system-service", async () => {
    const settings = unitSettings(readFileSync(at(DEB_PATHS.unit), "utf8"));
    // The unit's Environment=, its paths inside the root; its EnvironmentFile holds only comments as shipped.
    const unitEnv = Object.fromEntries(
      (settings.get("Environment") ?? []).map((e) => {
        const [key, value] = [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)];
        return [key, value.startsWith("/") ? at(value) : value];
      }),
    );
    expect(Object.keys(unitEnv).sort()).toEqual(["CORPUS_DATA_DIR", "CORPUS_MASTER_KEY_FILE", "HOME"]);
    expect(
      readFileSync(at(DEB_PATHS.settings), "utf8")
        .split("\n")
        .filter((l) => l.trim() && !l.startsWith("#")),
    ).toEqual([]);
    // PrivateTmp: a /tmp of its own.
    const tmp = tempDir("corpus-deb-tmp-");
    chownSync(tmp, ids.uid, ids.gid);
    const env = { ...unitEnv, ...FIXED_ISSUER, TMPDIR: tmp, PATH: "/usr/bin:/bin" };
    const asCorpus = ["setpriv", `--reuid=${ids.uid}`, `--regid=${ids.gid}`, "--clear-groups", "--no-new-privs"];
    const trace = join(tmp, "strace.txt");
    let server: Corpus | undefined;
    let tracee: number | undefined;
    let exitCode: number | undefined;
    try {
      // strace runs as the corpus user too: it traces its own child, and everything it starts.
      server = await startCorpus(env, [...asCorpus, "strace", "-f", "-qq", "-o", trace], { command: [at(DEB_PATHS.executable)] });
      // strace leaves its tracee running when signalled: corpus itself is stopped, and strace ends with it.
      tracee = Number(readFileSync(`/proc/${server.proc.pid}/task/${server.proc.pid}/children`, "utf8").trim().split(" ")[0]);
      const home = await fetch(`${server.url}/`);
      expect(home.status).toBe(200);
      expect(((await home.json()) as { version: string }).version).toBe(SERVICE_VERSION);
      const token = run([...asCorpus, at(DEB_PATHS.executable), "token", "create", "--user", "alice", "--scopes", "corpus:search"], {
        env,
      });
      expect(token.stderr).toBe("");
      const asked = await fetch(`${server.url}/v1/query`, {
        method: "POST",
        headers: { authorization: `Bearer ${token.stdout.trim()}`, "content-type": "application/json" },
        body: JSON.stringify({ q: "the invoice from last month", top_k: 3 }),
      });
      expect(asked.status).toBe(200);
      // Its files are the corpus user's, in the data folder.
      expect(statSync(at("/var/lib/corpus/corpus.db")).uid).toBe(ids.uid);
    } finally {
      if (tracee) {
        process.kill(tracee, "SIGTERM");
        await server?.proc.exited;
      }
      exitCode = await server?.stop();
    }
    expect(exitCode).toBe(0);
    // Every system call made, by every thread and worker, is one SystemCallFilter=@system-service allows.
    const made = new Set([...readFileSync(trace, "utf8").matchAll(/^\d+ +([a-z0-9_]+)\(/gm)].map((m) => m[1]!));
    expect(made.size).toBeGreaterThan(30);
    const allowed = systemServiceCalls();
    expect(allowed.has("openat")).toBe(true);
    expect([...made].filter((call) => !allowed.has(call))).toEqual([]);
    // And every socket it opened is of a family RestrictAddressFamilies= allows.
    const families = new Set([...readFileSync(trace, "utf8").matchAll(/ socket\((AF_[A-Z0-9]+)/g)].map((m) => m[1]!));
    expect(families.has("AF_INET")).toBe(true);
    const restricted = settings.get("RestrictAddressFamilies")![0]!.split(" ");
    expect([...families].filter((f) => !restricted.includes(f))).toEqual([]);
  });

  test("attack: a key already there with loose modes (copied in by hand) is kept, and made the corpus user's alone, 0600, by dpkg -i again", () => {
    const key = at("/etc/corpus/master.key");
    const before = readFileSync(key);
    chownSync(key, 0, 0);
    chmodSync(key, 0o644);
    const again = dpkg("-i", release.deb);
    expect(again.code).toBe(0);
    expect(again.stdout).not.toContain("made the master key");
    expect(readFileSync(key).equals(before)).toBe(true);
    const st = statSync(key);
    expect({ uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 }).toEqual({ ...ids, mode: 0o600 });
  });

  test("dpkg -r keeps the data and the key and says so; dpkg --purge removes both and says what it removed", () => {
    const removed = dpkg("-r", "corpus");
    expect(removed.code).toBe(0);
    expect(existsSync(at(DEB_PATHS.executable))).toBe(false);
    expect(existsSync(at("/var/lib/corpus/corpus.db"))).toBe(true);
    expect(existsSync(at("/etc/corpus/master.key"))).toBe(true);
    expect(removed.stdout).toContain(
      `its data is kept in ${at("/var/lib/corpus")} and its master key in ${at("/etc/corpus/master.key")} (dpkg --purge corpus removes both)`,
    );
    // The conffile stays until the purge.
    expect(existsSync(at(DEB_PATHS.settings))).toBe(true);

    const purged = dpkg("--purge", "corpus");
    expect(purged.code).toBe(0);
    expect(purged.stdout).toContain(`removed the data folder ${at("/var/lib/corpus")}`);
    expect(purged.stdout).toContain(`removed the master key ${at("/etc/corpus/master.key")}`);
    expect(existsSync(at("/var/lib/corpus"))).toBe(false);
    expect(existsSync(at("/etc/corpus"))).toBe(false);
    expect(run(["dpkg-query", `--root=${root}`, "--show", "corpus"]).code).not.toBe(0);
  });
});
