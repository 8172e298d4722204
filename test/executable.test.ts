// The single executable (D2): built, copied alone into an empty folder, it serves and embeds.
import { beforeAll, describe, expect, test, setDefaultTimeout } from "bun:test";
import { copyFileSync, existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../scripts/build";
import { tempDir } from "./helpers";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let folder: string;
let exe: string;
const home = tempDir("corpus-home-");
const env = () => ({ PATH: "/usr/bin:/bin", HOME: home, TMPDIR: tempDir("corpus-tmp-") });

beforeAll(async () => {
  const built = await buildExecutable(join(tempDir("corpus-build-"), "corpus"));
  folder = tempDir("corpus-alone-");
  exe = join(folder, "corpus");
  copyFileSync(built, exe);
  require("node:fs").chmodSync(exe, 0o755);
});

describe("dist/corpus alone in an empty folder", () => {
  test("corpus version", () => {
    const r = Bun.spawnSync([exe, "version"], { cwd: folder, env: env() });
    expect(r.stdout.toString()).toBe("0.1.0\n");
  });

  test("corpus check loads sqlite-vec, embeds a sentence and finds its neighbour; no telemetry written", () => {
    const e = env();
    const r = Bun.spawnSync([exe, "check"], { cwd: folder, env: e });
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout.toString());
    expect(report.sqlite_vec_version).toBe("v0.1.9");
    expect(report.embedding_dim).toBe(384);
    expect(report.embedding_head[0]).toBeCloseTo(0.06766, 4);
    expect(report.knn_nearest).toBe(2);
    expect(report.similarity_related).toBeGreaterThan(0.7);
    expect(readdirSync(e.TMPDIR).filter((f) => f.startsWith("mat-debug"))).toEqual([]);
    expect(existsSync(join(home, ".cache", "Microsoft"))).toBe(false);
  });

  test("corpus serve answers GET / and stops on SIGTERM", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const proc = Bun.spawn([exe], { cwd: folder, env: { ...env(), CORPUS_PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = await fetch(`http://127.0.0.1:${port}/`).then((r) => r.status, () => 0);
    }
    expect(status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(statSync(join(folder, "corpus-data")).isDirectory()).toBe(true);
  });
});
