// The OCI image (scripts/oci.ts, packaging/Containerfile): built offline with buildah FROM scratch,
// it holds the executable, the system libraries ldd names and nothing else; its config runs it as
// an unprivileged user with the data and key folders apart (D30), each that user's alone; and its
// files alone, unpacked and run as that user with no file of the machine's in reach (a chroot with
// its own /proc, as a container runtime gives), serve and load the model.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildImage, CONTAINERFILE, IMAGE_PATHS, IMAGE_USER, writeImageContext } from "../../scripts/oci";
import { SERVICE_VERSION } from "../../src/version";
import { tempDir } from "../helpers";
import { builtExecutable } from "../support/built-executable";
import { freePort } from "../support/tcp";
import { isRoot } from "../support/tmpfs";
import { until } from "../support/wait";

setDefaultTimeout(120_000);

interface ImageConfig {
  config: {
    User: string;
    Env: string[];
    Entrypoint: string[];
    Cmd: string[];
    Volumes: Record<string, unknown>;
    ExposedPorts: Record<string, unknown>;
  };
}

const run = (command: string[], cwd?: string) => {
  const r = Bun.spawnSync(command, { cwd });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
};

let context: string;
let libraries: string[];
let config: ImageConfig;
let rootfs: string;
/** `tar tv` of the image's one layer: "drwx------ 10001/10001 0 … var/lib/corpus/" lines. */
let listing: string[];

beforeAll(async () => {
  const built = await builtExecutable();
  const work = tempDir("corpus-oci-");
  context = join(work, "context");
  libraries = await writeImageContext(built, context);
  const archive = join(work, "image.tar");
  const image = await buildImage(context, archive, `corpus-test:${SERVICE_VERSION}`);
  if (!image.built) throw new Error(`the image was not built: ${image.why} (the README's test command installs buildah)`);
  const layout = join(work, "layout");
  mkdirSync(layout);
  expect(run(["tar", "-xf", archive, "-C", layout]).code).toBe(0);
  const blob = (digest: string) => join(layout, "blobs", ...digest.split(":"));
  const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8")) as { manifests: Array<{ digest: string }> };
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!.digest), "utf8")) as {
    config: { digest: string };
    layers: Array<{ digest: string }>;
  };
  config = JSON.parse(readFileSync(blob(manifest.config.digest), "utf8")) as ImageConfig;
  expect(manifest.layers).toHaveLength(1);
  const layer = blob(manifest.layers[0]!.digest);
  listing = run(["tar", "-tvzf", layer, "--numeric-owner"]).stdout.trim().split("\n");
  rootfs = join(work, "rootfs");
  mkdirSync(rootfs);
  expect(run(["tar", "-xzf", layer, "-C", rootfs, "--numeric-owner"]).code).toBe(0);
}, 600_000);

describe("the image's build context", () => {
  test("holds the libraries ldd names for the executable and its native code: the C and C++ runtimes and the loader", () => {
    const names = libraries.map((l) => l.split("/").at(-1));
    for (const needed of ["libc.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libm.so.6"]) expect(names).toContain(needed);
    expect(names.some((n) => n?.startsWith("ld-linux"))).toBe(true);
    for (const library of libraries) expect(existsSync(join(context, "root", library))).toBe(true);
    expect(readFileSync(join(context, "Containerfile"), "utf8")).toBe(readFileSync(CONTAINERFILE, "utf8"));
  });
});

