// The embedding service and its worker thread: questions before background work, batches cut by
// tokens, a worker that dies or never starts turned into rejected jobs and a fresh worker, and a
// shutdown that leaves no thread behind. The real model runs in every worker here.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, spyOn, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { UserKeys } from "../../src/crypto/user-keys";
import { cosine, EMBEDDING_DIM, loadEmbedder } from "../../src/embedding/embedder";
import { EmbeddingClosed, type EmbeddingOptions, EmbeddingService } from "../../src/embedding/service";
import { EMBEDDED_TEXT_CHARS, RUN_CHARS } from "../../src/embedding/worker-client";
import { createLogger, memorySink } from "../../src/log";
import { MIGRATIONS } from "../../src/migrations";
import { MMAP_BYTES, openDatabase } from "../../src/store/database";
import { tempDir } from "../helpers";
import { soon } from "../support/wait";

// Servers, builds and the model take longer than 5 s on a busy two-core machine.
setDefaultTimeout(60_000);

const open: EmbeddingService[] = [];
afterAll(async () => {
  await Promise.all(open.map((s) => s.close()));
});

function service(options: EmbeddingOptions = {}, keys?: (k: UserKeys) => void): EmbeddingService {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const userKeys = new UserKeys(db, randomBytes(32));
  keys?.(userKeys);
  const s = new EmbeddingService(db, userKeys, dir, { threads: 1, ...options });
  open.push(s);
  return s;
}

const workers = join(import.meta.dir, "workers");
const EXAMPLE = "This is an example sentence";
/** The shipped model's vector of EXAMPLE, run in this thread (whichever model file is shipped). */
let reference: Float32Array;
/** The shipped model in this thread: a text's vector alone. */
let bare: Awaited<ReturnType<typeof loadEmbedder>>;
beforeAll(async () => {
  bare = await loadEmbedder({ dataDir: tempDir(), threads: 1 });
  [reference] = (await bare.embed([EXAMPLE])) as [Float32Array];
});
/** A text of about `words` word pieces, unlike any other. */
const textOf = (i: number, words: number) =>
  `note ${i}: ${Array.from({ length: words }, (_, k) => ["invoice", "pallet", "harbour", "audit", "gas", "price"][(i + k) % 6]).join(" ")}`;

