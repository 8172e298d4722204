// Issue 35 (D31): GET / and /v1/query p99 while a real server indexes hostile sources (the
// outside review's PDF, DOCX and ZIP bombs, a 1 MB CSV line and one of 3,000,000 columns, 8 MB
// of nested HTML, a 24 MB mail: test/support/hostile-sources.ts), beside a quiet baseline taken
// first in the same run (the same loops of GET / and questions, nothing indexing). Questions go
// to a plain folder and to a SQLite table of 20 rows of 1 MB. BENCH_PROFILE=<folder> also says
// what held the serving thread while the folders were indexed (scripts/bench/stalls.ts). BENCH_MBOX=<n> adds an mbox of n tiny
// mails to the mail folder: one source of n records, stored a bounded transaction at a time.
// BENCH_ASKERS (default 2) loops ask questions side by side, in the baseline as while indexing:
// one loop gave ~45 questions in the ~8-12 s of indexing, too few for a p99 to mean anything.
//   bun scripts/bench/hostile-sources.ts
import { join } from "node:path";
import { CLI, callerWith, cli, startCorpus, userFoldersEnv } from "../../test/backup/support";
import { HOSTILE_TABLE, writeHostileSources } from "../../test/support/hostile-sources";
import { runTempDir, sleep } from "./lib";
import { profiledServer, stallReport, type Window, windowOf } from "./stalls";

/** Questions of the quiet baseline, all loops together. */
const QUIET_QUESTIONS = Number(process.env.BENCH_QUESTIONS ?? 100);
/** Question loops running side by side. */
const ASKERS = Number(process.env.BENCH_ASKERS ?? 2);
/** The connectors asked (BENCH_ASK=plain leaves the 1 MB rows out of the questions). */
const ASKED = (process.env.BENCH_ASK ?? "plain,shop").split(",");

const root = runTempDir("corpus-bench-hostile-");
const alice = join(root, "alice");
const sources = writeHostileSources(alice);
const plain = join(alice, "plain");
Bun.spawnSync(["mkdir", "-p", plain]);
await Bun.write(join(plain, "notes.txt"), "The offsite is in Lisbon; the team dinner is in Porto.");
const mboxMails = Number(process.env.BENCH_MBOX ?? 0);
if (mboxMails)
  await Bun.write(
    join(sources.mail, "big.mbox"),
    Array.from(
      { length: mboxMails },
      (_, i) => `From a@example.com Mon Jan  1 00:00:00 2001\nFrom: a@example.com\nSubject: note ${i}\n\nbody ${i}\n\n`,
    ).join(""),
  );
const env = {
  ...userFoldersEnv(root),
  CORPUS_LOG_LEVEL: "INFO",
  CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
  CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000000",
};
const scopes = "connectors:read,connectors:write,corpus:search";
const token = (await cli(["token", "create", "--user", "alice", "--scopes", scopes], env)).stdout.trim();
const profile = process.env.BENCH_PROFILE ? profiledServer(process.env.BENCH_PROFILE) : undefined;
const server = await startCorpus({ ...env, ...profile?.env }, [], { command: [process.execPath, ...(profile?.flags ?? []), CLI] });
const call = callerWith(server.url, token);
/** While the hostile folders were indexed: the turns the profile's report ranks (not the server's start or the first questions). */
let indexing: Window | undefined;

/** Times `request` until `stop()` (or `n` times): latencies in ms, sorted, and requests not answered 200. */
async function timeLoop(request: () => Promise<Response>, until: { n?: number; stop?: () => boolean }, gapMs: number) {
  const out: number[] = [];
  let failed = 0;
  while (until.n ? out.length < until.n : !until.stop!()) {
    const started = performance.now();
    const ok = await request().then(
      async (r) => {
        await r.arrayBuffer();
        return r.status === 200;
      },
      () => false,
    );
    out.push(performance.now() - started);
    if (!ok) failed++;
    await sleep(gapMs);
  }
  return { sorted: out.sort((a, b) => a - b), failed };
}

/** `loops` of timeLoop side by side, their latencies merged (sorted) and failures added. */
async function timeLoops(loops: number, request: () => Promise<Response>, until: { n?: number; stop?: () => boolean }, gapMs: number) {
  const each = until.n === undefined ? until : { n: Math.ceil(until.n / loops) };
  const all = await Promise.all(Array.from({ length: loops }, () => timeLoop(request, each, gapMs)));
  return { sorted: all.flatMap((l) => l.sorted).sort((a, b) => a - b), failed: all.reduce((n, l) => n + l.failed, 0) };
}

