// What /mcp costs inside the single executable (issue 20): file size, start time (to the first
// 200, and to the first /mcp answer, which loads the MCP SDK), and the latency of corpus_search
// on both MCP wires against POST /v1/query of the same server, the same questions, one request
// at a time (target: MCP at most 1.2x REST). The questions repeat, so their embeddings are
// cached after the warm-up: what is compared is everything but the model.
//   bun scripts/bench/mcp-exe.ts [path/to/corpus] [--rounds N]     (default dist/corpus, built if missing)
// Run it with an older executable's path to compare; a server without 2026-07-28 is measured on
// the 2025 wire only.
import { existsSync, mkdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../build";
import { coldStarts, cpuSeconds, freePort, kill, median, runTempDir, waitFor200 } from "./lib";

const root = join(import.meta.dir, "../..");
const exe = process.argv.slice(2).find((a) => !a.startsWith("--") && !/^\d+$/.test(a)) ?? join(root, "dist", "corpus");
const roundsAt = process.argv.indexOf("--rounds");
const ROUNDS = roundsAt > 0 ? Number(process.argv[roundsAt + 1]) : 60;
const WARMUP = 5;
const QUESTIONS = [
  "Amazon Web Services invoice total",
  "Flipkart order delivery address",
  "Azure interior design invoice",
  "invoice due date and amount",
  "tax on the invoice",
];
const MODERN_META = { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} };

if (!existsSync(exe)) await buildExecutable(exe);

const home = runTempDir("corpus-bench-exe-");
const docs = join(home, "docs");
mkdirSync(docs);
for (const f of ["AmazonWebServices.pdf", "FlipkartInvoice.pdf", "AzureInterior.pdf"])
  await Bun.write(join(docs, f), Bun.file(join(root, "../shared/data/invoices", f)));
const env = (port: number) => ({
  PATH: process.env.PATH ?? "",
  HOME: home,
  CORPUS_DATA_DIR: join(home, "data"),
  CORPUS_MASTER_KEY_FILE: join(home, "master.key"),
  CORPUS_PORT: String(port),
  CORPUS_LOG_LEVEL: "WARNING",
  // Tokens name the server; one name for every port of the runs below.
  CORPUS_OAUTH_ISSUER: "http://corpus.bench",
  CORPUS_OAUTH_RESOURCE_URL: "http://corpus.bench",
  CORPUS_CONNECTOR_ROOTS: docs,
  CORPUS_RATE_LIMIT_REQUESTS_PER_MINUTE: "1000000",
  CORPUS_LIMIT_QUERY_PER_MINUTE: "1000000",
  CORPUS_LIMIT_QUERY_PER_DAY: "1000000",
});
const spawn = (port: number) => Bun.spawn([exe, "serve"], { env: env(port), stdout: "ignore", stderr: "inherit" });

const token = Bun.spawnSync([exe, "token", "create", "--user", "bench", "--scopes", "corpus:search,connectors:read,connectors:write"], {
  env: env(freePort()),
})
  .stdout.toString()
  .trim();