describe("the embedding worker", () => {
  test("gives the model's vectors, in order, each distinct text computed once", async () => {
    const s = service();
    const texts = [EXAMPLE, "Team offsite agenda for Friday", EXAMPLE];
    const vs = await s.embed("nobody", texts);
    expect(vs.length).toBe(3);
    expect(vs[0]!.length).toBe(EMBEDDING_DIM);
    expect(cosine(vs[0]!, reference)).toBeCloseTo(1, 5);
    expect(vs[2]).toEqual(vs[0]!);
    expect(s.stats.texts).toBe(2);
    expect(cosine(vs[1]!, reference)).toBeLessThan(0.5);
  });

  test("a question jumps the queue: it waits for the one background batch under way, not for the rest", async () => {
    const s = service({ batchTokens: 256 });
    await s.warm();
    const background = Array.from({ length: 40 }, (_, i) => textOf(i, 120));
    let backgroundDone = false;
    const indexing = s.embed("nobody", background, "background").then(() => (backgroundDone = true));
    await soon("three batches run", () => s.stats.batches >= 3);
    const before = s.stats.batches;
    const [answer] = await s.embed("nobody", ["where is the harbour audit?"], "urgent");
    const after = s.stats.batches;
    expect(answer!.length).toBe(EMBEDDING_DIM);
    // The batch under way when it came, then its own: never the 30-odd batches still queued.
    expect(after - before).toBeLessThanOrEqual(2);
    expect(backgroundDone).toBe(false);
    await indexing;
    expect(s.stats.batches).toBeGreaterThan(after + 20);
  });

  test("while background work runs the database is read through calls, not its mapping; mapped again once it has ended, whatever questions come", async () => {
    // A folder embedding beside questions: each question would map the folder's vectors again (issue 14's RSS).
    const dir = tempDir();
    const db = openDatabase(dir, MIGRATIONS);
    const s = new EmbeddingService(db, new UserKeys(db, randomBytes(32)), dir, { threads: 1, batchTokens: 256, mappedAgainMs: 0 });
    open.push(s);
    const mmapSize = () => db.query<{ mmap_size: number }, []>("PRAGMA mmap_size").get()!.mmap_size;
    expect(mmapSize()).toBe(MMAP_BYTES);
    await s.embed("nobody", ["where is the harbour audit?"], "urgent");
    expect(mmapSize()).toBe(MMAP_BYTES);
    const indexing = s.embed(
      "nobody",
      Array.from({ length: 40 }, (_, i) => textOf(i, 120)),
      "background",
    );
    await soon("a background batch run", () => s.stats.batches >= 3);
    expect(mmapSize()).toBe(0);
    // A question meanwhile reads through calls too.
    await s.embed("nobody", ["pallet price"], "urgent");
    expect(mmapSize()).toBe(0);
    await indexing;
    await soon("mapped again once the background work ended", () => mmapSize() === MMAP_BYTES);
    // Questions alone keep it mapped.
    await s.embed("nobody", ["harbour audit dates"], "urgent");
    expect(mmapSize()).toBe(MMAP_BYTES);
  });

  test("questions waiting together run as one model run, each given the vector it has alone", async () => {
    const s = service();
    await s.embed("nobody", ["the worker loaded"]);
    const questions = Array.from({ length: 6 }, (_, i) => textOf(100 + i, 3 + i));
    const before = { ...s.stats };
    const vectors = await Promise.all(questions.map((q) => s.embed("nobody", [q])));
    expect(s.stats.texts - before.texts).toBe(questions.length);
    // Sent at once, they wait together behind the first pick: fewer runs than questions.
    expect(s.stats.batches - before.batches).toBeLessThan(questions.length);
    for (const [i, q] of questions.entries()) expect(cosine(vectors[i]![0]!, (await bare.embed([q]))[0]!)).toBeCloseTo(1, 5);
  });

  test("batches are cut by tokens, similar lengths together: little of the work is padding", async () => {
    const s = service({ batchTokens: 1024 });
    // Lengths from 4 to 200 word pieces, shuffled: in arrival order about half would be padding.
    const texts = Array.from({ length: 48 }, (_, i) => textOf(i, 4 + ((i * 37) % 48) * 4));
    const vs = await s.embed("nobody", texts, "background");
    expect(vs.every((v) => v.length === EMBEDDING_DIM)).toBe(true);
    const { batches, tokens, padded } = s.stats;
    expect(padded / batches).toBeLessThanOrEqual(1024);
    expect(batches).toBeGreaterThanOrEqual(Math.ceil(tokens / 1024));
    expect((padded - tokens) / padded).toBeLessThan(0.15);
    // Still each text's own vector.
    const [alone] = await s.embed("nobody", [texts[17]!]);
    expect(cosine(vs[17]!, alone!)).toBeCloseTo(1, 5);
  });

  test("background jobs that queue the same texts (questions meeting the same records) run the model once per text", async () => {
    const s = service({}, (k) => k.keyFor("alice"));
    const texts = Array.from({ length: 6 }, (_, i) => textOf(i, 30));
    // Queued together, before either is computed: each checks the cache again when its turn comes.
    const runs = await Promise.all([1, 2, 3].map(() => s.embed("alice", texts, "background")));
    expect(s.stats.texts).toBe(6);
    expect(runs[2]).toEqual(runs[0]!);
    // A user without a key has no cache (it never makes one): the second job waits for the first.
    await Promise.all([1, 2].map(() => s.embed("nobody", texts.slice(0, 2), "background")));
    expect(s.stats.texts).toBe(8);
    // Done, nothing is held for them: asked again, computed again.
    await s.embed("nobody", texts.slice(0, 2), "background");
    expect(s.stats.texts).toBe(10);
    // A question is never held back behind background work with the same text: it runs itself.
    const background = s.embed("nobody", [texts[5]!], "background");
    await s.embed("nobody", [texts[5]!], "urgent");
    await background;
    expect(s.stats.texts).toBe(12);
  });
});

