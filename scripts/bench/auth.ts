// Requests per second of an authenticated, rate-limited route against the same route
// unauthenticated, in one run (issue: auth and limits). Target: at least 0.85.
//   bun scripts/bench/auth.ts          (needs wrk: apt-get install wrk)
import { join } from "node:path";
import { kill, median, requireTool, wrk } from "./lib";

requireTool("wrk", "wrk");
const proc = Bun.spawn([process.execPath, join(import.meta.dir, "auth-server.ts")], { stdout: "pipe", stderr: "inherit" });
const reader = proc.stdout.getReader();
const first = new TextDecoder().decode((await reader.read()).value);
const { url, token } = JSON.parse(first.split("\n")[0]!) as { url: string; token: string };

const check = await fetch(`${url}/bench/protected`, { headers: { authorization: `Bearer ${token}` } });
if (check.status !== 200 || check.headers.get("x-ratelimit-limit-minute") === null) throw new Error(`protected route answered ${check.status}`);

const headerScript = join(import.meta.dir, ".auth-header.lua");
await Bun.write(headerScript, `wrk.headers["Authorization"] = "Bearer ${token}"\n`);
const rates = { open: [] as number[], protected: [] as number[] };
await wrk(`${url}/bench/open`, { seconds: 1 });
await wrk(`${url}/bench/protected`, { seconds: 1, script: headerScript });
for (let round = 0; round < 3; round++) {
  rates.open.push(await wrk(`${url}/bench/open`, { seconds: 4 }));
  rates.protected.push(await wrk(`${url}/bench/protected`, { seconds: 4, script: headerScript }));
}
await kill(proc);
await Bun.file(headerScript).delete();

const ratio = median(rates.protected.map((p, i) => p / rates.open[i]!));
console.log(`GET open (no auth)                    ${median(rates.open).toFixed(0)} req/s  baseline`);
console.log(`GET protected (JWT + scope + limits)  ${median(rates.protected).toFixed(0)} req/s`);
console.log(`protected / open (median of rounds)   ${ratio.toFixed(2)}  target >= 0.85`);
