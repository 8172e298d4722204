// The single executable (D2): built, copied alone into an empty folder, it serves and embeds.
import { beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import { chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { ENTRYPOINTS } from "../scripts/build";
import { bundledParts } from "../scripts/notices/gather";
import { NOTICES_FILE } from "../src/licenses/notices";
import { assets } from "../src/native/assets";
import { FIXED_ISSUER, startCorpus } from "./backup/support";
import { tempDir } from "./helpers";
import { plantedLibrary } from "./native/planted";
import { builtExecutable } from "./support/built-executable";
import { migratedDataDir } from "./support/migrated";
import { embedWith, INT8_VALUE_ERROR, PUBLISHED } from "./support/model-variants";
import { OFFICE_FIXTURES } from "./support/office";
import { vectorDatabase } from "./support/pg-vectors";
import { freePort } from "./support/tcp";
import { treeDigest } from "./support/tree-digest";
import { until } from "./support/wait";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

let folder: string;
let exe: string;
let built: string;
const home = tempDir("corpus-home-");
const env = () => ({ PATH: "/usr/bin:/bin", HOME: home, TMPDIR: tempDir("corpus-tmp-") });

beforeAll(async () => {
  built = await builtExecutable();
  folder = tempDir("corpus-alone-");
  exe = join(folder, "corpus");
  copyFileSync(built, exe);
  require("node:fs").chmodSync(exe, 0o755);
  // Another test process may be building it (test/support/built-executable.ts).
}, 600_000);

describe("dist/corpus alone in an empty folder", () => {
  test("corpus version", () => {
    const r = Bun.spawnSync([exe, "version"], { cwd: folder, env: env() });
    expect(r.stdout.toString()).toBe("0.1.0\n");
  });

  test("holds no path of the folder it was built in: a build's bytes do not depend on where it ran", () => {
    const project = join(import.meta.dir, "..");
    const bytes = readFileSync(built);
    // Before the build stopped it (scripts/build.ts, withoutBuildPaths): pino's transport and
    // thread-stream kept the absolute path of their folder as `__dirname`.
    for (const path of [project, join(project, "node_modules")]) expect({ path, at: bytes.indexOf(path) }).toEqual({ path, at: -1 });
  });

  test("corpus licenses prints the notices the build wrote beside it; --json lists every package it bundles (D35)", async () => {
    const text = Bun.spawnSync([exe, "licenses"], { cwd: folder, env: env() });
    expect(text.exitCode).toBe(0);
    expect(text.stdout.toString()).toBe(readFileSync(join(built, "..", NOTICES_FILE), "utf8"));
    const listed = JSON.parse(Bun.spawnSync([exe, "licenses", "--json"], { cwd: folder, env: env() }).stdout.toString()) as Array<{
      name: string;
      version: string;
      license: string;
    }>;
    const entries = new Set(listed.map((n) => `${n.name}@${n.version}`));
    const parts = await bundledParts({ entrypoints: ENTRYPOINTS, target: "bun", format: "esm" });
    for (const folder of parts.packages.keys()) {
      const pkg = JSON.parse(readFileSync(join(folder, "package.json"), "utf8")) as { name: string; version: string };
      expect(entries.has(`${pkg.name}@${pkg.version}`), folder).toBe(true);
    }
    expect(listed.map((n) => n.name)).toEqual(
      expect.arrayContaining(["Bun", "SQLite", "all-MiniLM-L6-v2", "onnxruntime-node", "sqlite-vec-linux-x64"]),
    );
    for (const n of listed) expect(n.license, n.name).toMatch(/\S/);
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
    for (const [i, x] of (report.embedding_head as number[]).entries()) {
      expect(x).toBeCloseTo(shipped![i]!, 4);
      expect(Math.abs(x - PUBLISHED.start[i]!)).toBeLessThan(INT8_VALUE_ERROR);
    }
    expect(report.knn_nearest).toBe(2);
    expect(report.similarity_related).toBeGreaterThan(0.7);
    // The prototypes' vectors the build computed travel inside: the model reads what the tables cannot (D32).
    expect(report.asked).toEqual({ kind: "item", by: "model" });
    expect(readdirSync(e.TMPDIR).filter((f) => f.startsWith("mat-debug"))).toEqual([]);
    expect(existsSync(join(home, ".cache", "Microsoft"))).toBe(false);
  });

  test("it answers a question from mail and documents (PDF, XLSX, .eml) with nothing beside it", async () => {
    const shared = join(import.meta.dir, "../../shared/data");
    const connectors = join(tempDir(), "connectors.json");
    const docs = tempDir("corpus-exe-docs-");
    copyFileSync(join(shared, "invoices", "AmazonWebServices.pdf"), join(docs, "AmazonWebServices.pdf"));
    // A spreadsheet: its rows are read by the reading worker compiled into the executable.
    copyFileSync(join(OFFICE_FIXTURES, "invoices.xlsx"), join(docs, "invoices.xlsx"));
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
    // Tokens name the server: a fixed issuer, as the port is the OS's pick.
    const e = { ...env(), ...FIXED_ISSUER, CORPUS_DATA_DIR: dataDir, CORPUS_CONNECTORS_FILE: connectors };
    const token = Bun.spawnSync([exe, "token", "create", "--user", "alice", "--scopes", "corpus:search"], { cwd: folder, env: e })
      .stdout.toString()
      .trim();
    const server = await startCorpus(e, [], { command: [exe], cwd: folder });
    try {
      const ask = (body: unknown) =>
        fetch(`${server.url}/v1/query`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const r = await ask({ q: "Amazon Web Services invoice", top_k: 3 });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { results: Array<{ source: { path: string; type: string }; snippet: string }> };
      expect(body.results[0]!.source.path).toBe("AmazonWebServices.pdf");
      expect(body.results[0]!.snippet).toContain("Amazon Web Services");
      const row = (await (await ask({ q: "Umbrella Pharma invoice INV-1004", top_k: 3 })).json()) as typeof body;
      expect(row.results.map((x) => x.source.path)).toContain("invoices.xlsx#Invoices/5");
      // The mail is found by meaning once its chunks are embedded, beside serving (issue 14): asked again until then.
      const m = await until("the mail to be found by meaning", async () => {
        const found = (await (await ask({ q: "message", filters: { source_type: "email" } })).json()) as {
          results: Array<{ source: { type: string } }>;
        };
        return found.results.length ? found : undefined;
      });
      expect(m.results.length).toBe(1);
    } finally {
      await server.stop();
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

  test("corpus migrate reads a folder without writing in it: sqlite-vec is loaded from a copy outside it (D33)", async () => {
    // A folder with no checked copy of the library yet (one made by an earlier version has another's).
    const dataDir = migratedDataDir();
    const before = treeDigest(dataDir);
    const target = await vectorDatabase();
    try {
      const e = { ...env(), CORPUS_DATA_DIR: dataDir, CORPUS_MASTER_KEY: randomBytes(32).toString("base64") };
      const r = Bun.spawnSync([exe, "migrate", "--to", target.url], { cwd: folder, env: e });
      expect(JSON.parse(r.stdout.toString()).ok).toBe(true);
      expect(r.exitCode).toBe(0);
      expect(treeDigest(dataDir)).toBe(before);
      expect(readdirSync(e.TMPDIR)).toEqual([]);
    } finally {
      await target.drop();
    }
  });

  test("corpus serve answers GET / and stops on SIGTERM", async () => {
    const server = await startCorpus(env(), [], { command: [exe], cwd: folder });
    expect((await fetch(`${server.url}/`)).status).toBe(200);
    expect(await server.stop()).toBe(0);
    expect(statSync(join(folder, "corpus-data")).isDirectory()).toBe(true);
  });

  test("it serves Prometheus metrics on CORPUS_METRICS_LISTEN, offline, and refuses them on its own listener (D35)", async () => {
    const listen = `127.0.0.1:${freePort()}`;
    const server = await startCorpus({ ...env(), CORPUS_METRICS_LISTEN: listen, CORPUS_DATA_DIR: tempDir("corpus-exe-data-") }, [], {
      command: [exe],
      cwd: folder,
    });
    try {
      expect((await fetch(`${server.url}/metrics`)).status).toBe(403);
      const text = await until("the refusal counted", async () => {
        const t = await (await fetch(`http://${listen}/metrics`)).text();
        return t.includes('route="/metrics",status="403"') ? t : undefined;
      });
      expect(text).toContain("# TYPE corpus_http_request_duration_seconds histogram");
      expect(text).toContain("corpus_embedding_queue_depth ");
    } finally {
      await server.stop();
    }
  });

  test("the console inside it: an operator signs in and starts a backup, which the executable itself writes (D35)", async () => {
    const e = { ...env(), CORPUS_DATA_DIR: join(tempDir("corpus-exe-console-"), "data") };
    const added = Bun.spawnSync([exe, "user", "add", "--user", "root", "--operator"], {
      cwd: folder,
      env: e,
      stdin: Buffer.from("the operator's password\n"),
    });
    expect(added.exitCode).toBe(0);
    const server = await startCorpus(e, [], { command: [exe], cwd: folder });
    try {
      const csrfOf = (html: string) => /name="csrf" value="([^"]+)"/.exec(html)![1]!;
      const first = await fetch(`${server.url}/console`);
      const login = first.headers.getSetCookie()[0]!.split(";")[0]!;
      const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
      const formHeaders = (cookie: string) => ({ "content-type": "application/x-www-form-urlencoded", cookie });
      const signedIn = await fetch(`${server.url}/console/login`, {
        method: "POST",
        redirect: "manual",
        headers: formHeaders(login),
        body: form({ csrf: csrfOf(await first.text()), user: "root", password: "the operator's password" }),
      });
      expect(signedIn.status).toBe(303);
      const session = signedIn.headers.getSetCookie()[0]!.split(";")[0]!;
      const list = await fetch(`${server.url}/console/backups`, { headers: { cookie: session } });
      const started = await fetch(`${server.url}/console/backups/start`, {
        method: "POST",
        redirect: "manual",
        headers: formHeaders(session),
        body: form({ csrf: csrfOf(await list.text()) }),
      });
      expect(started.status).toBe(303);
      const page = await until("the backup written", async () => {
        const html = await (await fetch(`${server.url}/console/backups`, { headers: { cookie: session } })).text();
        return /: <span class="(ok|error)">/.test(html) ? html : undefined;
      });
      expect(page).toContain('<span class="ok">written and verified</span>');
      expect(readdirSync(join(e.CORPUS_DATA_DIR, "backups")).filter((f) => f.endsWith(".backup"))).toHaveLength(1);
    } finally {
      await server.stop();
    }
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
    const server = await startCorpus(e, [], { command: [exe], cwd: folder });
    try {
      const base = server.url;
      const meta = await fetch(`${base}/.well-known/oauth-authorization-server`);
      const doc = (await meta.json()) as Record<string, unknown>;
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
      await server.stop();
    }
  });
});
