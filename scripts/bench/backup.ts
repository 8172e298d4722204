// `corpus backup` and `corpus restore` on the Enron maildir (D30), with real processes: a server
// indexes and embeds the 1,702 messages, 200 questions fill the archive, then `corpus backup`
// runs three times while four clients keep asking; each time is the CLI's wall time (process
// start included). Then `corpus restore` into an empty folder.
//   bun scripts/bench/backup.ts        (CORPUS_BENCH_DIR keeps the indexed folder between runs)
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runTempDir } from "./lib";

const CLI = join(import.meta.dir, "../../src/cli.ts");
const data = join(import.meta.dir, "../../../shared/data");
const work = process.env.CORPUS_BENCH_DIR ?? runTempDir("corpus-bench-backup-");
mkdirSync(work, { recursive: true });
const keyFile = join(work, "master.key");
if (!existsSync(keyFile)) writeFileSync(keyFile, `${randomBytes(32).toString("base64")}\n`, { mode: 0o600 });
const operators = join(work, "connectors.json");
writeFileSync(
  operators,
  JSON.stringify([{ id: "mail", kind: "maildir", label: "Enron mail", config: { path: join(data, "enron", "messages") } }]),
);
const env = (dir: string) => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: process.env.HOME ?? "/tmp",
  CORPUS_DATA_DIR: dir,
  CORPUS_MASTER_KEY_FILE: keyFile,
  CORPUS_CONNECTORS_FILE: operators,
  CORPUS_OAUTH_ISSUER: "http://corpus.bench",
  CORPUS_OAUTH_RESOURCE_URL: "http://corpus.bench",
  CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
  CORPUS_LIMIT_QUERY_PER_DAY: "100000000",
  CORPUS_PORT: "0",
  CORPUS_LOG_LEVEL: "WARNING",
});
const dataDir = join(work, "data");

async function cli(args: string[], dir: string) {
  const started = performance.now();
  const proc = Bun.spawn([process.execPath, CLI, ...args], { env: env(dir), stdout: "pipe", stderr: "pipe" });
  const [code, stdout, stderr] = await Promise.all([proc.exited, new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`corpus ${args.join(" ")}: ${stderr}`);
  return { stdout, seconds: (performance.now() - started) / 1000 };
}

const token = (
  await cli(["token", "create", "--user", "bench", "--scopes", "corpus:search,connectors:read", "--ttl", "86400"], dataDir)
).stdout.trim();
const server = Bun.spawn([process.execPath, CLI, "serve"], {
  env: { ...env(dataDir), CORPUS_LOG_LEVEL: "INFO" },
  stdout: "pipe",
  stderr: "inherit",
});
const reader = server.stdout.getReader();
let url = "";
for (let text = ""; !url; ) {
  const { value, done } = await reader.read();
  if (done) throw new Error("corpus serve exited");
  text += new TextDecoder().decode(value);
  url = /"message":"listening"[^\n]*"url":"([^"]+)"/.exec(text)?.[1] ?? "";
}
void (async () => {
  while (!(await reader.read()).done);
})();
const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };

const t0 = performance.now();
for (;;) {
  const list = (await (await fetch(`${url}/v1/connectors`, { headers })).json()) as {
    connectors: Array<{ id: string; status: string; progress?: { done: number; total: number } }>;
  };
  const mail = list.connectors.find((c) => c.id === "mail")!;
  if (mail.status === "ok") break;
  process.stderr.write(
    `\r${mail.status}: ${mail.progress?.done ?? 0} of ${mail.progress?.total ?? "?"} (${((performance.now() - t0) / 1000).toFixed(0)} s)   `,
  );
  await Bun.sleep(2000);
}
process.stderr.write(`\rindexed and embedded in ${((performance.now() - t0) / 1000).toFixed(0)} s                    \n`);

const topics = [
  "California price caps",
  "gas pipeline capacity",
  "trading desk meeting",
  "power plant outage",
  "contract with PG&E",
  "the Dabhol project",
  "energy online auction",
  "natural gas storage",
];
let asked = 0;
let failed = 0;
const ask = async () => {
  const r = await fetch(`${url}/v1/query`, {
    method: "POST",
    headers,
    body: JSON.stringify({ query: `${topics[asked % topics.length]} (${asked++})` }),
  });
  if (r.status !== 200) failed++;
  await r.arrayBuffer();
};
for (let i = 0; i < 200; i++) await ask();

const dbBytes = () =>
  ["corpus.db", "corpus.db-wal"].reduce((n, f) => n + (existsSync(join(dataDir, f)) ? statSync(join(dataDir, f)).size : 0), 0);
const runs: Array<{ seconds: number; bytes: number; answered_meanwhile: number }> = [];
let running = true;
const clients = Array.from({ length: 4 }, async () => {
  while (running) await ask();
});
const out = join(work, "corpus.backup");
for (let i = 0; i < 3; i++) {
  const before = asked;
  const run = await cli(["backup", "--out", out, "--force"], dataDir);
  runs.push({ seconds: Number(run.seconds.toFixed(2)), bytes: JSON.parse(run.stdout).bytes, answered_meanwhile: asked - before });
}
running = false;
await Promise.all(clients);
const liveBytes = dbBytes();
server.kill("SIGTERM");
await server.exited;

const restored = join(work, "restored");
rmSync(restored, { recursive: true, force: true });
const restore = await cli(["restore", "--from", out], restored);
console.log(
  JSON.stringify(
    {
      messages: 1702,
      live_database_bytes: liveBytes,
      backups: runs,
      failed_answers: failed,
      restore_seconds: Number(restore.seconds.toFixed(2)),
      restore: JSON.parse(restore.stdout),
    },
    null,
    2,
  ),
);
