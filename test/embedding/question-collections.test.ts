// The memory budget (limits/memory.ts) is the whole process's: a server's other threads (the search
// worker's, the serving thread's heaps) keep it over, under load always. The embedding worker
// collected its heap and gave the C heap's free pages back (malloc_trim) after each question's run
// then, every 100 ms at most: the next run faulted those pages in again, and every madvise flushed
// the other threads' TLBs (answers-load.ts: ~540 madvise calls a second). A question's run is not
// the long work the budget is for; a background job's runs still collect. Counted, not timed.
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EmbeddingWorker, EmbedJob } from "../../src/embedding/worker-client";
import { MEMORY_BUDGET_BYTES, ownMemoryBytes } from "../../src/limits/memory";
import { tempDir } from "../helpers";

// The model loads in its worker: longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const dir = tempDir();
const counted = join(dir, "collections");
writeFileSync(counted, "");
process.env.CORPUS_TEST_COLLECTIONS = counted;
const collections = () => readFileSync(counted, "utf8").split("\n").filter(Boolean).length;

let worker: EmbeddingWorker | undefined;
afterAll(async () => {
  await worker?.terminate();
});

test("attack: questions embedded one after another in a process over its memory budget: no collection after their runs; a background job's still collect", async () => {
  // What the server's other threads hold, written so that it is resident: the process is over budget.
  const held = Buffer.alloc(MEMORY_BUDGET_BYTES + 32 * 1024 * 1024, 1);
  expect(ownMemoryBytes()).toBeGreaterThan(MEMORY_BUDGET_BYTES);
  worker = new EmbeddingWorker({ dataDir: dir, threads: 1, entry: join(import.meta.dir, "workers/collections-counted.ts") });
  await worker.ready;
  const afterStart = collections();
  for (let i = 0; i < 12; i++) {
    const [vector] = await worker.embed([`where is the team dinner number ${i}`]);
    expect(vector).toHaveLength(384);
  }
  expect(collections() - afterStart).toBe(0);
  // A background job's runs (one text a run here: each longer than half a run's tokens) still collect as they go.
  const job = new EmbedJob(Array.from({ length: 4 }, (_, i) => `pipeline capacity auction ${i} `.repeat(30)));
  await worker.run(job, false);
  expect(job.left).toBe(0);
  expect(collections() - afterStart).toBeGreaterThan(0);
  expect(held[held.length - 1]).toBe(1);
});
