// The first question a started server answers (issue 14: what a person feels after a restart):
// dist/corpus on a fresh data folder, the model warmed (its start-up load), then the first
// question of a user, the first of a second user, and warm questions as the baseline of the same
// run. Five servers; medians.
//   bun scripts/bench/first-question.ts [--rebuild]
// The first of a user includes making their keys and rotation; the first of the process also the
// worker's first model run and the code paths run once.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { buildExecutable } from "../build";
import { freePort, kill, median, runTempDir, waitFor200, waitIdle } from "./lib";

const root = join(import.meta.dir, "../..");
const exe = join(root, "dist", "corpus");
if (!existsSync(exe) || process.argv.includes("--rebuild")) await buildExecutable(exe);

async function oneServer(): Promise<{ first: number; otherUser: number; warm: number }> {
  const dir = runTempDir("corpus-bench-first-");
  const port = freePort();
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: dir,
    CORPUS_DATA_DIR: join(dir, "data"),
    CORPUS_PORT: String(port),
    CORPUS_LOG_LEVEL: "WARNING",
  };
  const token = (user: string) =>
    Bun.spawnSync([exe, "token", "create", "--user", user, "--scopes", "corpus:search"], { env })
      .stdout.toString()
      .trim()
      .split("\n")
      .pop()!;
  const [alice, bob] = [token("alice"), token("bob")];
  const server = Bun.spawn([exe, "serve"], { env, stdout: "ignore", stderr: "inherit" });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor200(`${url}/`);
    // The model is warmed shortly after the listener is up: asked once the process is quiet.
    await waitIdle(server.pid);
    const ask = async (tok: string, query: string) => {
      const t = performance.now();
      const res = await fetch(`${url}/v1/query`, {
        method: "POST",
        headers: { authorization: `Bearer ${tok}`, "content-type": "application/json" },
        body: JSON.stringify({ query }),
      });
      await res.text();
      if (res.status !== 200) throw new Error(`/v1/query answered ${res.status}`);
      return performance.now() - t;
    };
    const first = await ask(alice, "gas prices in California");
    const otherUser = await ask(bob, "pipeline capacity next winter");
    const warm = median([
      await ask(alice, "the invoice from May"),
      await ask(bob, "the meeting on Friday"),
      await ask(alice, "trading risk"),
    ]);
    return { first, otherUser, warm };
  } finally {
    await kill(server);
  }
}

const runs: Array<{ first: number; otherUser: number; warm: number }> = [];
for (let i = 0; i < 5; i++) runs.push(await oneServer());
const m = (k: "first" | "otherUser" | "warm") => median(runs.map((r) => r[k]));
console.log(`first question of the process: ${m("first").toFixed(1)} ms`);
console.log(`first question of a second user: ${m("otherUser").toFixed(1)} ms`);
console.log(`warm questions (same run): ${m("warm").toFixed(1)} ms; first / warm ${(m("first") / m("warm")).toFixed(1)}x`);
