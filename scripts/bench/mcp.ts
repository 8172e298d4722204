// Requests per second of MCP tools/list (on the 2025 and the 2026-07-28 wire) and of a
// corpus_search call, beside GET / of the same server in the same run (issue: the MCP server;
// issue 20). Needs wrk (apt-get install wrk).
//   bun scripts/bench/mcp.ts            the app run by Bun
//   bun scripts/bench/mcp.ts --exe      inside the compiled executable: size, start, latency
//                                       against REST (scripts/bench/mcp-exe.ts)
import { join } from "node:path";
import { kill, median, requireTool, wrk } from "./lib";

if (process.argv.includes("--exe")) {
  await import("./mcp-exe");
  process.exit(0);
}

requireTool("wrk", "wrk");
const proc = Bun.spawn([process.execPath, join(import.meta.dir, "mcp-server.ts")], { stdout: "pipe", stderr: "inherit" });
// The server's log lines come first on the same stdout: the line with the URL is the one.
const reader = proc.stdout.getReader();
let out = "";
let ready: { url: string; token: string } | undefined;
while (!ready) {
  const chunk = await reader.read();
  if (chunk.done) throw new Error(`the bench server stopped:\n${out}`);
  out += new TextDecoder().decode(chunk.value);
  ready = out
    .split("\n")
    .map((l) => (l.startsWith('{"url"') ? (JSON.parse(l) as { url: string; token: string }) : undefined))
    .find(Boolean);
}
const { url, token } = ready;

const luaFor = async (name: string, body: unknown, headers: Record<string, string> = { "MCP-Protocol-Version": "2025-06-18" }) => {
  const path = join(import.meta.dir, `.mcp-${name}.lua`);
  await Bun.write(
    path,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(JSON.stringify(body))}`,
      'wrk.headers["Content-Type"] = "application/json"',
      'wrk.headers["Accept"] = "application/json, text/event-stream"',
      `wrk.headers["Authorization"] = "Bearer ${token}"`,
      ...Object.entries(headers).map(([k, v]) => `wrk.headers["${k}"] = "${v}"`),
      "",
    ].join("\n"),
  );
  return path;
};
const list = await luaFor("list", { jsonrpc: "2.0", id: 1, method: "tools/list" });
const modernList = await luaFor(
  "modern-list",
  {
    jsonrpc: "2.0",
    id: 1,
    method: "tools/list",
    params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} } },
  },
  { "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list" },
);
const search = await luaFor("search", {
  jsonrpc: "2.0",
  id: 2,
  method: "tools/call",
  params: { name: "corpus_search", arguments: { query: "Amazon Web Services invoice total", maxResults: 5 } },
});
const check = await fetch(`${url}/mcp`, {
  method: "POST",
  headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${token}` },
  body: await Bun.file(search)
    .text()
    .then(() =>
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "corpus_search", arguments: { query: "Amazon" } } }),
    ),
});
if (check.status !== 200) throw new Error(`corpus_search answered ${check.status}`);

const rates = { root: [] as number[], list: [] as number[], modernList: [] as number[], search: [] as number[] };
for (let round = 0; round < 3; round++) {
  rates.root.push(await wrk(`${url}/`, { seconds: 3 }));
  rates.list.push(await wrk(`${url}/mcp`, { seconds: 3, script: list }));
  rates.modernList.push(await wrk(`${url}/mcp`, { seconds: 3, script: modernList }));
  rates.search.push(await wrk(`${url}/mcp`, { seconds: 3, script: search, connections: 8 }));
}
await kill(proc);
for (const f of [list, modernList, search]) await Bun.file(f).delete();
const root = median(rates.root);
console.log(`GET / (baseline, 64 connections)           ${root.toFixed(0)} req/s`);
console.log(
  `tools/list 2025-06-18 (64 connections)      ${median(rates.list).toFixed(0)} req/s   ${(median(rates.list) / root).toFixed(2)} of GET /`,
);
console.log(
  `tools/list 2026-07-28 (64 connections)      ${median(rates.modernList).toFixed(0)} req/s   ${(median(rates.modernList) / root).toFixed(2)} of GET /`,
);
console.log(
  `tools/call corpus_search (8 connections)    ${median(rates.search).toFixed(0)} req/s   ${(median(rates.search) / root).toFixed(3)} of GET /`,
);