describe("the worker's input is bounded (D31)", () => {
  test("attack: a huge text is sent cut to what the model reads (the same vector), a huge job in runs of RUN_CHARS at most", async () => {
    const sizes = join(tempDir(), "runs.txt");
    process.env.CORPUS_TEST_RUN_SIZES = sizes;
    const s = service({ worker: { entry: join(workers, "measured.ts") } });
    // 8 M characters, and 600 texts of 20,000 (12 M, a few word pieces each: cheap to run): each sent whole, in one run, before.
    const huge = "the harbour audit invoice is due on friday ".repeat(200_000);
    const [whole] = await s.embed("nobody", [huge]);
    const [cut] = await s.embed("nobody", [huge.slice(0, EMBEDDED_TEXT_CHARS)]);
    expect(cosine(whole!, cut!)).toBeCloseTo(1, 5);
    const many = Array.from({ length: 600 }, (_, i) => `pallet ${i} ${"x".repeat(20_000)}`);
    expect(await s.embed("nobody", many, "background")).toHaveLength(600);
    const runs = readFileSync(sizes, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ").map(Number) as [number, number]);
    expect(runs.length).toBeGreaterThan(3);
    for (const [longest, all] of runs) {
      expect(longest).toBeLessThanOrEqual(EMBEDDED_TEXT_CHARS);
      expect(all).toBeLessThanOrEqual(RUN_CHARS);
    }
  });
});

describe("a worker that fails", () => {
  test("one that cannot load: the job is rejected with the reason, no hang", async () => {
    const s = service({ worker: { entry: join(workers, "throws-at-start.ts") } });
    await expect(s.embed("nobody", ["a question"])).rejects.toThrow("the embedding worker failed: this worker is broken on purpose");
  });

  test("one that never answers (as new Worker(new URL(…)) did in the executable): rejected after the start timeout", async () => {
    const s = service({ worker: { entry: join(workers, "silent.ts"), startTimeoutMs: 300, stopTimeoutMs: 300 } });
    await expect(s.embed("nobody", ["a question"])).rejects.toThrow("the embedding worker did not start within 0.3 s");
    // Asked to stop, it does not either: its thread is ended by force, and closing returns.
    await s.close();
  });

  for (const [how, text, message] of [
    ["crashes", "CRASH", "the embedding worker failed: crashed on purpose"],
    ["exits", "EXIT", "the embedding worker exited"],
  ] as const) {
    test(`one that ${how} mid-job: what it held is rejected, the jobs behind it run on a new worker`, async () => {
      const logs = memorySink();
      const s = service({ worker: { entry: join(workers, "crashes.ts") }, log: createLogger("INFO", logs.sink) });
      await s.warm();
      const doomed = s.embed("nobody", ["fine", text], "background");
      // Queued here, behind the job in the worker: it goes to the next worker.
      const behind = s.embed("nobody", [EXAMPLE], "background");
      await expect(doomed).rejects.toThrow(message);
      const [b] = await behind;
      expect(cosine(b!, reference)).toBeCloseTo(1, 5);
      const [q] = await s.embed("nobody", [EXAMPLE, "and a second one"]);
      expect(cosine(q!, reference)).toBeCloseTo(1, 5);
      expect(logs.records().filter((r) => r.message === "embedding worker ready").length).toBe(2);
      expect(logs.records().some((r) => r.level === "ERROR" && String(r.message).startsWith("embedding worker stopped"))).toBe(true);
    });
  }
});

describe("shutdown", () => {
  /** Bun names a worker's thread "Worker"; onnxruntime's pool threads, started from it, inherit the name. */
  // Counted by thread id: the whole suite runs in one process, and other files' workers may still be there.
  const workerThreads = () =>
    new Set(
      readdirSync("/proc/self/task").filter((t) => {
        try {
          return readFileSync(`/proc/self/task/${t}/comm`, "utf8").trim() === "Worker";
        } catch {
          return false; // the thread left while being listed
        }
      }),
    );
  const newSince = (before: Set<string>) => [...workerThreads()].filter((t) => !before.has(t));

  test("answers the questions in the worker, refuses background work, and ends the worker's threads", async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
    const before = workerThreads();
    const s = service({ threads: 2 });
    const running = s.embed(
      "nobody",
      Array.from({ length: 30 }, (_, i) => textOf(i, 150)),
      "background",
    );
    running.catch(() => {});
    await soon("a batch run", () => s.stats.batches >= 1);
    // The worker's thread and onnxruntime's second thread (a thread another file's worker started
    // meanwhile may be among the new ones: seen once in CI, three where two were expected).
    const mine = newSince(before);
    expect(mine.length).toBeGreaterThanOrEqual(2);
    const queued = s.embed("nobody", ["never started"], "background");
    queued.catch(() => {});
    const question = s.embed("nobody", ["a question asked as the server stops"]);
    await s.close();
    // The question was answered; the job in the worker and the one behind it were refused.
    expect((await question)[0]!.length).toBe(EMBEDDING_DIM);
    await expect(queued).rejects.toThrow(EmbeddingClosed);
    await expect(running).rejects.toThrow(EmbeddingClosed);
    await expect(s.embed("nobody", ["after close"])).rejects.toThrow(EmbeddingClosed);
    // A terminated worker's OS threads leave shortly after terminate() resolves (seen late under load in CI).
    await soon("the worker's threads gone", () => {
      const now = workerThreads();
      return mine.filter((t) => now.has(t)).length <= mine.length - 2;
    });
  });
});

