// What the guard adds to a request, in microseconds, in-process (issue 15: at most 5 µs; the
// earlier 0.85 ratio of requests per second is withdrawn). The real app and guard, one JSON
// route served twice, open and behind authentication, scope and the per-user rate limit, both
// through the listener's own fetch handler (createFetch: request info, timeout), so sockets,
// HTTP parsing and a load generator take no part and cannot hide or add anything.
//   bun scripts/bench/auth.ts
// Rounds alternate the two routes; the figure is the median over rounds of (protected - open)
// time per request, in CPU time of this process (the machine is shared: wall time there counts
// the waits for a core, which doubled every figure at a load of 8 on 2 cores; CPU time moved little). Beside it, the floor: a bare fetch handler writing the
// same body and security headers, once plain and once with the six X-RateLimit-* headers any
// limited response must carry, which no implementation of the guard can avoid.
//
// (The earlier version started two servers and drove them with wrk. When its first check threw
// — the route it guarded had lost its rate limit — it exited without stopping them; the servers,
// holding the terminal's output open, kept whoever ran it waiting forever. Nothing is spawned now.)
import { join } from "node:path";
import type { Server } from "bun";
import { Elysia } from "elysia";
import { createApp } from "../../src/app";
import { guard } from "../../src/auth/guard";
import { loadConfig } from "../../src/config";
import { JSON_CONTENT_TYPE, SECURITY_HEADERS } from "../../src/http/response";
import { createLogger } from "../../src/log";
import { createFetch } from "../../src/server";
import { createServices } from "../../src/services";
import { median, runTempDir } from "./lib";

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 20_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7);

// A folder inside the temporary one: the master key is written beside the data folder.
const dataDir = join(runTempDir("corpus-bench-auth-"), "data");
const config = loadConfig({
  CORPUS_DATA_DIR: dataDir,
  CORPUS_LOG_LEVEL: "WARNING",
  CORPUS_LIMIT_DELETE_PER_MINUTE: "1000000",
  CORPUS_LIMIT_DELETE_PER_DAY: "1000000",
});
const log = createLogger("WARNING");
const services = await createServices(config, log);
const body = () => ({ connectors: [{ id: "mail", kind: "maildir", status: "ok" }] });
const app = createApp(services).use(
  new Elysia()
    .use(guard(services))
    .get("/bench/open", body)
    // A limited route's guard: token, scope, the per-user windows and their six headers.
    .get("/bench/protected", body, { guard: { route: "DELETE /v1/delete_my_data" } }),
);
const handle = createFetch(app.fetch, config, log);
const socket = { requestIP: () => ({ address: "127.0.0.1" }) } as unknown as Server<undefined>;
const { token } = await services.auth.issuer.issue("bench", ["connectors:write"], 3600);
const authorization = { authorization: `Bearer ${token}` };

// The floor: what any handler pays to answer this body with these headers.
const BASE = new Headers({ ...SECURITY_HEADERS, "content-type": JSON_CONTENT_TYPE });
const WINDOWS = new Headers(BASE);
for (const name of ["limit-minute", "reset-minute", "limit-day", "reset-day"]) WINDOWS.set(`x-ratelimit-${name}`, "100000000");
let served = 0;
const bare = (request: Request): Response => {
  if (request.url.endsWith("/open")) return new Response(JSON.stringify(body()), { headers: BASE });
  if (request.headers.get("authorization") === null) return new Response(null, { status: 401 });
  const response = new Response(JSON.stringify(body()), { headers: WINDOWS });
  served++;
  response.headers.set("x-ratelimit-remaining-minute", String(100_000_000 - served));
  response.headers.set("x-ratelimit-remaining-day", String(100_000_000 - served));
  return response;
};

type Handler = (request: Request, server: Server<undefined>) => Response | Promise<Response>;

/** CPU microseconds per request, `n` requests one after another (as a client waiting for each). */
async function perRequest(fetch: Handler, path: string, headers: Record<string, string>, n: number): Promise<number> {
  const url = `http://127.0.0.1:8080${path}`;
  const started = process.cpuUsage();
  for (let i = 0; i < n; i++) {
    const answer = fetch(new Request(url, { headers }), socket);
    const response = answer instanceof Promise ? await answer : answer;
    if (response.status !== 200) throw new Error(`${path} answered ${response.status}: ${await response.text()}`);
  }
  const used = process.cpuUsage(started);
  return (used.user + used.system) / n;
}

try {
  // The guard's work is checked once, not assumed: a token is needed, the six headers are there.
  const refused = await handle(new Request("http://127.0.0.1:8080/bench/protected"), socket);
  if (refused.status !== 401) throw new Error(`the protected route answered ${refused.status} without a token`);
  const admitted = await handle(new Request("http://127.0.0.1:8080/bench/protected", { headers: authorization }), socket);
  if (admitted.status !== 200 || admitted.headers.get("x-ratelimit-remaining-minute") === null)
    throw new Error(`the protected route answered ${admitted.status} without its rate-limit headers`);

  const runs = {
    open: () => perRequest(handle, "/bench/open", {}, REQUESTS),
    protected: () => perRequest(handle, "/bench/protected", authorization, REQUESTS),
    floorOpen: () => perRequest(bare, "/bench/open", {}, REQUESTS),
    floor: () => perRequest(bare, "/bench/floor", authorization, REQUESTS),
  };
  const names = Object.keys(runs) as (keyof typeof runs)[];
  for (const name of names) await runs[name](); // warm-up: compiled routes, JIT
  const times: Record<keyof typeof runs, number[]> = { open: [], protected: [], floorOpen: [], floor: [] };
  for (let round = 0; round < ROUNDS; round++) for (const name of names) times[name].push(await runs[name]());

  const added = (a: number[], b: number[]) => median(a.map((x, i) => x - b[i]!));
  const fmt = (us: number) => `${us.toFixed(2).padStart(6)} µs`;
  console.log(`in-process, CPU time, ${ROUNDS} rounds of ${REQUESTS} requests each, median per round`);
  console.log(`GET open route (no auth)                      ${fmt(median(times.open))} per request`);
  console.log(`GET protected (JWT + scope + rate limit)      ${fmt(median(times.protected))} per request`);
  console.log(`guard's added time per request                ${fmt(added(times.protected, times.open))}  target <= 5`);
  console.log(`floor: bare handler, same body and headers    ${fmt(median(times.floorOpen))} per request`);
  console.log(`floor: + Authorization read, six limit headers ${fmt(added(times.floor, times.floorOpen)).trimStart()} added`);
} finally {
  await services.close();
}
