// Issue 35 item 8 (D29), with the compiled executable: it copies onnxruntime (~44 MB) and the
// model (~23 MB) into the data folder to load them (src/native/materialize.ts), which a run from
// source never does. On a data disk too small for those copies the embedding worker failed with
// ENOSPC at every start and /v1/query answered 500. Now `corpus check` and the start-up log say
// how much room the copies need, a question is answered by its words with a note, deep search is
// 507, and once the disk has room the model loads by itself, without a restart. A real tmpfs;
// needs root (mount), skipped otherwise.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { nativeLibraries } from "../../src/native/assets";
import { MEANING_NOT_USED_NO_ROOM } from "../../src/retrieval/search";
import { type Corpus, FIXED_ISSUER, newMasterKey, startCorpus } from "../backup/support";
import { builtExecutable } from "../support/built-executable";
import { chinookOperatorFile } from "../support/chinook";
import { freeBytes, isRoot, mountTmpfs, skipNotice } from "../support/tmpfs";
import { until } from "../support/wait";

skipNotice("full-disk-executable.test.ts");

/** Room for the database, not for the model's copies. */
const TMPFS_BYTES = 40 * 1024 * 1024;

const root = mkdtempSync(join(tmpdir(), "corpus-full-disk-exe-"));
const mnt = join(root, "mnt");
const dataDir = join(mnt, "data");
const folder = join(root, "bin");
const exe = join(folder, "corpus");
let mounted: { unmount(): void } | undefined;
let server: Corpus | undefined;

const env = () => ({
  ...FIXED_ISSUER,
  PATH: "/usr/bin:/bin",
  HOME: root,
  CORPUS_DATA_DIR: dataDir,
  CORPUS_MASTER_KEY: masterKey,
  CORPUS_CONNECTORS_FILE: connectors,
  CORPUS_LOG_LEVEL: "INFO",
  CORPUS_LIMIT_QUERY_PER_MINUTE: "1000",
});
const masterKey = newMasterKey();
const connectors = chinookOperatorFile();

describe.skipIf(!isRoot)("the executable on a data disk too small for the model's copies (D29)", () => {
  beforeAll(async () => {
    mkdirSync(folder, { recursive: true });
    copyFileSync(await builtExecutable(), exe);
    chmodSync(exe, 0o755);
    mounted = mountTmpfs(mnt, TMPFS_BYTES);
  }, 240_000);

  afterAll(async () => {
    if (server && server.proc.exitCode === null) await server.stop();
    mounted?.unmount();
    rmSync(root, { recursive: true, force: true });
  });

  test("corpus check says how much room the copies need, before trying them", () => {
    const r = Bun.spawnSync([exe, "check"], { cwd: folder, env: env() });
    expect(r.exitCode).toBe(1);
    const said = r.stderr.toString();
    expect(said).toMatch(
      new RegExp(
        `^corpus: no room in the data folder ${dataDir} for the embedding model's checked copies \\(onnxruntime and the model\\): they need \\d+ MB, \\d+ MB free`,
      ),
    );
    const needed = Number(/they need (\d+) MB/.exec(said)![1]);
    expect(needed).toBeGreaterThan(60);
    expect(needed).toBeLessThan(80);
  });

  test("serving: the log says the room needed; questions are answered by words with a note, never 500; space back, meaning is used again", async () => {
    server = await startCorpus(env(), [], { command: [exe], cwd: folder });
    const warning = server.lines.find((l) =>
      String(l.message).startsWith("no room in the data folder for the embedding model's checked copies"),
    );
    expect(warning).toBeDefined();
    expect(Number(warning!.needed_bytes)).toBeGreaterThan(60e6);
    expect(Number(warning!.free_bytes)).toBeLessThan(TMPFS_BYTES);
    const token = Bun.spawnSync([exe, "token", "create", "--user", "alice", "--scopes", "corpus:search,corpus:read"], {
      cwd: folder,
      env: env(),
    })
      .stdout.toString()
      .trim();
    const ask = (path: string, body: unknown) =>
      fetch(`${server!.url}${path}`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
    for (let i = 0; i < 3; i++) {
      const r = await ask("/v1/query", { query: `invoices billed to Berlin ${i}` });
      expect(r.status).toBe(200);
      const body = (await r.json()) as any;
      expect(body.search_summary.notes).toContain(MEANING_NOT_USED_NO_ROOM);
      expect(body.results.flatMap((g: any) => g.chunks).length).toBeGreaterThan(0);
    }
    const deep = await ask("/v1/deep_search", { query: "invoices billed to Berlin" });
    expect(deep.status).toBe(507);
    expect(((await deep.json()) as { type: string }).type).toBe("insufficient_storage");
    // The worker failed for want of room, said with what it needs; nothing unhandled.
    const failed = server.lines.filter((l) => String(l.message).startsWith("the embedding model could not be loaded"));
    expect(failed.length).toBeGreaterThan(0);
    expect(JSON.stringify(failed)).toContain("no room in the data folder for the checked copy of");
    expect(server.lines.some((l) => l.message === "unhandled error")).toBe(false);

    // Room comes back (the same tmpfs made larger): within the retry time, meaning is used again.
    execFileSync("mount", ["-o", "remount,size=200m", mnt]);
    const meant = await until(
      "a question answered with meaning again",
      async () => {
        const r = await ask("/v1/query", { query: "invoices billed to Berlin" });
        expect(r.status).toBe(200);
        const body = (await r.json()) as any;
        return body.search_summary.notes?.includes(MEANING_NOT_USED_NO_ROOM) ? undefined : body;
      },
      90_000,
      500,
    );
    expect(meant.results.flatMap((g: any) => g.chunks).length).toBeGreaterThan(0);
    expect(server.lines.some((l) => l.message === "embedding worker ready")).toBe(true);
    expect(server.proc.exitCode).toBeNull();
    expect(await server.stop()).toBe(0);
  }, 180_000);

  test("room for onnxruntime's copy but not the model's as well: neither is written, the disk keeps its room for the database", async () => {
    const onnxruntime = statSync(nativeLibraries.onnxRuntime.source).size;
    const small = join(root, "small");
    // The database and onnxruntime's copy fit; the model's (~23 MB) does not, beside them.
    const disk = mountTmpfs(small, onnxruntime + 12 * 1024 * 1024);
    const data = join(small, "data");
    const started = await startCorpus({ ...env(), CORPUS_DATA_DIR: data, CORPUS_MIN_FREE_BYTES: "0" }, [], {
      command: [exe],
      cwd: folder,
    });
    try {
      await until(
        "the model's failed start logged",
        () => started.lines.find((l) => String(l.message).startsWith("the embedding model could not be loaded")),
        60_000,
        50,
      );
      expect(filesUnder(join(data, "native"))).not.toContain("libonnxruntime.so.1");
      expect(freeBytes(small)).toBeGreaterThan(onnxruntime);
    } finally {
      await started.stop();
      disk.unmount();
    }
  }, 240_000);
});

/** Every file under `dir`, by name. */
const filesUnder = (dir: string): string[] =>
  existsSync(dir) ? readdirSync(dir, { recursive: true, encoding: "utf8" }).map((f) => f.split("/").at(-1)!) : [];
