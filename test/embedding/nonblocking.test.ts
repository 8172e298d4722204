// Issue 14: indexing happens beside serving, never instead of it. While a large background job
// embeds (500 long texts), a real server on a real socket answers GET / within 100 ms, request
// after request: the model runs in the worker, never on the thread that answers. (Inference on the
// request thread held each answer for a whole batch, 0.6-1.7 s in the issue.) Expected here:
// ~1-5 ms; the bound is generous for a busy two-core machine.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { createLogger, memorySink } from "../../src/log";
import { type Running, startServer } from "../../src/server";
import { testConfig } from "../helpers";

setDefaultTimeout(120_000);

const BOUND_MS = 100;
let running: Running | undefined;
afterAll(async () => {
  await running?.stop();
});

const longText = (i: number) =>
  `Message ${i} about the California gas price caps, the pipeline capacity auction and the trading desk's positions for the quarter. `.repeat(
    8,
  );

test("GET / answers within 100 ms while 500 long texts embed in the background", async () => {
  running = await startServer(testConfig({ CORPUS_PORT: "0" }), createLogger("WARNING", memorySink().sink));
  const { embeddings } = running.services;
  await embeddings.warm();
  const indexing = embeddings.embed(
    "nobody",
    Array.from({ length: 500 }, (_, i) => longText(i)),
    "background",
  );
  indexing.catch(() => {});
  // Sampled from the first model run on, a request every 20 ms or so, in rounds that each last
  // until several more runs have finished: every round is one of inference. Inference on this
  // thread would hold a request in every round; a noisy neighbour (this machine is shared, and a
  // 100-200 ms stall shows up now and then even with nothing embedding) spoils one round, not three.
  const start = embeddings.stats.batches;
  while (embeddings.stats.batches === start) await Bun.sleep(5);
  const rounds: number[][] = [];
  for (let round = 0; round < 3; round++) {
    const first = embeddings.stats.batches;
    const times: number[] = [];
    while (embeddings.stats.batches < first + 3 || times.length < 20) {
      const t0 = performance.now();
      const r = await fetch(`${running.url}/`);
      await r.arrayBuffer();
      times.push(performance.now() - t0);
      expect(r.status).toBe(200);
      await Bun.sleep(20);
    }
    rounds.push(times);
    if (Math.max(...times) < BOUND_MS) break;
  }
  expect(embeddings.pending).toBe(1);
  const worst = rounds.map((times) => Math.max(...times));
  console.log(
    `GET / while embedding, worst of each round of ${rounds.map((t) => t.length).join(", ")} requests: ${worst.map((w) => w.toFixed(1)).join(", ")} ms`,
  );
  expect(Math.min(...worst)).toBeLessThan(BOUND_MS);
});