test("an owner's cache keeps its newest vectors up to its bound; the oldest go, and no other owner's", async () => {
  let at = 1_000;
  const s = service({ cachedPerOwner: 10, now: () => at }, (k) => {
    k.keyFor("alice");
    k.keyFor("bob");
  });
  const batch = (owner: string, n: number) => Array.from({ length: 5 }, (_, i) => `${owner} text ${n}.${i}`);
  await s.embed("bob", batch("bob", 0), "background");
  for (let n = 0; n < 3; n++) {
    at += 1_000;
    await s.embed("alice", batch("alice", n), "background");
  }
  // 15 stored, bound 10: brought down to 9 (the oldest batch and one of the next gone).
  expect(s.rowsOf("alice")).toBe(9);
  expect(s.cached("alice", batch("alice", 0)).filter(Boolean).length).toBe(0);
  expect(s.cached("alice", batch("alice", 2)).filter(Boolean).length).toBe(5);
  expect(s.cached("bob", batch("bob", 0)).filter(Boolean).length).toBe(5);
  // What went is computed again when asked, and kept.
  at += 1_000;
  const again = await s.embed("alice", batch("alice", 0), "background");
  expect(again.length).toBe(5);
  expect(s.cached("alice", batch("alice", 0)).filter(Boolean).length).toBe(5);
  expect(s.rowsOf("alice")).toBeLessThanOrEqual(10);
});

test("new questions' vectors are stored each in its transaction, the transaction made once (bun:sqlite builds one on every call of transaction)", async () => {
  const dir = tempDir();
  const db = openDatabase(dir, MIGRATIONS);
  const keys = new UserKeys(db, randomBytes(32));
  keys.keyFor("alice");
  const s = new EmbeddingService(db, keys, dir, { threads: 1 });
  open.push(s);
  const made = spyOn(db, "transaction");
  try {
    for (let i = 0; i < 6; i++) await s.embed("alice", [`where did the team dine on day ${i}`]);
    expect(s.rowsOf("alice")).toBe(6);
    expect(made).toHaveBeenCalledTimes(1);
  } finally {
    made.mockRestore();
  }
});

describe("a worker that cannot load the model (issue 35 item 8, D29)", () => {
  test("its failure keeps the system's code (ENOSPC); jobs fail at once with it until the retry time, then a start is tried again", async () => {
    const logs = memorySink();
    const s = service({ worker: { entry: join(workers, "no-room.ts") }, startRetryMs: 50, log: createLogger("INFO", logs.sink) });
    const failedStarts = () => logs.records().filter((l) => String(l.message).startsWith("the embedding model could not be loaded")).length;
    const first = await s.embed("nobody", ["a question"]).catch((e) => e);
    expect(first.code).toBe("ENOSPC");
    expect(first.message).toContain("no room in the data folder for the checked copy of libonnxruntime.so.1");
    for (let i = 0; i < 5; i++) expect(await s.embed("nobody", [`question ${i}`]).catch((e) => e)).toBe(first);
    expect(failedStarts()).toBe(1);
    await Bun.sleep(60);
    const again = await s.embed("nobody", ["a question"]).catch((e) => e);
    expect(again).not.toBe(first);
    expect(again.code).toBe("ENOSPC");
    expect(failedStarts()).toBe(2);
  });
});
