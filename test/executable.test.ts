// The single executable (D2): built, copied alone into an empty folder, it serves and embeds.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash } from "node:crypto";
import { chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { buildExecutable } from "../scripts/build";
import { assets } from "../src/native/assets";
import { tempDir } from "./helpers";
import { plantedLibrary } from "./native/planted";
import { embedWith, INT8_VALUE_ERROR, PUBLISHED } from "./support/model-variants";

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

  test("corpus check loads sqlite-vec, embeds a sentence and finds its neighbour; no telemetry written", async () => {
    const e = env();
    const r = Bun.spawnSync([exe, "check"], { cwd: folder, env: e });
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout.toString());
    expect(report.sqlite_vec_version).toBe("v0.1.9");
    expect(report.embedding_dim).toBe(384);
    // The shipped model file's vector, exactly; within quantisation of the published one.
    const [shipped] = await embedWith(basename(assets.modelFile), [PUBLISHED.text]);
    report.embedding_head.forEach((x: number, i: number) => expect(x).toBeCloseTo(shipped![i]!, 4));
    report.embedding_head.forEach((x: number, i: number) => expect(Math.abs(x - PUBLISHED.start[i]!)).toBeLessThan(INT8_VALUE_ERROR));
    expect(report.knn_nearest).toBe(2);
    expect(report.similarity_related).toBeGreaterThan(0.7);
    expect(readdirSync(e.TMPDIR).filter((f) => f.startsWith("mat-debug"))).toEqual([]);
    expect(existsSync(join(home, ".cache", "Microsoft"))).toBe(false);
  });

  test("it answers a question from mail and documents (PDF, .eml) with nothing beside it", async () => {
    const shared = join(import.meta.dir, "../../shared/data");
    const connectors = join(tempDir(), "connectors.json");
    const docs = tempDir("corpus-exe-docs-");
    copyFileSync(join(shared, "invoices", "AmazonWebServices.pdf"), join(docs, "AmazonWebServices.pdf"));
    const mail = tempDir("corpus-exe-mail-");
    const anyMail = readdirSync(join(shared, "enron", "messages"))[0]!;
    copyFileSync(join(shared, "enron", "messages", anyMail), join(mail, anyMail));
    writeFileSync(
      connectors,
      JSON.stringify([
        { id: "docs", kind: "files", config: { path: docs } },
        { id: "mail", kind: "maildir", config: { path: mail } },
      ]),
    );
    const dataDir = tempDir("corpus-exe-data-");
    const port = 20000 + Math.floor(Math.random() * 20000);
    // Tokens name the server (issuer and audience default to http://HOST:PORT): same environment.
    const e = { ...env(), CORPUS_DATA_DIR: dataDir, CORPUS_CONNECTORS_FILE: connectors, CORPUS_PORT: String(port) };
    const token = Bun.spawnSync([exe, "token", "create", "--user", "alice", "--scopes", "corpus:search"], { cwd: folder, env: e })
      .stdout.toString()
      .trim();
    const proc = Bun.spawn([exe, "serve"], { cwd: folder, env: e, stdout: "ignore", stderr: "pipe" });
    try {
      for (let i = 0; i < 100; i++) {
        if (
          await fetch(`http://127.0.0.1:${port}/`).then(
            (r) => r.ok,
            () => false,
          )
        )
          break;
        await Bun.sleep(50);
      }
      const ask = (body: unknown) =>
        fetch(`http://127.0.0.1:${port}/v1/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const r = await ask({ q: "Amazon Web Services invoice", top_k: 3 });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { results: Array<{ source: { path: string; type: string }; snippet: string }> };
      expect(body.results[0]!.source.path).toBe("AmazonWebServices.pdf");
      expect(body.results[0]!.snippet).toContain("Amazon Web Services");
      // The mail is found by meaning once its chunks are embedded, beside serving (issue 14): asked again until then.
      let m = { results: [] as Array<{ source: { type: string } }> };
      for (let i = 0; i < 100 && m.results.length === 0; i++) {
        if (i) await Bun.sleep(100);
        m = (await (await ask({ q: "message", filters: { source_type: "email" } })).json()) as typeof m;
      }
      expect(m.results.length).toBe(1);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });

  test("libraries planted by another user, where copies went before and where they go now, are never loaded (issue 13)", () => {
    const planted = plantedLibrary();
    const vec0 = readFileSync(join(import.meta.dir, "../node_modules/sqlite-vec-linux-x64/vec0.so"));
    const hash = createHash("sha256").update(vec0).digest("hex").slice(0, 16);
    const e = { ...env(), CORPUS_DATA_DIR: tempDir("corpus-exe-data-") };
    // The old place, $TMPDIR/corpus-native-<uid>/<hash>/, and the new one, both another user's.
    for (const base of [join(e.TMPDIR, `corpus-native-${process.geteuid!()}`), join(e.CORPUS_DATA_DIR, "native")]) {
      mkdirSync(join(base, hash), { recursive: true });
      copyFileSync(planted.path, join(base, hash, "vec0.so"));
      for (const p of [base, join(base, hash), join(base, hash, "vec0.so")]) chownSync(p, 65534, 65534);
    }
    const r = Bun.spawnSync([exe, "check"], { cwd: folder, env: e });
    expect(r.stderr.toString()).toBe("");
    expect(r.exitCode).toBe(0);
    expect(existsSync(planted.mark)).toBe(false);
    expect(readFileSync(join(e.CORPUS_DATA_DIR, "native", hash, "vec0.so")).equals(vec0)).toBe(true);
    // A data folder that is another user's is refused, clearly, before anything is loaded.
    chownSync(e.CORPUS_DATA_DIR, 65534, 65534);
    const refused = Bun.spawnSync([exe, "check"], { cwd: folder, env: e });
    expect(refused.exitCode).not.toBe(0);
    expect(refused.stderr.toString()).toContain(
      `corpus: the data folder ${e.CORPUS_DATA_DIR} is not safe to use: it is owned by uid 65534`,
    );
  });

  test("corpus serve answers GET / and stops on SIGTERM", async () => {
    const port = 20000 + Math.floor(Math.random() * 20000);
    const proc = Bun.spawn([exe], { cwd: folder, env: { ...env(), CORPUS_PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    let status = 0;
    for (let i = 0; i < 100 && status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 50));
      status = await fetch(`http://127.0.0.1:${port}/`).then(
        (r) => r.status,
        () => 0,
      );
    }
    expect(status).toBe(200);
    proc.kill("SIGTERM");
    expect(await proc.exited).toBe(0);
    expect(statSync(join(folder, "corpus-data")).isDirectory()).toBe(true);
  });
  test("the built-in authorization server works inside it: corpus user add (argon2id), metadata, DCR, sign-in", async () => {
    const e = { ...env(), CORPUS_DATA_DIR: join(tempDir("corpus-exe-oauth-"), "data") };
    const added = Bun.spawnSync([exe, "user", "add", "--user", "alice"], {
      cwd: folder,
      env: e,
      stdin: Buffer.from("alice's long password\n"),
    });
    expect(added.stderr.toString()).toBe("");
    expect(added.exitCode).toBe(0);
    const port = 20000 + Math.floor(Math.random() * 20000);
    const proc = Bun.spawn([exe, "serve"], { cwd: folder, env: { ...e, CORPUS_PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    try {
      const base = `http://127.0.0.1:${port}`;
      let meta: Response | undefined;
      for (let i = 0; i < 100 && meta?.status !== 200; i++) {
        await new Promise((r) => setTimeout(r, 50));
        meta = await fetch(`${base}/.well-known/oauth-authorization-server`).catch(() => undefined);
      }
      const doc = (await meta!.json()) as Record<string, unknown>;
      expect(doc.code_challenge_methods_supported).toEqual(["S256"]);
      const reg = await fetch(`${base}/oauth/register`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" }),
      });
      expect(reg.status).toBe(201);
      const page = await fetch(`${base}/oauth/apps`);
      const cookie = page.headers.getSetCookie()[0]!.split(";")[0]!;
      const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())![1]!;
      const login = await fetch(`${base}/oauth/login`, {
        method: "POST",
        redirect: "manual",
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ user: "alice", password: "alice's long password", csrf, return: "/oauth/apps" }).toString(),
      });
      expect(login.status).toBe(303);
    } finally {
      proc.kill("SIGTERM");
      await proc.exited;
    }
  });
});