describe("the image", () => {
  const env = () => Object.fromEntries(config.config.Env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));

  test("runs `corpus serve` as the unprivileged user, on all addresses, with the data and the key in two volumes", () => {
    expect(config.config.User).toBe(`${IMAGE_USER.uid}:${IMAGE_USER.gid}`);
    expect(config.config.Entrypoint).toEqual([IMAGE_PATHS.executable]);
    expect(config.config.Cmd).toEqual(["serve"]);
    expect(env()).toMatchObject({ CORPUS_HOST: "0.0.0.0", CORPUS_DATA_DIR: IMAGE_PATHS.data });
    expect(env().CORPUS_MASTER_KEY_FILE?.startsWith(`${IMAGE_PATHS.keyFolder}/`)).toBe(true);
    expect(Object.keys(config.config.Volumes).sort()).toEqual([IMAGE_PATHS.data, IMAGE_PATHS.keyFolder].sort());
    expect(Object.keys(config.config.ExposedPorts)).toEqual([`${env().CORPUS_PORT}/tcp`]);
  });

  test("holds only the executable, the libraries, passwd and group, /tmp and the two folders; those alone are the user's, mode 0700", () => {
    const files = listing.filter((l) => !l.startsWith("d")).map((l) => `/${l.split(/\s+/).at(-1)}`);
    expect(files.sort()).toEqual([IMAGE_PATHS.executable, "/etc/group", "/etc/passwd", ...libraries].sort());
    const owned = listing.filter((l) => l.split(/\s+/)[1] !== "0/0");
    expect(owned.map((l) => `/${l.split(/\s+/).at(-1)!.replace(/\/$/, "")}`).sort()).toEqual(
      [IMAGE_PATHS.data, IMAGE_PATHS.keyFolder].sort(),
    );
    for (const line of owned) {
      expect(line.startsWith("drwx------")).toBe(true);
      expect(line.split(/\s+/)[1]).toBe(`${IMAGE_USER.uid}/${IMAGE_USER.gid}`);
    }
    expect(statSync(join(rootfs, "tmp")).mode & 0o7777).toBe(0o1777);
  });

  describe("unpacked and run as its user with nothing of the machine's", () => {
    let server: Bun.Subprocess | undefined;
    let port: number;
    let log = "";
    const collect = async (stream: ReadableStream<Uint8Array>) => {
      const reader = stream.getReader();
      for (let read = await reader.read(); !read.done; read = await reader.read()) log += new TextDecoder().decode(read.value);
    };
    let serverEnv: Record<string, string> = {};

    // Its own mount and PID namespaces, /proc mounted in them (the executable reads /proc/self/exe,
    // as under any container runtime), then chroot into the image's files as its user. The forked
    // child is to die with unshare, but it keeps no parent-death signal once it is the image's user
    // (a change of user clears it): what runs in the image is ended by its root (imageProcesses).
    const inImage = (command: string[], env: Record<string, string>) =>
      Bun.spawn(
        [
          "unshare",
          "--mount",
          "--pid",
          "--fork",
          "--kill-child=SIGKILL",
          `--mount-proc=${join(rootfs, "proc")}`,
          "chroot",
          `--userspec=${config.config.User}`,
          rootfs,
          ...command,
        ],
        { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdout: "pipe", stderr: "pipe" },
      );

    beforeAll(async () => {
      if (!isRoot) return;
      mkdirSync(join(rootfs, "proc"));
      port = freePort();
      // The image's environment, on loopback here rather than every address of the test machine.
      serverEnv = { ...env(), CORPUS_HOST: "127.0.0.1", CORPUS_PORT: String(port) };
      server = inImage([...config.config.Entrypoint, ...config.config.Cmd], serverEnv);
      for (const stream of [server.stdout, server.stderr] as ReadableStream<Uint8Array>[]) void collect(stream);
    });
    /** The processes whose root is the image's files: the server, reparented to init once unshare is killed. */
    const imageProcesses = (root = realpathSync(rootfs)) =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p))
        .filter((pid) => {
          try {
            return readlinkSync(`/proc/${pid}/root`) === root;
          } catch {
            return false; // gone meanwhile
          }
        })
        .map(Number);

    afterAll(async () => {
      server?.kill("SIGKILL");
      await server?.exited;
      for (const pid of imageProcesses()) process.kill(pid, "SIGKILL");
      await until("the image's processes ended", () => imageProcesses().length === 0 || undefined, 10_000);
    });

    test.if(isRoot)(
      "serves, makes its key 0600 in the key folder, and loads the model (onnxruntime, its C++ runtime) from the image's files",
      async () => {
        await until(
          "GET / in the image",
          async () => (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.ok || undefined,
          60_000,
        );
        const token = inImage([IMAGE_PATHS.executable, "token", "create", "--user", "alice", "--scopes", "corpus:search"], serverEnv);
        const [out, err] = await Promise.all([new Response(token.stdout).text(), new Response(token.stderr).text()]);
        expect({ exit: await token.exited, err }).toEqual({ exit: 0, err: "" });
        const bearer = out.trim().split("\n").at(-1)!;
        const answer = await fetch(`http://127.0.0.1:${port}/v1/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" },
          body: JSON.stringify({ query: "which invoices are due in March?" }),
        });
        expect(answer.status).toBe(200);
        await until("the model loaded in the image", () => log.includes("embedding model ready") || undefined, 60_000);
        const key = statSync(join(rootfs, env().CORPUS_MASTER_KEY_FILE!));
        expect(key.mode & 0o777).toBe(0o600);
        expect(key.uid).toBe(IMAGE_USER.uid);
        expect(statSync(join(rootfs, IMAGE_PATHS.data)).mode & 0o777).toBe(0o700);
      },
    );
  });
});