const pct = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? Number.NaN;
const getRoot = () => fetch(`${server.url}/`, { signal: AbortSignal.timeout(60_000) });
const ask = () => call("POST", "/v1/query", { query: "where is the team dinner in porto", connectors: ASKED, max_results: 5 });

try {
  for (const [id, kind, config] of [
    ["plain", "files", { path: plain }],
    ["shop", "sql", { url: sources.database, tables: [HOSTILE_TABLE] }],
  ] as const) {
    const r = await call("POST", "/v1/connectors", { id, kind, config });
    if (r.status !== 200) throw new Error(`adding ${id}: ${r.status} ${await r.text()}`);
  }
  // The model loads with the first question; the rows are cut into chunks on the first ones.
  for (let i = 0; i < 3; i++) await ask();
  // The same two loops as while indexing, so that the baseline has the questions' own load.
  let quietDone = false;
  const [quietAsk, quietRoot] = await Promise.all([
    timeLoops(ASKERS, ask, { n: QUIET_QUESTIONS }, 50).finally(() => (quietDone = true)),
    timeLoop(getRoot, { stop: () => quietDone }, 20),
  ]);

  const started = performance.now();
  const indexed = () => server.lines.filter((l) => l.message === "connector indexed").length >= 3;
  for (const [id, kind, path] of [
    ["docs", "files", sources.docs],
    ["mail", "maildir", sources.mail],
  ] as const) {
    const r = await call("POST", "/v1/connectors", { id, kind, config: { path } });
    if (r.status !== 200) throw new Error(`adding ${id}: ${r.status} ${await r.text()}`);
  }
  const deadline = started + 600_000;
  const stop = () => indexed() || performance.now() > deadline;
  const [busyRoot, busyAsk] = await Promise.all([timeLoop(getRoot, { stop }, 20), timeLoops(ASKERS, ask, { stop }, 50)]);
  indexing = windowOf(started, performance.now());
  // The server's peak resident memory (VmHWM: the kernel's high-water mark), read before it stops.
  const peakRssMb = Number(/^VmHWM:\s+(\d+)/m.exec(await Bun.file(`/proc/${server.proc.pid}/status`).text())?.[1] ?? Number.NaN) / 1024;
  const seconds = (performance.now() - started) / 1000;
  const skipped = server.lines.filter((l) => l.message === "connector file skipped").map((l) => l.reason);
  const wordsCut = server.lines.filter((l) => l.message === "connector record words cut").reduce((n, l) => n + Number(l.records), 0);

  const row = (name: string, quiet: { sorted: number[] }, busy: { sorted: number[]; failed: number }) =>
    console.log(
      `${name.padEnd(12)} p50 ${pct(quiet.sorted, 0.5).toFixed(1).padStart(7)} -> ${pct(busy.sorted, 0.5).toFixed(1).padStart(7)} ms   ` +
        `p99 ${pct(quiet.sorted, 0.99).toFixed(1).padStart(7)} -> ${pct(busy.sorted, 0.99).toFixed(1).padStart(7)} ms ` +
        `(x${(pct(busy.sorted, 0.99) / pct(quiet.sorted, 0.99)).toFixed(2)})   slowest ${busy.sorted.at(-1)?.toFixed(0)} ms, ` +
        `${busy.sorted.length} while indexing, ${busy.failed} failed`,
    );
  console.log(
    `indexing the hostile sources: ${seconds.toFixed(1)} s; questions to ${ASKED.join(", ")}, ${ASKERS} at a time; quiet baseline first, same server, same run`,
  );
  row("GET /", quietRoot, busyRoot);
  row("/v1/query", quietAsk, busyAsk);
  console.log(`skipped: ${skipped.join("; ")}; records found by their words in part: ${wordsCut}`);
  console.log(
    `server peak RSS ${peakRssMb.toFixed(0)} MB; load average ${(await Bun.file("/proc/loadavg").text()).split(" ", 3).join(" ")}`,
  );
} finally {
  await server.stop();
}
if (process.env.BENCH_PROFILE) console.log(stallReport(process.env.BENCH_PROFILE, 20, 15, indexing));