const discover = (url: string) =>
  fetch(`${url}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2026-07-28",
      "mcp-method": "server/discover",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: MODERN_META } }),
  });

// 1. Start: spawn to the first 200 on GET /, then the first answer of /mcp; five times.
const firstMcp: number[] = [];
const starts = await coldStarts(5, spawn, async (_proc, url) => {
  const t1 = performance.now();
  // An executable without 2026-07-28 answers 400: still its first /mcp answer.
  await (await discover(url)).text();
  firstMcp.push(performance.now() - t1);
});

// 2. One server with the invoices indexed and embedded.
const port = freePort();
const base = `http://127.0.0.1:${port}`;
const proc = spawn(port);
await waitFor200(`${base}/`);
const auth = { authorization: `Bearer ${token}`, "content-type": "application/json" };
const added = await fetch(`${base}/v1/connectors`, {
  method: "POST",
  headers: auth,
  body: JSON.stringify({ id: "invoices", kind: "files", config: { path: docs } }),
});
if (!added.ok) throw new Error(`adding the connector: ${added.status} ${await added.text()}`);
for (let i = 0; ; i++) {
  const list = (await (await fetch(`${base}/v1/connectors`, { headers: auth })).json()) as { connectors: Array<{ status: string }> };
  if (list.connectors[0]?.status === "ok") break;
  if (i > 1200) throw new Error("the connector did not finish indexing within 2 minutes");
  await Bun.sleep(100);
}

let id = 0;
const post = async (body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(`${base}${headers["x-path"] ?? "/mcp"}`, {
    method: "POST",
    headers: { ...auth, accept: "application/json, text/event-stream", ...headers },
    body: JSON.stringify(body),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${r.status} ${text.slice(0, 200)}`);
  return text;
};
const kinds = {
  "POST /v1/query": (q: string) => post({ query: q, max_results: 5 }, { "x-path": "/v1/query" }),
  "corpus_search 2025-11-25": (q: string) =>
    post(
      { jsonrpc: "2.0", id: ++id, method: "tools/call", params: { name: "corpus_search", arguments: { query: q, maxResults: 5 } } },
      { "mcp-protocol-version": "2025-11-25" },
    ),
  "corpus_search 2026-07-28": (q: string) =>
    post(
      {
        jsonrpc: "2.0",
        id: ++id,
        method: "tools/call",
        params: { name: "corpus_search", arguments: { query: q, maxResults: 5 }, _meta: MODERN_META },
      },
      { "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/call", "mcp-name": "corpus_search" },
    ),
} as const;
type Kind = keyof typeof kinds;
// An older executable may not speak 2026-07-28: what answers is measured.
const usable: Kind[] = [];
for (const k of Object.keys(kinds) as Kind[])
  if (
    await kinds[k](QUESTIONS[0]!).then(
      () => true,
      () => false,
    )
  )
    usable.push(k);

// 3. Latency, one request at a time, in blocks of BLOCK per kind whose order turns every round;
// and the server's CPU per request (all its threads), which a busy shared machine disturbs less.
const BLOCK = 5;
const times = Object.fromEntries(usable.map((k) => [k, [] as number[]])) as Record<Kind, number[]>;
const cpu = Object.fromEntries(usable.map((k) => [k, 0])) as Record<Kind, number>;
for (let round = 0; round < WARMUP + Math.ceil(ROUNDS / BLOCK); round++) {
  for (let j = 0; j < usable.length; j++) {
    const kind = usable[(round + j) % usable.length]!;
    const c0 = cpuSeconds(proc.pid);
    for (let b = 0; b < BLOCK; b++) {
      const q = QUESTIONS[(round * BLOCK + b) % QUESTIONS.length]!;
      const t0 = performance.now();
      await kinds[kind](q);
      if (round >= WARMUP) times[kind].push(performance.now() - t0);
    }
    if (round >= WARMUP) cpu[kind] += cpuSeconds(proc.pid) - c0;
  }
}
await kill(proc);

const p90 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)]!;
const rest = median(times["POST /v1/query"]);
const cpuOf = (k: Kind) => (cpu[k] * 1000) / times[k].length;
console.log(`executable        ${exe}`);
console.log(`size              ${(statSync(exe).size / 1e6).toFixed(1)} MB (${statSync(exe).size} bytes)`);
console.log(`start             ${median(starts).toFixed(0)} ms to the first 200 (median of 5)`);
console.log(`first /mcp       ${median(firstMcp).toFixed(0)} ms for the first answer after that (median of 5)`);
for (const k of usable) {
  const m = median(times[k]);
  console.log(
    `${k.padEnd(26)} p50 ${m.toFixed(1)} ms  p90 ${p90(times[k]).toFixed(1)} ms  ${(m / rest).toFixed(2)}x REST;  CPU ${cpuOf(k).toFixed(2)} ms/request  ${(cpuOf(k) / cpuOf("POST /v1/query")).toFixed(2)}x REST  (${times[k].length} sequential)`,
  );
}
