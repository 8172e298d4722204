// Requests per second of MCP tools/list and of a corpus_search call, beside GET / of the same
// server in the same run (issue: the MCP server). Needs wrk (apt-get install wrk).
//   bun scripts/bench/mcp.ts
import { join } from "node:path";
import { kill, median, requireTool, wrk } from "./lib";

requireTool("wrk", "wrk");
const proc = Bun.spawn([process.execPath, join(import.meta.dir, "mcp-server.ts")], { stdout: "pipe", stderr: "inherit" });
const first = new TextDecoder().decode((await proc.stdout.getReader().read()).value);
const { url, token } = JSON.parse(first.split("\n")[0]!) as { url: string; token: string };

const luaFor = async (name: string, body: unknown) => {
  const path = join(import.meta.dir, `.mcp-${name}.lua`);
  await Bun.write(
    path,
    [
      'wrk.method = "POST"',
      `wrk.body = ${JSON.stringify(JSON.stringify(body))}`,
      'wrk.headers["Content-Type"] = "application/json"',
      'wrk.headers["Accept"] = "application/json, text/event-stream"',
      `wrk.headers["Authorization"] = "Bearer ${token}"`,
      'wrk.headers["MCP-Protocol-Version"] = "2025-06-18"',
      "",
    ].join("\n"),
  );
  return path;
};
const list = await luaFor("list", { jsonrpc: "2.0", id: 1, method: "tools/list" });
const search = await luaFor("search", { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "corpus_search", arguments: { query: "Amazon Web Services invoice total", maxResults: 5 } } });
const check = await fetch(`${url}/mcp`, { method: "POST", headers: { "content-type": "application/json", accept: "application/json", authorization: `Bearer ${token}` }, body: await Bun.file(search).text().then(() => JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "corpus_search", arguments: { query: "Amazon" } } })) });
if (check.status !== 200) throw new Error(`corpus_search answered ${check.status}`);

const rates = { root: [] as number[], list: [] as number[], search: [] as number[] };
for (let round = 0; round < 3; round++) {
  rates.root.push(await wrk(`${url}/`, { seconds: 3 }));
  rates.list.push(await wrk(`${url}/mcp`, { seconds: 3, script: list }));
  rates.search.push(await wrk(`${url}/mcp`, { seconds: 3, script: search, connections: 8 }));
}
await kill(proc);
for (const f of [list, search]) await Bun.file(f).delete();
const root = median(rates.root);
console.log(`GET / (baseline, 64 connections)           ${root.toFixed(0)} req/s`);
console.log(`tools/list (64 connections)                 ${median(rates.list).toFixed(0)} req/s   ${(median(rates.list) / root).toFixed(2)} of GET /`);
console.log(`tools/call corpus_search (8 connections)    ${median(rates.search).toFixed(0)} req/s   ${(median(rates.search) / root).toFixed(3)} of GET /`);
