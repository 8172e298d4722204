// The second process of scripts/bench/indexing.ts: asks a running corpus GET / every 50 ms and
// POST /v1/query every 500 ms, each waiting for its answer, until its stdin closes; then prints
// every sample (wall-clock start, milliseconds, status) as one JSON line.
//   bun scripts/bench/indexing-probe.ts <url> <token>
const [url, token] = process.argv.slice(2);
if (!url || !token) {
  console.error("usage: bun scripts/bench/indexing-probe.ts <url> <token>");
  process.exit(2);
}

export type Sample = [at: number, ms: number, status: number];
const samples = { get: [] as Sample[], query: [] as Sample[] };
const QUESTIONS = [
  "California gas price caps",
  "pipeline capacity auction",
  "who approved the trading limits?",
  "meeting about the Dabhol power plant",
  "natural gas storage contracts",
];
let stopped = false;

async function timed(into: Sample[], request: () => Promise<Response>): Promise<void> {
  const at = Date.now();
  const t0 = performance.now();
  const status = await request().then(
    async (r) => {
      await r.arrayBuffer();
      return r.status;
    },
    () => 0,
  );
  into.push([at, performance.now() - t0, status]);
}

async function loop(every: number, step: (i: number) => Promise<void>): Promise<void> {
  for (let i = 0; !stopped; i++) {
    const t0 = performance.now();
    await step(i);
    await Bun.sleep(Math.max(0, every - (performance.now() - t0)));
  }
}

const loops = Promise.all([
  loop(50, () => timed(samples.get, () => fetch(`${url}/`))),
  loop(500, (i) =>
    timed(samples.query, () =>
      fetch(`${url}/v1/query`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ query: `${QUESTIONS[i % QUESTIONS.length]} ${i}`, max_results: 5 }),
      }),
    ),
  ),
]);
// The bench closes stdin to stop the probe.
await Bun.stdin.text();
stopped = true;
await loops;
console.log(JSON.stringify(samples));
